package store

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Files with holes: a hole costs nothing on the disk and reads as zeros,
// so a copy writes only the data (the holes stay holes) and a digest reads
// only the data (the zeros of a hole are fed from memory, not the disk).
// A file that is mostly holes is not digested at commit at all: its
// digests are made when a client asks for them (Sum), and a client that
// goes away stops that. Every digest stops when its context ends.

// chunk is the unit of copying and hashing, and how often a context is
// looked at.
const chunk = 1 << 20

// zeros is a hole's content, fed to digests: an array, in the binary's
// zeroed data, whose pages are the kernel's shared zero page until
// written (never), where a slice made at start was a MiB of the serving
// heap (a third of what it keeps live), resident.
var zeros [chunk]byte

// dataSegments calls fn with each extent of data in f's first size bytes,
// in order (SEEK_DATA and SEEK_HOLE); on a file system without them, the
// whole file is one extent.
func dataSegments(f *os.File, size int64, fn func(off, n int64) error) error {
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		start, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			return nil // only a hole is left
		}
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
			return fn(off, size-off)
		}
		if err != nil {
			return err
		}
		if start >= size {
			return nil
		}
		end, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil {
			return err
		}
		end = min(end, size)
		if err := fn(start, end-start); err != nil {
			return err
		}
		off = end
	}
	return nil
}

// hashSparse feeds h f's first size bytes, reading only the data.
func hashSparse(ctx context.Context, h io.Writer, f *os.File, size int64) error {
	buf := make([]byte, chunk)
	at := int64(0)
	feedZeros := func(n int64) error {
		for n > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := min(n, chunk)
			h.Write(zeros[:k])
			n -= k
		}
		return nil
	}
	err := dataSegments(f, size, func(off, n int64) error {
		if err := feedZeros(off - at); err != nil {
			return err
		}
		for done := int64(0); done < n; {
			if err := ctx.Err(); err != nil {
				return err
			}
			k, err := f.ReadAt(buf[:min(n-done, chunk)], off+done)
			h.Write(buf[:k])
			done += int64(k)
			if err != nil && !(errors.Is(err, io.EOF) && done == n) {
				return err
			}
		}
		at = off + n
		return nil
	})
	if err != nil {
		return err
	}
	return feedZeros(size - at)
}

// mostlyHoles says whether f, of size bytes, keeps less than half of them
// on the disk and at least 64 MiB fewer: its digest is left until asked.
func mostlyHoles(f *os.File, size int64) bool {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	held := st.Blocks * 512
	return held < size/2 && size-held >= 64<<20
}

// CopyFrom writes the first size bytes of src into the upload at the
// same offsets, data only: src's holes stay holes. Each write is checked as
// WriteAt's are (the quota, and the holes against the free space).
func (u *Upload) CopyFrom(f File, size int64) error {
	src, err := opened(f)
	if err != nil {
		return err
	}
	buf := make([]byte, chunk)
	ctx := u.top.context()
	err = dataSegments(src, size, func(off, n int64) error {
		for done := int64(0); done < n; {
			if err := ctx.Err(); err != nil {
				return err
			}
			k, err := src.ReadAt(buf[:min(n-done, chunk)], off+done)
			if k > 0 {
				if _, werr := u.WriteAt(buf[:k], off+done); werr != nil {
					return werr
				}
			}
			done += int64(k)
			if err != nil && !(errors.Is(err, io.EOF) && done == n) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return u.record(err)
	}
	return u.extend(size)
}

// extend makes the upload size bytes long, the rest a hole.
func (u *Upload) extend(size int64) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if size <= u.size {
		return nil
	}
	if err := u.grow(size, 0); err != nil {
		return err
	}
	if err := u.f.Truncate(size); err != nil {
		u.err = noSpace(err)
		return u.err
	}
	u.h.broken = true
	u.size = size
	return nil
}

// SetContext makes the tree's long work (digests, copies) stop when ctx
// ends: the request's, or the SFTP connection's. Without it, nothing stops
// it.
func (t *Tree) SetContext(ctx context.Context) { t.ctx = ctx }

func (t *Tree) context() context.Context {
	if t.ctx != nil {
		return t.ctx
	}
	return context.Background()
}
