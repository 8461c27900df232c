package datadisk

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/store"
)

// Progress is how far a move has gone; its fields are read while it runs.
type Progress struct {
	Files, Bytes        atomic.Int64 // copied and checked
	Skipped             atomic.Int64 // already on the disk, as on the card
	TotalFiles, Total   atomic.Int64 // what the card holds (known after a first count)
	Removed             atomic.Int64 // on the disk but no longer on the card
	Mismatched, Damaged atomic.Int64
}

// Move makes dst (a folder on the data disk) an exact copy of src (the
// store's folder on the card): every folder and file with its mode, times
// and extended attributes (the store's records and tags), and nothing else.
// Each file is written beside its place, fsynced, read back from the disk
// (its cached pages dropped first) and compared by SHA-1 with what was read
// from the card, and only then renamed into place; where the store recorded
// a SHA-1 for the card's file, the card's bytes are checked against it too.
//
// A file already at dst with the same size, time, mode and attributes is
// left: it was checked before it was renamed into place, by this pass or
// one a power cut stopped. Move can be cut at any moment and run again;
// dst is never used until the move says it is done.
//
// A card file whose bytes disagree with the store's record is copied as it
// is and counted (Damaged): the move cannot do better than the card, and
// the copy on the disk is then what the store had.
func Move(ctx context.Context, src, dst string, p *Progress) error {
	if p == nil {
		p = &Progress{}
	}
	var nfiles, nbytes int64
	filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				nfiles++
				nbytes += fi.Size()
			}
		}
		return nil
	})
	p.TotalFiles.Store(nfiles)
	p.Total.Store(nbytes)
	seen := map[string]bool{}
	type dirTimes struct {
		path string
		fi   fs.FileInfo
	}
	var dirs []dirTimes
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by the server while the walk went by
			}
			return fmt.Errorf("read the card: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		seen[rel] = true
		out := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return nil // gone since
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(out, fi.Mode().Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if err := copyXattrs(path, out); err != nil {
				return err
			}
			os.Chmod(out, fi.Mode().Perm())
			dirs = append(dirs, dirTimes{out, fi})
		case d.Type().IsRegular():
			if same(fi, path, out) {
				p.Skipped.Add(1)
				return nil
			}
			n, damaged, err := copyChecked(path, out, fi)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				p.Mismatched.Add(1)
				return err
			}
			if damaged {
				p.Damaged.Add(1)
			}
			p.Files.Add(1)
			p.Bytes.Add(n)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return nil
			}
			os.Remove(out)
			if err := os.Symlink(target, out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", src, dst, err)
	}
	// What the disk holds that the card no longer does (removed or
	// renamed since an earlier pass) goes, deepest first.
	var gone []string
	filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dst, path)
		if !seen[rel] {
			gone = append(gone, path)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for _, g := range gone {
		if err := os.RemoveAll(g); err != nil {
			return fmt.Errorf("move: remove %s: %w", g, err)
		}
		p.Removed.Add(1)
	}
	// Folder times last, deepest first: writing into a folder moves its.
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Chtimes(dirs[i].path, dirs[i].fi.ModTime(), dirs[i].fi.ModTime())
	}
	return syncTree(dst)
}

// same says whether out already is a copy of path: size, time, mode and
// extended attributes.
func same(fi fs.FileInfo, path, out string) bool {
	o, err := os.Lstat(out)
	if err != nil || !o.Mode().IsRegular() || o.Size() != fi.Size() || !o.ModTime().Equal(fi.ModTime()) || o.Mode() != fi.Mode() {
		return false
	}
	a, err1 := xattrs(path)
	b, err2 := xattrs(out)
	if err1 != nil || err2 != nil || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(b[k], v) {
			return false
		}
	}
	return true
}

// copyChecked copies one file to out through a temporary file beside it,
// read back from the disk and compared by digest before the rename.
func copyChecked(path, out string, fi fs.FileInfo) (n int64, damaged bool, err error) {
	in, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer in.Close()
	tmp := filepath.Join(filepath.Dir(out), movingName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	h := sha1.New()
	if n, err = io.Copy(f, io.TeeReader(in, h)); err != nil {
		return n, false, fmt.Errorf("copy %s: %w", path, err)
	}
	var read [sha1.Size]byte
	h.Sum(read[:0])
	if rec, size, ok := store.RecordedSHA1(in); ok && size == n && rec != read {
		damaged = true
	}
	if err := copyXattrs(path, tmp); err != nil {
		return n, damaged, err
	}
	if err := f.Chmod(fi.Mode().Perm()); err != nil {
		return n, damaged, err
	}
	if err := f.Sync(); err != nil {
		return n, damaged, fmt.Errorf("write %s: %w", out, err)
	}
	f.Close()
	f = nil
	got, err := readBack(tmp)
	if err != nil {
		return n, damaged, err
	}
	if got != read {
		return n, damaged, fmt.Errorf("%s: the disk gave back other bytes than were written (SHA-1 %x, not %x): the disk is failing", out, got, read)
	}
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		return n, damaged, err
	}
	return n, damaged, os.Rename(tmp, out)
}

// readBack is the SHA-1 of the file as the disk holds it: its pages, clean
// after the fsync, are dropped from the cache first.
func readBack(path string) ([sha1.Size]byte, error) {
	var sum [sha1.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	h := sha1.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, fmt.Errorf("read back %s: %w", path, err)
	}
	h.Sum(sum[:0])
	return sum, nil
}

// xattrs are a file's user extended attributes.
func xattrs(path string) (map[string][]byte, error) {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil, nil
		}
		return nil, err
	}
	out := map[string][]byte{}
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		v := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(path, name, v)
		if err != nil {
			continue
		}
		out[name] = v[:m]
	}
	return out, nil
}

func copyXattrs(from, to string) error {
	a, err := xattrs(from)
	if err != nil {
		return fmt.Errorf("attributes of %s: %w", from, err)
	}
	have, _ := xattrs(to)
	for k := range have {
		if _, ok := a[k]; !ok {
			unix.Lremovexattr(to, k)
		}
	}
	for k, v := range a {
		if err := unix.Lsetxattr(to, k, v, 0); err != nil {
			return fmt.Errorf("set %s on %s: %w", k, to, err)
		}
	}
	return nil
}

// syncTree fsyncs every folder under root, so the renames are on the disk.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
		return nil
	})
}

// movingName is the file being copied, in its folder on the disk: one at a
// time (a name of its own, so a 255-byte name does not overflow). One left
// by a power cut is removed by the next pass, as the card has no such file.
const movingName = ".bonesync-moving"
