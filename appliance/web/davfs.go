package web

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/net/webdav"
	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
)

// davFS is a user's store.Tree as a webdav.FileSystem. Writes go through
// store Uploads; dead properties (PROPPATCH) live in an extended attribute
// of the file, so they move with it and vanish with it.
type davFS struct {
	t      *store.Tree
	locks  *locks.Table // for lockdiscovery
	user   string
	prefix string
}

func (d davFS) Mkdir(_ context.Context, name string, _ os.FileMode) error {
	// WebDAV's MKCOL needs the parent to exist (409 otherwise).
	if _, err := d.t.Stat(path.Dir(path.Clean("/" + name))); err != nil {
		return err
	}
	return d.t.Mkdir(name)
}

func (d davFS) OpenFile(ctx context.Context, name string, flag int, _ os.FileMode) (webdav.File, error) {
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		if _, err := d.t.Stat(path.Dir(path.Clean("/" + name))); err != nil {
			return nil, err
		}
		u, err := d.t.Create(name, flag&os.O_TRUNC == 0)
		if err != nil {
			return nil, err
		}
		put, _ := ctx.Value(putKey{}).(*putInfo)
		if put != nil {
			u.SetModTime(put.mtime)
			for _, c := range put.sums {
				u.Expect(c)
			}
		}
		var cp *copyPaths
		copySize := int64(-1)
		if cp, _ = ctx.Value(copyKey{}).(*copyPaths); cp != nil {
			// A copy keeps its source's date, as cp -p and every sync client expect.
			dst := path.Clean("/" + name)
			if rel, ok := strings.CutPrefix(dst, cp.dst); ok {
				if fi, err := d.t.Stat(cp.src + rel); err == nil {
					u.SetModTime(fi.ModTime())
					copySize = fi.Size()
				}
			}
		}
		return &davUpload{Upload: u, put: put, copy: cp, copySize: copySize}, nil
	}
	// Read, or O_RDWR for PROPPATCH: the data is never written in place.
	if h, ok := ctx.Value(getKey{}).(http.Header); ok {
		// A GET: its headers describe the very file whose bytes it sends.
		f, err := d.t.Open(name)
		if err != nil {
			return nil, err
		}
		df := &davFile{File: f, fs: d, name: name}
		if in, err := df.describe(); err == nil && !in.IsDir() {
			fileHeaders(h, in)
		}
		return df, nil
	}
	f, err := d.t.Open(name)
	if err != nil {
		return nil, err
	}
	return &davFile{File: f, fs: d, name: name}, nil
}

func (d davFS) RemoveAll(ctx context.Context, name string) error {
	if dst, ok := ctx.Value(replaceKey{}).(string); ok && path.Clean("/"+name) == dst {
		return nil // replaced by the copy's or the move's rename
	}
	return d.t.RemoveAll(name)
}

func (d davFS) Rename(_ context.Context, o, n string) error { return d.t.Rename(o, n) }

func (d davFS) Stat(_ context.Context, name string) (os.FileInfo, error) {
	in, err := d.t.Info(name)
	if err != nil {
		return nil, err
	}
	return davInfo{in}, nil
}

// davInfo is a file's description with its strong ETag and a content type
// from its name (x/net/webdav would otherwise open and sniff every file a
// PROPFIND lists).
type davInfo struct{ store.Info }

func (i davInfo) ETag(context.Context) (string, error) { return quote(i.Info.ETag), nil }
func (i davInfo) ContentType(context.Context) (string, error) {
	if t := mime.TypeByExtension(path.Ext(i.Name())); t != "" {
		return t, nil
	}
	return "application/octet-stream", nil
}

// davFile is a file or directory opened for reading.
type davFile struct {
	*os.File
	fs        davFS
	name      string
	in        store.Info
	described bool
}

func (f *davFile) describe() (store.Info, error) {
	if f.described {
		return f.in, nil
	}
	in, err := f.fs.t.Describe(f.File)
	if err == nil {
		f.in, f.described = in, true
	}
	return in, err
}

func (f *davFile) Write([]byte) (int, error) { return 0, fs.ErrPermission }

// Readdir lists names only (x/net/webdav asks each entry's Stat next),
// leaving out uploads in progress.
func (f *davFile) Readdir(n int) ([]fs.FileInfo, error) {
	names, err := f.File.Readdirnames(n)
	out := make([]fs.FileInfo, 0, len(names))
	for _, name := range names {
		out = append(out, nameInfo(name))
	}
	return store.Visible(out), err
}

// nameInfo is a directory entry's name, all a listing needs of it.
type nameInfo string

func (n nameInfo) Name() string       { return string(n) }
func (n nameInfo) Size() int64        { return 0 }
func (n nameInfo) Mode() fs.FileMode  { return 0 }
func (n nameInfo) ModTime() time.Time { return time.Time{} }
func (n nameInfo) IsDir() bool        { return false }
func (n nameInfo) Sys() any           { return nil }

// Stat describes the file with its ETag.
func (f *davFile) Stat() (fs.FileInfo, error) {
	in, err := f.describe()
	if err != nil {
		return nil, err
	}
	return davInfo{in}, nil
}

// DeadProps are the properties clients stored (PROPPATCH); x/net/webdav
// copies them with a COPY. (PROPFIND is propfind.go's.)
func (f *davFile) DeadProps() (map[xml.Name]webdav.Property, error) {
	return deadProps(fdXattr(f.File))
}

func (f *davFile) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(fdOf(f.File), p, func(mtime time.Time) error { return f.fs.t.SetModTime(f.name, mtime) })
}

// fdXattr reads a file's extended attributes through its descriptor.
func fdXattr(f *os.File) func(string, []byte) (int, error) {
	fd := int(f.Fd())
	return func(attr string, buf []byte) (int, error) { return unix.Fgetxattr(fd, attr, buf) }
}

// davUpload is a file being written: by PUT, COPY, or LOCK of a new name.
type davUpload struct {
	*store.Upload
	put      *putInfo   // the PUT's headers and body, if a PUT
	copy     *copyPaths // the COPY's, if a COPY
	copySize int64      // the size of the file a COPY copies
}

// Close commits the upload, unless the PUT's body did not arrive whole: then
// the previous version stays as it was.
func (u *davUpload) Close() error {
	if u.put != nil {
		if err := u.put.body.complete(); err != nil {
			u.Upload.Fail(err)
		}
	}
	if u.copy != nil && u.copySize >= 0 && u.Upload.Size() != u.copySize {
		u.Upload.Fail(fmt.Errorf("copy incomplete: %d of %d bytes", u.Upload.Size(), u.copySize))
	}
	err := u.Upload.Close()
	if u.put != nil {
		u.put.err, u.put.result = err, u.Upload.Result()
	}
	if u.copy != nil && err != nil {
		u.copy.err = err
	}
	return err
}

func (u *davUpload) Readdir(int) ([]fs.FileInfo, error) { return nil, fs.ErrInvalid }

// Stat describes the upload under its final name; its ETag is known once it
// is committed (x/net/webdav asks for it after Close).
func (u *davUpload) Stat() (fs.FileInfo, error) {
	fi, err := u.Upload.Stat()
	if err != nil {
		return nil, err
	}
	return uploadInfo{store.Named(fi, path.Base(u.Name())), u.Upload}, nil
}

type uploadInfo struct {
	fs.FileInfo
	u *store.Upload
}

func (i uploadInfo) ETag(context.Context) (string, error) {
	if e := i.u.Result().ETag; e != "" {
		return quote(e), nil
	}
	return "", webdav.ErrNotImplemented
}

func (u *davUpload) DeadProps() (map[xml.Name]webdav.Property, error) {
	fd := u.Fd()
	return deadProps(func(attr string, buf []byte) (int, error) { return unix.Fgetxattr(fd, attr, buf) })
}
func (u *davUpload) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(u.Fd(), p, func(mtime time.Time) error { u.SetModTime(mtime); return nil })
}

func fdOf(f *os.File) int { return int(f.Fd()) }

// propsAttr is the extended attribute holding a file's dead properties.
const propsAttr = "user.bonesync.davprops"

type storedProp struct {
	Space, Local string
	Lang         string `json:",omitempty"`
	XML          []byte
}

// deadProps reads the dead properties through get (an xattr reader).
func deadProps(get func(attr string, buf []byte) (int, error)) (map[xml.Name]webdav.Property, error) {
	// Most files have no dead properties: ask with a small buffer, and for
	// the size only when it is too small (a PROPFIND does this per file).
	var small [512]byte
	buf := small[:]
	n, err := get(propsAttr, buf)
	if errors.Is(err, unix.ERANGE) {
		if n, err = get(propsAttr, nil); err == nil {
			buf = make([]byte, n)
			n, err = get(propsAttr, buf)
		}
	}
	if errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOTSUP) {
		return map[xml.Name]webdav.Property{}, nil
	}
	if err != nil {
		return nil, err
	}
	var stored []storedProp
	if err := json.Unmarshal(buf[:n], &stored); err != nil {
		return map[xml.Name]webdav.Property{}, nil
	}
	m := map[xml.Name]webdav.Property{}
	for _, s := range stored {
		name := xml.Name{Space: s.Space, Local: s.Local}
		m[name] = webdav.Property{XMLName: name, Lang: s.Lang, InnerXML: s.XML}
	}
	return m, nil
}

// patchProps stores a PROPPATCH's properties, but for {DAV:}lastmodified,
// which sets the file's date (as ownCloud, Nextcloud and rclone use it).
func patchProps(fd int, patches []webdav.Proppatch, setModTime func(time.Time) error) ([]webdav.Propstat, error) {
	m, err := deadProps(func(attr string, buf []byte) (int, error) { return unix.Fgetxattr(fd, attr, buf) })
	if err != nil {
		return nil, err
	}
	for name := range m {
		if liveProps[name] {
			delete(m, name)
		}
	}
	st := webdav.Propstat{Status: 200}
	for _, p := range patches {
		for _, prop := range p.Props {
			if prop.XMLName == lastModifiedProp && !p.Remove {
				t, err := parseModTime(string(prop.InnerXML))
				if err != nil {
					return []webdav.Propstat{{Status: http.StatusConflict, Props: []webdav.Property{{XMLName: prop.XMLName}}}}, nil
				}
				if err := setModTime(t); err != nil {
					return nil, err
				}
				st.Props = append(st.Props, webdav.Property{XMLName: prop.XMLName})
				continue
			}
			if liveProps[prop.XMLName] || prop.XMLName.Space == ocNS || prop.XMLName.Space == ncNS {
				return []webdav.Propstat{{Status: http.StatusForbidden, XMLError: `<D:cannot-modify-protected-property xmlns:D="DAV:"/>`,
					Props: []webdav.Property{{XMLName: prop.XMLName}}}}, nil
			}
			if p.Remove {
				delete(m, prop.XMLName)
			} else {
				m[prop.XMLName] = prop
			}
			st.Props = append(st.Props, webdav.Property{XMLName: prop.XMLName})
		}
	}
	var stored []storedProp
	for name, p := range m {
		stored = append(stored, storedProp{Space: name.Space, Local: name.Local, Lang: p.Lang, XML: p.InnerXML})
	}
	b, _ := json.Marshal(stored)
	if len(stored) == 0 {
		err = unix.Fremovexattr(fd, propsAttr)
		if errors.Is(err, unix.ENODATA) {
			err = nil
		}
	} else {
		err = unix.Fsetxattr(fd, propsAttr, b, 0)
	}
	if err != nil {
		st.Status = 507 // the file system cannot hold them (no xattrs, or full)
	}
	return []webdav.Propstat{st}, nil
}
