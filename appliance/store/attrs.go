package store

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// ErrPerm is returned (wrapped) for permission bits the store does not
// keep: setuid, setgid and sticky, or a mode that takes the owner's read
// or write away (the server, the files' owner, must read and replace them).
var ErrPerm = errors.New("permission bits not kept on this box")

// CheckPerm reports whether perm can be kept on a file (dir false) or a
// folder: bits 0777 only, with the owner's read and write (and, on a folder,
// search).
func CheckPerm(perm fs.FileMode, dir bool) error {
	need := fs.FileMode(0o600)
	if dir {
		need = 0o700
	}
	if perm&^0o777 != 0 || perm&need != need {
		return fmt.Errorf("%w: %04o (0777 only, the owner keeping read and write)", ErrPerm, perm)
	}
	return nil
}

// SetTimes sets a file's or folder's access and modification times (a zero
// atime leaves it), as SFTP's SETSTAT asks.
func (t *Tree) SetTimes(p string, atime, mtime time.Time) error {
	c, err := t.clean(p)
	if err != nil {
		return err
	}
	if err := t.root.Chtimes(c, atime, mtime); err != nil {
		return err
	}
	t.touchUp(parent(c))
	return t.syncDir(parent(c))
}

// Chmod sets permission bits that CheckPerm allows.
func (t *Tree) Chmod(p string, perm fs.FileMode) error {
	c, err := t.clean(p)
	if err != nil {
		return err
	}
	fi, err := t.root.Stat(c)
	if err != nil {
		return err
	}
	if err := CheckPerm(perm, fi.IsDir()); err != nil {
		return err
	}
	return t.root.Chmod(c, perm)
}

// Sum is a file's digest by algorithm ("md5", "sha1" or "sha256"): the
// stored one when there is one, else computed by reading the file; an MD5
// computed so is kept in the file's record for next time (if the file did
// not change meanwhile).
func (t *Tree) Sum(p, algo string) ([]byte, error) {
	f, err := t.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in, err := t.s.info(f)
	if err != nil {
		return nil, err
	}
	if in.IsDir() {
		return nil, fmt.Errorf("%s: is a folder", p)
	}
	if in.Sums != nil {
		switch {
		case algo == "sha1":
			return in.Sums.SHA1[:], nil
		case algo == "md5" && in.Sums.HasMD5:
			return in.Sums.MD5[:], nil
		}
	}
	var h hash.Hash
	switch algo {
	case "md5":
		h = md5.New()
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	default:
		return nil, fmt.Errorf("digest %q not supported", algo)
	}
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	sum := h.Sum(nil)
	if algo == "md5" && in.Sums != nil {
		if now, err := t.s.info(f); err == nil && now.ETag == in.ETag {
			m, ok := readMeta(fdXattrs(f.Fd()))
			if ok {
				copy(m.MD5[:], sum)
				m.HasMD5 = true
				unix.Fsetxattr(int(f.Fd()), metaAttr, m.encode(), 0)
			}
		}
	}
	return sum, nil
}
