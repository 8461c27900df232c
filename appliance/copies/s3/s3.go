// Package s3 lets the copy engine (rclone) write to an S3-compatible
// store through the MinIO client library, as an rclone backend.
//
// rclone's own S3 backend links the AWS SDK and parses 58 provider files
// at start: 16 MB more binary and 9 MB more resident memory in every
// process of the box, copies made or not. The MinIO client costs 0.8 MB
// and 1 MB. What goes on the bucket is what rclone's S3 backend writes and
// reads (a key per file under the bucket's folder, the file's date in the
// "mtime" user metadata as decimal Unix seconds), so rclone on a laptop
// reads the copy with its stock "s3" type; docs/copies.md gives the lines.
package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/rclone/rclone/backend/overview"
	"github.com/rclone/rclone/fs"
	"github.com/rclone/rclone/fs/config/configmap"
	"github.com/rclone/rclone/fs/config/configstruct"
	"github.com/rclone/rclone/fs/fserrors"
	"github.com/rclone/rclone/fs/fshttp"
	"github.com/rclone/rclone/fs/hash"
)

// Type is the backend's name in the engine's config ("type = ...").
const Type = "bonesync-s3"

// Options are the backend's config keys.
type Options struct {
	Endpoint        string `config:"endpoint"` // https://HOST[:PORT] or http://...
	AccessKeyID     string `config:"access_key_id"`
	SecretAccessKey string `config:"secret_access_key"`
	Region          string `config:"region"` // empty: asked of the store
}

func init() {
	fs.Register(&fs.RegInfo{
		Name:        Type,
		Description: "S3-compatible store (MinIO client), in rclone's S3 layout",
		NewFs:       NewFs,
		Overview:    new(overview.BackendConfig),
		Options: []fs.Option{
			{Name: "endpoint", Help: "https://HOST[:PORT] of the store", Required: true},
			{Name: "access_key_id", Help: "Access key ID", Required: true},
			{Name: "secret_access_key", Help: "Secret access key", Required: true, Sensitive: true},
			{Name: "region", Help: "Region; empty asks the store"},
		},
	})
}

// The user metadata rclone's S3 backend keeps a file's date in, the
// largest object one CopyObject may copy, and the parts of an upload.
const (
	metaMtime    = "mtime"
	contentType  = "application/octet-stream"
	maxPart      = 5 << 30 // S3's largest part: files up to 48.8 TiB in 10,000
	maxCopy      = 5 << 30
	partSize     = 5 << 20 // the smallest part S3 allows (parts are streamed: no memory)
	listPageKeys = 1000
)

// Fs is a folder of a bucket.
type Fs struct {
	name, root string // root: "BUCKET/FOLDER" as given
	bucket     string
	region     string
	prefix     string // the folder's keys' start: "" or "FOLDER/"
	client     *minio.Client
	core       *minio.Core
	features   *fs.Features

	mu        sync.Mutex
	hasBucket bool // the bucket is known to be there
}

// NewFs is the engine's constructor for a "bonesync-s3" remote.
func NewFs(ctx context.Context, name, root string, m configmap.Mapper) (fs.Fs, error) {
	var opt Options
	if err := configstruct.Set(m, &opt); err != nil {
		return nil, err
	}
	secure, host, err := endpoint(opt.Endpoint)
	if err != nil {
		return nil, err
	}
	root = strings.Trim(path.Clean("/"+root), "/")
	bucket, folder, _ := strings.Cut(root, "/")
	if bucket == "" {
		return nil, errors.New("s3: the target names no bucket (s3://KEY@HOST/BUCKET/FOLDER)")
	}
	client, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(opt.AccessKeyID, opt.SecretAccessKey, ""),
		Secure: secure,
		Region: opt.Region,
		// The engine's timeouts and pinned CA, as they are now: its shared
		// NewTransport keeps those of the first run in the process.
		Transport: fshttp.NewTransportCustom(ctx, nil),
	})
	if err != nil {
		return nil, fmt.Errorf("s3 %s: %w", host, err)
	}
	f := &Fs{name: name, root: root, bucket: bucket, region: opt.Region, client: client, core: &minio.Core{Client: client}}
	if folder != "" {
		f.prefix = folder + "/"
	}
	f.features = (&fs.Features{BucketBased: true, SlowModTime: true}).Fill(ctx, f)
	// A root that names a file: the engine wants its parent and ErrorIsFile.
	if folder != "" {
		if _, err := client.StatObject(ctx, bucket, folder, minio.StatObjectOptions{}); err == nil {
			parent := path.Dir(root)
			pf, err := NewFs(ctx, name, parent, m)
			if err != nil {
				return nil, err
			}
			return pf, fs.ErrorIsFile
		}
	}
	return f, nil
}

func endpoint(s string) (secure bool, host string, err error) {
	switch {
	case strings.HasPrefix(s, "https://"):
		secure, host = true, strings.TrimPrefix(s, "https://")
	case strings.HasPrefix(s, "http://"):
		host = strings.TrimPrefix(s, "http://")
	default:
		return false, "", fmt.Errorf("s3: endpoint %q is not https://HOST or http://HOST", s)
	}
	host = strings.TrimSuffix(host, "/")
	if host == "" || strings.Contains(host, "/") {
		return false, "", fmt.Errorf("s3: endpoint %q is not https://HOST[:PORT]", s)
	}
	return secure, host, nil
}

func (f *Fs) Name() string             { return f.name }
func (f *Fs) Root() string             { return f.root }
func (f *Fs) String() string           { return "S3 bucket " + f.root }
func (f *Fs) Precision() time.Duration { return time.Nanosecond }
func (f *Fs) Hashes() hash.Set         { return hash.Set(hash.None) }
func (f *Fs) Features() *fs.Features   { return f.features }

func (f *Fs) key(remote string) string { return f.prefix + remote }

// List lists one folder: its files, and its sub-folders (the keys'
// common prefixes). A folder with no keys does not exist.
func (f *Fs) List(ctx context.Context, dir string) (fs.DirEntries, error) {
	prefix := f.prefix
	if dir != "" {
		prefix += dir + "/"
	}
	var entries fs.DirEntries
	for o := range f.client.ListObjectsIter(ctx, f.bucket, minio.ListObjectsOptions{Prefix: prefix, MaxKeys: listPageKeys}) {
		if o.Err != nil {
			if isNotFound(o.Err) { // no bucket yet
				return nil, fs.ErrorDirNotFound
			}
			return nil, fmt.Errorf("s3 list %s/%s: %w", f.bucket, prefix, o.Err)
		}
		remote := strings.TrimPrefix(o.Key, f.prefix)
		if strings.HasSuffix(o.Key, "/") {
			if o.Key != prefix { // not a folder marker of dir itself
				entries = append(entries, fs.NewDir(strings.TrimSuffix(remote, "/"), time.Time{}))
			}
			continue
		}
		entries = append(entries, &Object{fs: f, remote: remote, size: o.Size, lastModified: o.LastModified})
	}
	if err := ctx.Err(); err != nil { // the client ends a cancelled listing quietly
		return nil, err
	}
	if len(entries) == 0 && dir != "" {
		return nil, fs.ErrorDirNotFound
	}
	return entries, nil
}

// NewObject reads the file at remote's size and metadata.
func (f *Fs) NewObject(ctx context.Context, remote string) (fs.Object, error) {
	o := &Object{fs: f, remote: remote}
	if err := o.stat(ctx); err != nil {
		return nil, err
	}
	return o, nil
}

// Put stores a new file.
func (f *Fs) Put(ctx context.Context, in io.Reader, src fs.ObjectInfo, options ...fs.OpenOption) (fs.Object, error) {
	o := &Object{fs: f, remote: src.Remote()}
	return o, o.Update(ctx, in, src, options...)
}

// Mkdir makes the bucket if it is missing; folders need no making.
func (f *Fs) Mkdir(ctx context.Context, dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hasBucket {
		return nil
	}
	ok, err := f.client.BucketExists(ctx, f.bucket)
	if minio.ToErrorResponse(err).StatusCode == http.StatusForbidden {
		// A key limited to its part of the bucket may not ask about the
		// bucket: it is there, or the first upload says so.
		ok, err = true, nil
	}
	if err != nil {
		return fmt.Errorf("s3 bucket %s: %w", f.bucket, err)
	}
	if !ok {
		err = f.client.MakeBucket(ctx, f.bucket, minio.MakeBucketOptions{Region: f.region})
		if err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
			return fmt.Errorf("s3 make bucket %s: %w", f.bucket, err)
		}
	}
	f.hasBucket = true
	return nil
}

// Rmdir does nothing: a folder goes with its last key, and the bucket
// is the owner's to remove.
func (f *Fs) Rmdir(ctx context.Context, dir string) error { return nil }

// Copy copies a file on the store itself, with its metadata (the engine
// keeps replaced files in old/ this way).
func (f *Fs) Copy(ctx context.Context, src fs.Object, remote string) (fs.Object, error) {
	so, ok := src.(*Object)
	if !ok || so.fs.client.EndpointURL().String() != f.client.EndpointURL().String() || so.size > maxCopy {
		return nil, fs.ErrorCantCopy
	}
	_, err := f.client.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: f.bucket, Object: f.key(remote)},
		minio.CopySrcOptions{Bucket: so.fs.bucket, Object: so.fs.key(so.remote)})
	if err != nil {
		return nil, fmt.Errorf("s3 copy %s to %s: %w", so.remote, remote, err)
	}
	return f.NewObject(ctx, remote)
}

// Object is one file (key) in the bucket.
type Object struct {
	fs           *Fs
	remote       string
	size         int64
	lastModified time.Time
	mtime        *time.Time // from the metadata, once read
}

func (o *Object) Fs() fs.Info                                     { return o.fs }
func (o *Object) String() string                                  { return o.remote }
func (o *Object) Remote() string                                  { return o.remote }
func (o *Object) Size() int64                                     { return o.size }
func (o *Object) Storable() bool                                  { return true }
func (o *Object) key() string                                     { return o.fs.key(o.remote) }
func (o *Object) Hash(context.Context, hash.Type) (string, error) { return "", hash.ErrUnsupported }

func (o *Object) stat(ctx context.Context) error {
	info, err := o.fs.client.StatObject(ctx, o.fs.bucket, o.key(), minio.StatObjectOptions{})
	if isNotFound(err) {
		return fs.ErrorObjectNotFound
	}
	if err != nil {
		return fmt.Errorf("s3 stat %s: %w", o.remote, err)
	}
	o.size, o.lastModified = info.Size, info.LastModified
	t := info.LastModified
	if v := info.UserMetadata[http.CanonicalHeaderKey(metaMtime)]; v != "" {
		if m, err := parseMtime(v); err == nil {
			t = m
		}
	}
	o.mtime = &t
	return nil
}

// ModTime is the file's date from its metadata (one request the first
// time, as rclone's S3 backend), else the store's upload time.
func (o *Object) ModTime(ctx context.Context) time.Time {
	if o.mtime == nil {
		if err := o.stat(ctx); err != nil {
			fs.Logf(o, "s3: reading the date: %v", err)
			return o.lastModified
		}
	}
	return *o.mtime
}

// SetModTime rewrites the metadata by copying the object onto itself.
func (o *Object) SetModTime(ctx context.Context, t time.Time) error {
	if o.size > maxCopy {
		return fs.ErrorCantSetModTimeWithoutDelete
	}
	_, err := o.fs.client.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: o.fs.bucket, Object: o.key(), ReplaceMetadata: true,
			UserMetadata: map[string]string{metaMtime: formatMtime(t), "Content-Type": contentType}},
		minio.CopySrcOptions{Bucket: o.fs.bucket, Object: o.key()})
	if err != nil {
		return fmt.Errorf("s3 set date of %s: %w", o.remote, err)
	}
	o.mtime = &t
	return nil
}

// Open reads the file, or the range the options ask for.
func (o *Object) Open(ctx context.Context, options ...fs.OpenOption) (io.ReadCloser, error) {
	var opts minio.GetObjectOptions
	fs.FixRangeOption(options, o.size)
	for _, op := range options {
		if k, v := op.Header(); k != "" {
			opts.Set(k, v)
		} else if op.Mandatory() {
			return nil, fmt.Errorf("s3: unsupported mandatory option %v", op)
		}
	}
	r, _, _, err := o.fs.core.GetObject(ctx, o.fs.bucket, o.key(), opts)
	if isNotFound(err) {
		return nil, fs.ErrorObjectNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("s3 get %s: %w", o.remote, err)
	}
	return r, nil
}

// Update stores the file's bytes and date: in one request up to
// partSize, in parts beyond it (putParts).
func (o *Object) Update(ctx context.Context, in io.Reader, src fs.ObjectInfo, options ...fs.OpenOption) error {
	if err := o.fs.Mkdir(ctx, ""); err != nil { // the engine asks for folders only
		return err
	}
	size, t := src.Size(), src.ModTime(ctx)
	opts := minio.PutObjectOptions{
		UserMetadata: map[string]string{metaMtime: formatMtime(t)},
		ContentType:  contentType,
	}
	var info minio.UploadInfo
	var err error
	if size >= 0 && size <= partSize {
		info, err = o.fs.client.PutObject(ctx, o.fs.bucket, o.key(), in, size, opts)
	} else {
		info, err = o.putParts(ctx, in, size, opts)
	}
	if err != nil {
		return retryable(err, fmt.Errorf("s3 put %s: %w", o.remote, err))
	}
	o.size, o.lastModified, o.mtime = info.Size, info.LastModified, &t
	return nil
}

// putParts stores a file of size bytes in parts (partSizeFor), each
// streamed from in as the engine encrypts it. The MinIO client's
// PutObject would read each part into a buffer of its own first: 5 MiB
// or more per transfer, for nothing, since a part that fails is sent
// again with the whole file (retryable). A run cut short leaves the
// parts sent, which the store keeps until a lifecycle rule aborts the
// upload (docs/copies.md); a failure the run sees aborts it.
func (o *Object) putParts(ctx context.Context, in io.Reader, size int64, opts minio.PutObjectOptions) (minio.UploadInfo, error) {
	part := int64(partSizeFor(size))
	if size < 0 || part > maxPart {
		return minio.UploadInfo{}, fmt.Errorf("%d bytes: over S3's largest object", size)
	}
	id, err := o.fs.core.NewMultipartUpload(ctx, o.fs.bucket, o.key(), opts)
	if err != nil {
		return minio.UploadInfo{}, err
	}
	var parts []minio.CompletePart
	for sent, n := int64(0), 1; sent < size; n++ {
		l := min(part, size-sent)
		p, err := o.fs.core.PutObjectPart(ctx, o.fs.bucket, o.key(), id, n, io.LimitReader(in, l), l, minio.PutObjectPartOptions{})
		if err != nil {
			o.fs.core.AbortMultipartUpload(context.WithoutCancel(ctx), o.fs.bucket, o.key(), id) // dropped: the lifecycle rule removes what is left
			return minio.UploadInfo{}, fmt.Errorf("part %d: %w", n, err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: n, ETag: p.ETag})
		sent += l
	}
	info, err := o.fs.core.CompleteMultipartUpload(ctx, o.fs.bucket, o.key(), id, parts, opts)
	if err != nil {
		o.fs.core.AbortMultipartUpload(context.WithoutCancel(ctx), o.fs.bucket, o.key(), id) // dropped: as above
		return minio.UploadInfo{}, err
	}
	info.Size = size
	return info, nil
}

// Remove deletes the file.
func (o *Object) Remove(ctx context.Context) error {
	if err := o.fs.client.RemoveObject(ctx, o.fs.bucket, o.key(), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("s3 remove %s: %w", o.remote, err)
	}
	return nil
}

// partSizeFor is the part size for an object of size bytes: 5 MiB, the
// least S3 takes, as long as 10,000 parts (its most) hold the object;
// beyond 48.8 GiB, the whole MiBs that fit it in 10,000.
func partSizeFor(size int64) uint64 {
	const maxParts = 10000
	if size <= partSize*maxParts {
		return partSize
	}
	per := (size + maxParts - 1) / maxParts
	return uint64((per + 1<<20 - 1) &^ (1<<20 - 1))
}

// retryable is wrapped, marked for the engine to send the file again
// when the store's answer (err, the MinIO client's own) says it is busy or
// failed inside (429, 5xx): the client cannot resend a body it has read.
func retryable(err, wrapped error) error {
	var resp minio.ErrorResponse // a part's comes wrapped (putParts)
	errors.As(err, &resp)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fserrors.RetryError(wrapped)
	}
	return wrapped
}

func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	r := minio.ToErrorResponse(err)
	return r.StatusCode == http.StatusNotFound || r.Code == "NoSuchKey" || r.Code == "NoSuchBucket"
}

// formatMtime writes t as rclone's S3 backend does: Unix seconds, a
// point and the nanoseconds without trailing zeros ("1557126489.5").
func formatMtime(t time.Time) string {
	ns, sign := t.UnixNano(), ""
	if ns < 0 { // sign and magnitude: -1.5 is 1.5 s before 1970
		ns, sign = -ns, "-"
	}
	sec, frac := ns/1e9, ns%1e9
	s := sign + strconv.FormatInt(sec, 10)
	if frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
	}
	return s
}

// parseMtime reads formatMtime's form (and any decimal seconds) exactly.
func parseMtime(s string) (time.Time, error) {
	whole, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("s3: bad mtime %q", s)
	}
	frac = frac[:min(len(frac), 9)] // beyond nanoseconds, dropped as rclone does
	var ns int64
	if frac != "" {
		if ns, err = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64); err != nil {
			return time.Time{}, fmt.Errorf("s3: bad mtime %q", s)
		}
	}
	if strings.HasPrefix(whole, "-") { // "-0.5" too
		ns = -ns
	}
	return time.Unix(sec, ns), nil
}

var (
	_ fs.Fs     = (*Fs)(nil)
	_ fs.Copier = (*Fs)(nil)
	_ fs.Object = (*Object)(nil)
)
