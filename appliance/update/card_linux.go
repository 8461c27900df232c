package update

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Open finds the card whose boot partition is mounted at dir.
func Open(dir, state string) (*Card, error) {
	cmdline, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return nil, err
	}
	run := ParseCmdline(string(cmdline))
	if dir == "" || run.Slot == "" {
		return nil, ErrNotCard
	}
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotCard, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return nil, err
	}
	uevent, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/uevent", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return nil, fmt.Errorf("the device under %s: %w", dir, err)
	}
	d := &device{dir: dir}
	for _, l := range strings.Split(string(uevent), "\n") {
		if v, ok := strings.CutPrefix(l, "DEVNAME="); ok {
			d.dev = "/dev/" + v
		}
	}
	c := &Card{Dir: dir, State: state, Device: d.dev, Running: run, io: d}
	if d.dev == "" {
		return nil, fmt.Errorf("the device under %s: no DEVNAME in its uevent", dir)
	}
	// A bundle being received when the power went: only its sender knew.
	if old, _ := filepath.Glob(filepath.Join(state, spoolPattern)); state != "" {
		for _, f := range old {
			os.Remove(f)
		}
	}
	return c, nil
}

// Writes go to the device, never through the file system: FIBMAP says
// where each block of a file is, and the sectors there are overwritten.

const (
	ioctlFIBMAP   = 1 // _IO(0x00, 1)
	ioctlFIGETBSZ = 2 // _IO(0x00, 2)
)

// device reads and overwrites files on the mounted boot partition dir
// through its block device dev.
type device struct{ dir, dev string }

// blocks maps the first n bytes of the file name on the card to offsets
// on the device, one per file-system block.
func (c *device) blocks(name string, n int64) (bsize int64, offs []int64, err error) {
	f, err := os.Open(filepath.Join(c.dir, name))
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	if st.Size() < n {
		return 0, nil, fmt.Errorf("%s on the card is %d bytes, less than %d: the card's layout is not this version's", name, st.Size(), n)
	}
	var bs int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), ioctlFIGETBSZ, uintptr(unsafe.Pointer(&bs))); e != 0 {
		return 0, nil, fmt.Errorf("%s: FIGETBSZ: %w", name, e)
	}
	bsize = int64(bs)
	for i := int64(0); i*bsize < n; i++ {
		blk := int32(i)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), ioctlFIBMAP, uintptr(unsafe.Pointer(&blk))); e != 0 {
			return 0, nil, fmt.Errorf("%s: FIBMAP: %w", name, e)
		}
		if blk <= 0 {
			return 0, nil, fmt.Errorf("%s: block %d is not allocated", name, i)
		}
		offs = append(offs, int64(blk)*bsize)
	}
	// Whatever the file system cached of the file is stale from now on.
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	return bsize, offs, nil
}

// writer returns a writer for the first n bytes of name; it syncs the
// device when n bytes are written.
func (c *device) writer(name string, n int64) (io.WriteCloser, error) {
	bsize, offs, err := c.blocks(name, n)
	if err != nil {
		return nil, err
	}
	dev, err := os.OpenFile(c.dev, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &blockWriter{name: name, dev: dev, bsize: bsize, offs: offs, left: n}, nil
}

type blockWriter struct {
	name  string
	dev   *os.File
	bsize int64
	offs  []int64
	pos   int64
	left  int64
	buf   []byte // a partial block
}

func (w *blockWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > w.left {
		return 0, fmt.Errorf("%s: more than %d bytes", w.name, w.pos+w.left)
	}
	n := len(p)
	w.left -= int64(n)
	for len(p) > 0 {
		k := min(int(w.bsize)-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if int64(len(w.buf)) == w.bsize || w.left == 0 && len(p) == 0 {
			if err := w.flushBlock(); err != nil {
				return 0, err
			}
		}
	}
	if w.left == 0 {
		return n, w.Close()
	}
	return n, nil
}

// flushBlock writes the buffered block; a last, partial block keeps the
// rest of its sector as it was (it is past the file's data).
func (w *blockWriter) flushBlock() error {
	off := w.offs[w.pos/w.bsize]
	if _, err := w.dev.WriteAt(w.buf, off); err != nil {
		return fmt.Errorf("%s: write %s: %w", w.name, w.dev.Name(), err)
	}
	w.pos += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// Close syncs the device (once).
func (w *blockWriter) Close() error {
	if w.dev == nil {
		return nil
	}
	defer func() { w.dev.Close(); w.dev = nil }()
	if w.left != 0 {
		return fmt.Errorf("%s: %d bytes short", w.name, w.left)
	}
	if err := w.dev.Sync(); err != nil {
		return fmt.Errorf("%s: sync %s: %w", w.name, w.dev.Name(), err)
	}
	return nil
}

// read reads the first n bytes of name from the device itself, the
// device's cache dropped first, so that it is what the card holds.
func (c *device) read(name string, n int64) ([]byte, error) {
	bsize, offs, err := c.blocks(name, n)
	if err != nil {
		return nil, err
	}
	dev, err := os.Open(c.dev)
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	unix.Fadvise(int(dev.Fd()), 0, 0, unix.FADV_DONTNEED)
	var out bytes.Buffer
	out.Grow(int(n))
	buf := make([]byte, bsize)
	for i, off := range offs {
		k := min(bsize, n-int64(i)*bsize)
		if _, err := dev.ReadAt(buf[:k], off); err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", name, c.dev, err)
		}
		out.Write(buf[:k])
	}
	return out.Bytes(), nil
}

// Read reads the file name (relative to Dir) whole through the device,
// past the FAT's cache, which does not see what Rewrite and the slots'
// writers put beneath it (FIRST-LOGIN.txt, written by the server, read by
// PID 1).
func (c *Card) Read(name string) ([]byte, error) {
	st, err := os.Stat(filepath.Join(c.Dir, name))
	if err != nil {
		return nil, err
	}
	return c.read(name, st.Size())
}

// Rewrite overwrites the file name (relative to Dir) with b, which must
// be exactly its size: in place, through the device, the FAT untouched.
// The config file's blanked password is written this way.
func (c *Card) Rewrite(name string, b []byte) error {
	st, err := os.Stat(filepath.Join(c.Dir, name))
	if err != nil {
		return err
	}
	if st.Size() != int64(len(b)) {
		return fmt.Errorf("%s: %d bytes for a file of %d: not in place", name, len(b), st.Size())
	}
	return c.write(name, b)
}

// mountFlags are the boot partition's: PID 1 mounts it read-only.
const mountFlags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// writable runs fn with the boot partition mounted read-write, then
// syncs and mounts it read-only again. Only a file made new needs it
// (FIRST-LOGIN.txt on a card made before the image held one): it changes
// the FAT's tables and root directory, and a power cut meanwhile leaves
// the partition marked dirty.
func (c *Card) writable(fn func() error) error {
	if err := unix.Mount("", c.Dir, "", unix.MS_REMOUNT|mountFlags, ""); err != nil {
		return fmt.Errorf("mount %s read-write: %w", c.Dir, err)
	}
	err := fn()
	if d, e := os.Open(c.Dir); e == nil {
		unix.Syncfs(int(d.Fd()))
		d.Close()
	}
	if e := unix.Mount("", c.Dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|mountFlags, ""); e != nil && err == nil {
		err = fmt.Errorf("mount %s read-only again: %w", c.Dir, e)
	}
	return err
}

// CreateFile writes a new file name (relative to Dir) on the boot
// partition; one already there is replaced.
func (c *Card) CreateFile(name string, b []byte) error {
	return c.writable(func() error {
		f, err := os.OpenFile(filepath.Join(c.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Close() // dropped: the write's error is the one to report
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close() // dropped: the sync's error is the one to report
			return err
		}
		return f.Close()
	})
}

// lock takes an exclusive flock on the boot partition's device node:
// PID 1 (the console's update, a commit) and the server (/admin/update)
// are different processes.
func (c *device) lock() (func(), error) {
	f, err := os.Open(c.dev)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", c.dev, err)
	}
	return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
}

// offset is where the first byte of name is on the device, in bytes from
// the partition's start.
func (c *device) offset(name string) (int64, error) {
	_, offs, err := c.blocks(name, 1)
	if err != nil {
		return 0, err
	}
	return offs[0], nil
}
