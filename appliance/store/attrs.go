package store

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"hash"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/rights"
)

// safePerm is the permission bits the store keeps for perm on a file (dir
// false) or a folder: 0777 only (no setuid, setgid or sticky), and the
// owner always reads and writes (and searches a folder), since the server,
// the files' owner, must read and replace them. A read-only file copied
// with its mode (sftp put -p of a 0444 file) is kept 0644.
func safePerm(perm fs.FileMode, dir bool) fs.FileMode {
	owner := fs.FileMode(0o600)
	if dir {
		owner = 0o700
	}
	return perm&0o777 | owner
}

// SetTimes sets a file's or folder's access and modification times (a zero
// atime leaves it), as SFTP's SETSTAT asks.
func (t *Tree) SetTimes(p string, atime, mtime time.Time) error {
	t, c, err := t.at(p, rights.Update)
	if err != nil {
		return err
	}
	if err := t.root.Chtimes(c, atime, mtime); err != nil {
		return err
	}
	t.touchUp(parent(c), 0)
	return t.syncDir(parent(c))
}

// Chmod sets permission bits, as safePerm keeps them.
func (t *Tree) Chmod(p string, perm fs.FileMode) error {
	t, c, err := t.at(p, rights.Update)
	if err != nil {
		return err
	}
	fi, err := t.root.Stat(c)
	if err != nil {
		return err
	}
	return t.root.Chmod(c, safePerm(perm, fi.IsDir()))
}

// Sum is a file's digest by algorithm ("md5", "sha1" or "sha256"): the
// stored one when there is one, else computed by reading the file's data
// (a hole's zeros come from memory), until the tree's context ends; an MD5
// computed so is kept in the file's record for next time (if the file did
// not change meanwhile).
func (t *Tree) Sum(p, algo string) ([]byte, error) {
	f, err := t.open(p)
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
	if err := hashSparse(t.context(), h, f, in.Size()); err != nil {
		return nil, err
	}
	sum := h.Sum(nil)
	if algo == "md5" && in.Sums != nil {
		if now, err := t.s.info(f); err == nil && now.ETag == in.ETag {
			m, ok := readMeta(fdXattrs(f.Fd()))
			if ok {
				copy(m.MD5[:], sum)
				m.HasMD5 = true
				// dropped: a digest kept for next time; not kept, it is made again
				unix.Fsetxattr(int(f.Fd()), metaAttr, m.encode(), 0)
			}
		}
	}
	return sum, nil
}
