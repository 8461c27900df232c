package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// File is a file or folder of a tree opened for reading (Open, OpenDir,
// OpenTrash). What the store keeps about it (Describe, Props) is read
// from it through the store; a caller reads its bytes and lists its
// names, and has no descriptor to change it behind the store's back.
type File interface {
	io.ReadSeekCloser
	io.ReaderAt
	Stat() (fs.FileInfo, error)
	Readdirnames(n int) ([]string, error)
}

// opened is the *os.File behind f, which the store opened.
func opened(f File) (*os.File, error) {
	o, ok := f.(*os.File)
	if !ok || o == nil {
		return nil, fmt.Errorf("store: %T is not a file the store opened", f)
	}
	return o, nil
}

// file is f as a File: nil (not a nil *os.File) when err is set.
func file(f *os.File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// propsAttr is the extended attribute holding a file's properties: a
// protocol's own bytes (WebDAV's dead properties), which the store keeps
// with the file through renames, the trash and its versions.
const propsAttr = "user.bonesync.davprops"

// Props are the properties kept with the open file or folder f: nil if
// it has none, or if its disk keeps no extended attributes.
func Props(f File) ([]byte, error) {
	o, err := opened(f)
	if err != nil {
		return nil, err
	}
	return readAttr(fdXattrs(o.Fd()), propsAttr)
}

// PropsIn are the properties of the entry base of dir (from OpenDir),
// read without opening it; InfoIn said it is not a symlink.
func PropsIn(dir File, base string) ([]byte, error) {
	d, err := opened(dir)
	if err != nil {
		return nil, err
	}
	return readAttr(inDir{d, base}, propsAttr)
}

// SetProps keeps b as the properties of the open file or folder f (empty:
// it has none). A disk without extended attributes refuses with an error
// that is errors.ErrUnsupported; a full one with ErrNoSpace.
func SetProps(f File, b []byte) error {
	o, err := opened(f)
	if err != nil {
		return err
	}
	return setProps(int(o.Fd()), b)
}

func setProps(fd int, b []byte) error {
	if len(b) == 0 {
		// A disk without extended attributes keeps none either.
		if err := unix.Fremovexattr(fd, propsAttr); err != nil && !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
			return err
		}
		return nil
	}
	return noSpace(unix.Fsetxattr(fd, propsAttr, b, 0))
}

// SetProps gives the upload the properties b, which move with it when it
// is put in place (a copy keeps the source's).
func (u *Upload) SetProps(b []byte) error { return setProps(int(u.f.Fd()), b) }

// readAttr reads attr through x, with a buffer as large as it needs; a
// missing attribute, or a disk without them, is nil.
func readAttr(x xattrs, attr string) ([]byte, error) {
	var small [512]byte
	buf := small[:]
	n, err := x.get(attr, buf)
	if errors.Is(err, unix.ERANGE) {
		if n, err = x.get(attr, nil); err == nil {
			buf = make([]byte, n)
			n, err = x.get(attr, buf)
		}
	}
	if errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOTSUP) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), buf[:n]...), nil
}
