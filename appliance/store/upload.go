package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
)

// ErrNoSpace is returned (wrapped) when the disk is full.
var ErrNoSpace = errors.New("no space left on the box's disk")

const uploadMarker = ".upload-"

// isUploadTemp reports whether name is an Upload's temporary file:
// ".NAME.upload-HEX".
func isUploadTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, uploadMarker)
}

// Upload is a file being written. Its data goes to a temporary file in the
// same directory; Commit makes it durable and puts it in place in one rename,
// so readers see the old file or the complete new one, never a part. Abort, or
// a crash, leaves the old file as it was.
type Upload struct {
	t      *Tree
	name   string // cleaned final path
	tmp    string // cleaned temp path
	f      *os.File
	mu     sync.Mutex
	err    error // first write error, or the transfer error
	closed bool
}

// Create starts an upload to p. If keep is true and p exists, the upload starts
// from its current content (an SFTP client resuming or appending).
func (t *Tree) Create(p string, keep bool) (*Upload, error) {
	c, err := t.clean(p)
	if err != nil {
		return nil, err
	}
	if c == "." {
		return nil, fs.ErrExist
	}
	if fi, err := t.root.Stat(c); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory: %w", p, fs.ErrExist)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(c), "."+path.Base(c)+uploadMarker+hex.EncodeToString(rnd[:]))
	f, err := t.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, noSpace(err)
	}
	u := &Upload{t: t, name: c, tmp: tmp, f: f}
	if keep {
		if old, err := t.root.Open(c); err == nil {
			_, err = io.Copy(f, old)
			old.Close()
			if err != nil {
				u.Abort()
				return nil, noSpace(err)
			}
		}
	}
	return u, nil
}

// Name is the final path, relative to the tree.
func (u *Upload) Name() string { return u.name }

func (u *Upload) record(err error) error {
	if err == nil {
		return nil
	}
	err = noSpace(err)
	u.mu.Lock()
	if u.err == nil {
		u.err = err
	}
	u.mu.Unlock()
	return err
}

// Write appends data.
func (u *Upload) Write(b []byte) (int, error) {
	n, err := u.f.Write(b)
	return n, u.record(err)
}

// WriteAt writes data at an offset (SFTP writes arrive so, maybe out of order).
func (u *Upload) WriteAt(b []byte, off int64) (int, error) {
	n, err := u.f.WriteAt(b, off)
	return n, u.record(err)
}

// ReadAt, Seek, Read and Stat let a client read back what it wrote.
func (u *Upload) ReadAt(b []byte, off int64) (int, error)   { return u.f.ReadAt(b, off) }
func (u *Upload) Read(b []byte) (int, error)                { return u.f.Read(b) }
func (u *Upload) Seek(off int64, whence int) (int64, error) { return u.f.Seek(off, whence) }
func (u *Upload) Stat() (fs.FileInfo, error)                { return u.f.Stat() }

// Fail marks the upload as failed: Close will then abort it. SFTP calls this
// (as TransferError) when the connection drops with the file still open.
func (u *Upload) Fail(err error) {
	if err == nil {
		err = errors.New("transfer failed")
	}
	u.record(err)
}

// TransferError is Fail under the name github.com/pkg/sftp looks for.
func (u *Upload) TransferError(err error) { u.Fail(err) }

// Close commits the upload unless a write failed or Fail was called, in
// which case it aborts and returns the error.
func (u *Upload) Close() error {
	u.mu.Lock()
	err := u.err
	u.mu.Unlock()
	if err != nil {
		u.Abort()
		return err
	}
	return u.Commit()
}

// Commit makes the data durable (fsync), renames it over the final name and
// makes the rename durable (fsync of the directory). Only when it returns nil
// is the upload acknowledged.
func (u *Upload) Commit() error {
	if u.closed {
		return errors.New("upload already closed")
	}
	u.closed = true
	if err := u.f.Sync(); err != nil {
		u.f.Close()
		u.t.root.Remove(u.tmp)
		return noSpace(err)
	}
	if err := u.f.Close(); err != nil {
		u.t.root.Remove(u.tmp)
		return noSpace(err)
	}
	if err := u.t.root.Rename(u.tmp, u.name); err != nil {
		u.t.root.Remove(u.tmp)
		return err
	}
	return u.t.syncDir(path.Dir(u.name))
}

// Abort throws the upload away; the old file, if any, is untouched.
func (u *Upload) Abort() {
	if u.closed {
		return
	}
	u.closed = true
	u.f.Close()
	u.t.root.Remove(u.tmp)
}

func noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %v", ErrNoSpace, err)
	}
	return err
}

// removeStaleUploads deletes the temporary files of uploads that a crash or a
// power cut interrupted, in dir and below. Nothing acknowledged is in them.
func (t *Tree) removeStaleUploads(dir string) {
	fs.WalkDir(t.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isUploadTemp(d.Name()) {
			t.root.Remove(p)
		}
		return nil
	})
}

// Fd is the temporary file's descriptor, for metadata that must move with
// the file when it is put in place (WebDAV's properties, as xattrs).
func (u *Upload) Fd() int { return int(u.f.Fd()) }

// Truncate sets the upload's length, as a client's ftruncate would.
func (u *Upload) Truncate(size int64) error {
	return u.record(u.f.Truncate(size))
}
