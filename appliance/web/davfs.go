package web

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io/fs"
	"os"
	"path"

	"golang.org/x/net/webdav"
	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/store"
)

// davFS is a user's store.Tree as a webdav.FileSystem. Writes go through
// store Uploads; dead properties (PROPPATCH) live in an extended attribute
// of the file, so they move with it and vanish with it.
type davFS struct{ t *store.Tree }

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
		body, _ := ctx.Value(putBodyKey{}).(*putBody)
		return &davUpload{Upload: u, body: body}, nil
	}
	// Read, or O_RDWR for PROPPATCH: the data is never written in place.
	f, err := d.t.Open(name)
	if err != nil {
		return nil, err
	}
	return &davFile{File: f}, nil
}

func (d davFS) RemoveAll(_ context.Context, name string) error { return d.t.RemoveAll(name) }
func (d davFS) Rename(_ context.Context, o, n string) error    { return d.t.Rename(o, n) }
func (d davFS) Stat(_ context.Context, name string) (os.FileInfo, error) {
	return d.t.Stat(name)
}

// davFile is a file or directory opened for reading.
type davFile struct{ *os.File }

func (f *davFile) Write([]byte) (int, error) { return 0, fs.ErrPermission }

// Readdir leaves out uploads in progress.
func (f *davFile) Readdir(n int) ([]fs.FileInfo, error) {
	entries, err := f.File.Readdir(n)
	return store.Visible(entries), err
}

func (f *davFile) DeadProps() (map[xml.Name]webdav.Property, error) { return deadProps(fdOf(f.File)) }
func (f *davFile) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(fdOf(f.File), p)
}

// davUpload is a file being written: by PUT, COPY, or LOCK of a new name.
type davUpload struct {
	*store.Upload
	body *putBody // the PUT's body, if a PUT
}

// Close commits the upload, unless the PUT's body did not arrive whole: then
// the previous version stays as it was.
func (u *davUpload) Close() error {
	if u.body != nil {
		if err := u.body.complete(); err != nil {
			u.Upload.Fail(err)
		}
	}
	err := u.Upload.Close()
	if errors.Is(err, store.ErrNoSpace) && u.body != nil {
		u.body.noSpace = true
	}
	return err
}

func (u *davUpload) Readdir(int) ([]fs.FileInfo, error) { return nil, fs.ErrInvalid }
func (u *davUpload) Stat() (fs.FileInfo, error) {
	fi, err := u.Upload.Stat()
	if err != nil {
		return nil, err
	}
	return renamed{fi, path.Base(u.Name())}, nil
}
func (u *davUpload) DeadProps() (map[xml.Name]webdav.Property, error) { return deadProps(u.Fd()) }
func (u *davUpload) Patch(p []webdav.Proppatch) ([]webdav.Propstat, error) {
	return patchProps(u.Fd(), p)
}

type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }

func fdOf(f *os.File) int { return int(f.Fd()) }

// propsAttr is the extended attribute holding a file's dead properties.
const propsAttr = "user.bonesync.davprops"

type storedProp struct {
	Space, Local string
	Lang         string `json:",omitempty"`
	XML          []byte
}

func deadProps(fd int) (map[xml.Name]webdav.Property, error) {
	buf := make([]byte, 64<<10)
	n, err := unix.Fgetxattr(fd, propsAttr, buf)
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

func patchProps(fd int, patches []webdav.Proppatch) ([]webdav.Propstat, error) {
	m, err := deadProps(fd)
	if err != nil {
		return nil, err
	}
	st := webdav.Propstat{Status: 200}
	for _, p := range patches {
		for _, prop := range p.Props {
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
