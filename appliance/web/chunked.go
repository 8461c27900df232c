package web

// Nextcloud's chunked uploads ("chunking 1.0", the desktop client's for
// files over 10 MB): MKCOL uploads/USER/ID, PUT uploads/USER/ID/00001...,
// then MOVE uploads/USER/ID/.file to the destination, which assembles the
// parts in name order into one store Upload: hashed, checked against
// OC-Checksum and OC-Total-Length, dated with X-OC-Mtime and committed
// atomically like any other upload. A dropped connection loses at most the
// part in flight: parts are written under a temporary name and renamed when
// whole, and a client that comes back lists the folder (PROPFIND) and sends
// what is missing. Parts not assembled within a day are removed.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/webdav"
	"golang.org/x/text/unicode/norm"

	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
)

const partSuffix = ".part"

func (d *DAV) serveUploads(w http.ResponseWriter, r *http.Request) {
	user, ok := d.login(w, r)
	if !ok {
		return
	}
	prefix := ncUploads + user
	if r.URL.Path != prefix && !strings.HasPrefix(r.URL.Path, prefix+"/") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	root, err := d.Store.Chunks(user)
	if err != nil {
		http.Error(w, "cannot open your uploads", http.StatusInternalServerError)
		d.Log.Error(fmt.Sprintf("webdav: %v", err))
		return
	}
	defer root.Close()
	name := path.Clean("/" + strings.TrimPrefix(r.URL.Path, prefix))
	if r.Method == "MOVE" && path.Base(name) == ".file" {
		d.assemble(w, r, user, root, strings.TrimPrefix(path.Dir(name), "/"))
		return
	}
	ctx := r.Context()
	if r.Method == "MKCOL" {
		d.Store.ExpireChunks() // a new transfer: forget the abandoned ones
	}
	if r.Method == http.MethodPut {
		if strings.HasSuffix(name, partSuffix) {
			http.Error(w, "bad part name", http.StatusBadRequest)
			return
		}
		if q := d.Users.Quota(user); q > 0 {
			// Parts count against the quota with the user's files: a part
			// that would take the two past it is refused.
			if r.ContentLength < 0 {
				http.Error(w, "a part needs a Content-Length", http.StatusLengthRequired)
				return
			}
			tree, err := d.Store.Tree(user)
			if err == nil {
				tree.SetQuota(q)
				err = tree.Fits(chunkBytes(root) + r.ContentLength)
				tree.Close()
			}
			if err != nil {
				WriteStoreError(w, err)
				return
			}
		}
		up := &putInfo{body: &putBody{ReadCloser: r.Body, want: r.ContentLength}}
		r.Body = up.body
		ctx = context.WithValue(ctx, putKey{}, up)
		w = &chunkStatus{ResponseWriter: w, put: up}
	}
	h := &webdav.Handler{
		Prefix:     prefix,
		FileSystem: chunkFS{root},
		LockSystem: noLocks{},
		Logger: func(r *http.Request, err error) {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				d.Log.Error(fmt.Sprintf("webdav: %s %s %s: %v", user, r.Method, r.URL.Path, err))
			}
		},
	}
	h.ServeHTTP(w, r.WithContext(ctx))
}

// assemble answers the MOVE of uploads/USER/ID/.file: the parts of ID
// (transfer, relative to root), in name order, become the file at the
// Destination.
func (d *DAV) assemble(w http.ResponseWriter, r *http.Request, user string, root *os.Root, transfer string) {
	dstPrefix, dst, ok := davDestination(r, user)
	if !ok {
		http.Error(w, "the Destination is not in your files", http.StatusBadRequest)
		return
	}
	tree, err := d.Store.Tree(user)
	if err != nil {
		http.Error(w, "cannot open your files", http.StatusInternalServerError)
		return
	}
	defer tree.Close()
	tree.SetQuota(d.Users.Quota(user))
	defer d.paths.lock(user, dst)()
	if !d.conditions(w, r, tree, user, dstPrefix, dst, locks.Change{Path: dst, Tree: true, Member: true}) {
		return
	}
	up, err := newPutInfo(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	parts, total, err := chunkParts(root, transfer)
	if err != nil {
		d.Log.Error(fmt.Sprintf("webdav: %s: assemble %s: %v", user, transfer, err))
		WriteStoreError(w, err)
		return
	}
	if len(parts) == 0 {
		http.Error(w, "no parts were uploaded", http.StatusBadRequest)
		return
	}
	if v := r.Header.Get("OC-Total-Length"); v != "" {
		if want, err := strconv.ParseInt(v, 10, 64); err != nil || want != total {
			http.Error(w, fmt.Sprintf("the parts hold %d bytes, OC-Total-Length says %s", total, v), http.StatusBadRequest)
			return
		}
	}
	_, statErr := tree.Stat(dst)
	u, err := tree.Create(dst, false)
	if err != nil {
		d.Log.Error(fmt.Sprintf("webdav: %s: assemble %s: %v", user, dst, err))
		WriteStoreError(w, err)
		return
	}
	u.SetModTime(up.mtime)
	for _, c := range up.sums {
		u.Expect(c)
	}
	for _, p := range parts {
		f, err := root.Open(path.Join(transfer, p))
		if err == nil {
			_, err = io.Copy(u, f)
			f.Close()
		}
		if err != nil {
			u.Abort()
			d.Log.Error(fmt.Sprintf("webdav: %s: assemble %s: %v", user, dst, err))
			WriteStoreError(w, err)
			return
		}
	}
	if err := u.Close(); err != nil {
		d.Log.Error(fmt.Sprintf("webdav: %s: assemble %s: %v", user, dst, err))
		WriteStoreError(w, err)
		return
	}
	root.RemoveAll(transfer)
	in := u.Result()
	fileHeaders(w.Header(), in)
	w.Header().Set("ETag", quote(in.ETag))
	if !up.mtime.IsZero() {
		w.Header().Set("X-OC-MTime", "accepted")
	}
	if statErr == nil {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
}

// chunkParts lists a transfer's whole parts in name order and their size.
func chunkParts(root *os.Root, transfer string) ([]string, int64, error) {
	dir, err := root.Open(transfer)
	if err != nil {
		return nil, 0, err
	}
	defer dir.Close()
	entries, err := dir.Readdir(-1)
	if err != nil {
		return nil, 0, err
	}
	var names []string
	var total int64
	for _, e := range entries {
		if e.Mode().IsRegular() && !strings.HasSuffix(e.Name(), partSuffix) {
			names = append(names, e.Name())
			total += e.Size()
		}
	}
	sort.Strings(names)
	return names, total, nil
}

// chunkBytes is what a user's chunk folder holds.
func chunkBytes(root *os.Root) int64 {
	n, _ := store.FilesSize(root.FS(), ".")
	return n
}

// davDestination is the Destination of a request (a path or a URL) as a
// path in user's tree, with the root it was given under.
func davDestination(r *http.Request, user string) (prefix, name string, ok bool) {
	dst := r.Header.Get("Destination")
	u, err := url.Parse(dst)
	if err != nil {
		return "", "", false
	}
	if prefix, ok = davRoot(u.Path, user); !ok {
		return "", "", false
	}
	return prefix, path.Clean("/" + norm.NFC.String(strings.TrimPrefix(u.Path, prefix))), true
}

// chunkStatus gives a failed part's PUT its real status, as putStatus does.
type chunkStatus struct {
	http.ResponseWriter
	put *putInfo
}

func (w *chunkStatus) WriteHeader(code int) {
	if code == http.StatusMethodNotAllowed {
		switch {
		case errors.Is(w.put.err, store.ErrNoSpace) || errors.Is(w.put.err, store.ErrQuota):
			code = http.StatusInsufficientStorage
		case w.put.body.complete() != nil:
			code = http.StatusBadRequest
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// chunkFS is a user's chunk folder as a webdav.FileSystem. A part is written
// under a temporary name and renamed when its body arrived whole.
type chunkFS struct{ r *os.Root }

func chunkName(name string) string {
	c := path.Clean("/" + name)[1:]
	if c == "" {
		return "."
	}
	return c
}

func (c chunkFS) Mkdir(_ context.Context, name string, _ os.FileMode) error {
	return c.r.Mkdir(chunkName(name), 0o700)
}

func (c chunkFS) OpenFile(ctx context.Context, name string, flag int, _ os.FileMode) (webdav.File, error) {
	n := chunkName(name)
	if flag&os.O_CREATE == 0 {
		f, err := c.r.Open(n)
		if err != nil {
			return nil, err
		}
		return chunkListing{f}, nil
	}
	// Each request its own temporary name: a client that gives up on a
	// part and sends it again must not have its new copy truncated or
	// removed by the old request, still finishing.
	tmp := fmt.Sprintf("%s.%016x%s", n, rand.Uint64(), partSuffix)
	f, err := c.r.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	put, _ := ctx.Value(putKey{}).(*putInfo)
	return &chunkPart{File: f, r: c.r, name: n, tmp: tmp, put: put}, nil
}

func (c chunkFS) RemoveAll(_ context.Context, name string) error {
	n := chunkName(name)
	if n == "." {
		return fs.ErrPermission
	}
	return c.r.RemoveAll(n)
}

func (c chunkFS) Rename(_ context.Context, o, n string) error {
	return c.r.Rename(chunkName(o), chunkName(n))
}

func (c chunkFS) Stat(_ context.Context, name string) (os.FileInfo, error) {
	return c.r.Stat(chunkName(name))
}

// chunkListing hides parts still being written: a client that resumes
// lists the transfer and sends again what is not there whole.
type chunkListing struct{ *os.File }

func (l chunkListing) Readdir(n int) ([]fs.FileInfo, error) {
	entries, err := l.File.Readdir(n)
	out := entries[:0]
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), partSuffix) {
			out = append(out, e)
		}
	}
	return out, err
}

// chunkPart is a part being written.
type chunkPart struct {
	*os.File
	r    *os.Root
	name string
	tmp  string // the name it is written under
	put  *putInfo
}

func (p *chunkPart) Close() error {
	err := p.File.Sync()
	if cerr := p.File.Close(); err == nil {
		err = cerr
	}
	if err == nil && p.put != nil {
		err = p.put.body.complete()
	}
	if err == nil {
		err = p.r.Rename(p.tmp, p.name)
	}
	if err != nil {
		p.r.Remove(p.tmp)
		if p.put != nil {
			p.put.err = store.NoSpace(err)
		}
	}
	return err
}
