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
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
)

// Progress is how far a move has gone; its fields are read while it runs.
type Progress struct {
	Files, Bytes      atomic.Int64 // copied and checked
	Skipped           atomic.Int64 // already on the disk, as on the card
	TotalFiles, Total atomic.Int64 // what the card holds (known after a first count)
	Removed           atomic.Int64 // on the disk but no longer on the card
	// Damaged are the card's files whose bytes differ from what the store
	// recorded when they were written: copied as they are, and told.
	Damaged atomic.Int64
}

// Move makes dst (a folder on the data disk) an exact copy of src (the
// store's folder on the card): every folder and file with its mode, times
// and extended attributes (the store's records and tags), and nothing else.
// Each file is written to a staging file beside dst (outside the tree, so
// no user's file can share its name), fsynced, read back from the disk (its
// cached pages dropped first) and compared by SHA-1 with what was read from
// the card, and only then renamed into place; where the store recorded a
// SHA-1 for the card's file, the card's bytes are checked against it too.
// The bytes, the date, the mode and the attributes all come from the one
// open file, so a file replaced on the card while it is copied is copied
// whole, as one version.
//
// A file already at dst with the same size, time, mode and attributes is
// left: it was checked before it was renamed into place, by this pass or
// one a power cut stopped; unless its inode changed after since (the last
// pass, with the server stopped, gives the move's start: a file written in
// place since is copied again even if it kept its size and date). Move can
// be cut at any moment and run again; dst is never used until the move
// says it is done.
//
// A card file whose bytes disagree with the store's record is copied as it
// is and counted (Damaged): the move cannot do better than the card, and
// the copy on the disk is then what the store had.
func Move(ctx context.Context, src, dst string, p *Progress, since time.Time) error {
	if p == nil {
		p = &Progress{}
	}
	staging := filepath.Join(filepath.Dir(dst), movingName)
	os.Remove(staging) // a power cut's
	nfiles, nbytes := countTree(src)
	p.TotalFiles.Store(nfiles)
	p.Total.Store(nbytes)
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
		out := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return nil // gone since
		}
		if have, err := os.Lstat(out); err == nil && have.Mode().Type() != fi.Mode().Type() {
			// A file where the card now has a folder, or the reverse.
			if err := os.RemoveAll(out); err != nil {
				return err
			}
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
			if same(fi, path, out) && !changedAfter(fi, since) {
				p.Skipped.Add(1)
				return nil
			}
			n, damaged, err := copyChecked(path, out, staging)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
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
	if err := removeGone(src, dst, p); err != nil {
		return err
	}
	// Folder times last, deepest first: writing into a folder moves its.
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Chtimes(dirs[i].path, dirs[i].fi.ModTime(), dirs[i].fi.ModTime())
	}
	return syncTree(dst)
}

// countTree is the regular files under root and their bytes.
func countTree(root string) (files, bytes int64) {
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				files++
				bytes += fi.Size()
			}
		}
		return nil
	})
	return files, bytes
}

// removeGone removes what dst holds that src no longer does (removed or
// renamed since an earlier pass), asking src entry by entry: PID 1 keeps
// no list of the whole tree.
func removeGone(src, dst string, p *Progress) error {
	var gone []string
	filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dst, path)
		in, err := os.Lstat(filepath.Join(src, rel))
		if err != nil || in.Mode().Type() != d.Type() {
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
	return nil
}

// changedAfter says whether the file's inode changed (content, attributes
// or date) at or after since; never for a zero since.
func changedAfter(fi fs.FileInfo, since time.Time) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if since.IsZero() || !ok {
		return false
	}
	return !time.Unix(st.Ctim.Unix()).Before(since)
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

// copyChecked copies one file to out through the staging file, read back
// from the disk and compared by digest before the rename.
func copyChecked(path, out, staging string) (n int64, damaged bool, err error) {
	in, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, false, err
	}
	attrs, err := fdXattrs(int(in.Fd()))
	if err != nil {
		return 0, false, fmt.Errorf("attributes of %s: %w", path, err)
	}
	f, err := os.OpenFile(staging, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			os.Remove(staging)
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
	for k, v := range attrs {
		if err := unix.Fsetxattr(int(f.Fd()), k, v, 0); err != nil {
			return n, damaged, fmt.Errorf("set %s on %s: %w", k, out, err)
		}
	}
	if err := f.Chmod(fi.Mode().Perm()); err != nil {
		return n, damaged, err
	}
	if err := f.Sync(); err != nil {
		return n, damaged, fmt.Errorf("write %s: %w", out, err)
	}
	err = f.Close()
	f = nil
	if err != nil {
		return n, damaged, fmt.Errorf("write %s: %w", out, err)
	}
	got, err := readBack(staging)
	if err != nil {
		return n, damaged, err
	}
	if got != read {
		return n, damaged, fmt.Errorf("%s: the disk gave back other bytes than were written (SHA-1 %x, not %x): the disk is failing", out, got, read)
	}
	if err := os.Chtimes(staging, fi.ModTime(), fi.ModTime()); err != nil {
		return n, damaged, err
	}
	return n, damaged, os.Rename(staging, out)
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

// xattrs are a file's user extended attributes, by path (not following
// a last symlink) or of an open file.
func xattrs(path string) (map[string][]byte, error) {
	return readXattrs(func(b []byte) (int, error) { return unix.Llistxattr(path, b) },
		func(name string, v []byte) (int, error) { return unix.Lgetxattr(path, name, v) })
}

func fdXattrs(fd int) (map[string][]byte, error) {
	return readXattrs(func(b []byte) (int, error) { return unix.Flistxattr(fd, b) },
		func(name string, v []byte) (int, error) { return unix.Fgetxattr(fd, name, v) })
}

func readXattrs(list func([]byte) (int, error), get func(string, []byte) (int, error)) (map[string][]byte, error) {
	buf := make([]byte, 4096)
	n, err := list(buf)
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
		m, err := get(name, v)
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
		return state.SyncDir(path)
	})
}

// movingName is the file being copied, beside the tree on the disk (one
// at a time); one a power cut left is removed by the next pass.
const movingName = ".bonesync-moving-file"
