package store

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
// store's staging folder, hashed as it streams in; Commit sets its date and
// its metadata record, makes it durable and puts it in place in one rename,
// so readers see the old file or the complete new one, never a part, and
// never content without its digests. Abort, or a crash, leaves the old file
// as it was.
type Upload struct {
	t      *Tree  // the tree the file is in: a share's, for a path in one
	top    *Tree  // the tree Create was called on, which MoveTo's path is of
	name   string // cleaned final path
	tmp    string // name in the staging folder
	f      *os.File
	mu     sync.Mutex
	h      *hasher
	err    error // first write error, or the transfer error
	closed bool

	mtime   time.Time
	atime   time.Time // with SetTimes; zero: left as the system sets it
	perm    fs.FileMode
	expect  []Checksum
	result  Info
	oldSize int64 // of the file this one replaces
	size    int64 // the end of what was written
	guard   func() error
	lazy    bool // committed without digests: made when asked (Sum)
}

// SetGuard makes Commit ask guard, just before the file is put in place,
// whether it still may be (SFTP: is the path locked over WebDAV now?).
func (u *Upload) SetGuard(guard func() error) { u.guard = guard }

// Create starts an upload to p. If keep is true and p exists, the upload starts
// from its current content (an SFTP client resuming or appending).
func (t *Tree) Create(p string, keep bool) (*Upload, error) {
	n := int64(0)
	if keep {
		n = -1
	}
	return t.CreateKeeping(p, n)
}

// CreateKeeping starts an upload to p from the first n bytes of its current
// content (all of it if n < 0): a truncation copies only what it keeps.
func (t *Tree) CreateKeeping(p string, n int64) (*Upload, error) {
	top := t
	t, c, err := t.atWrite(p)
	if err != nil {
		return nil, err
	}
	if c == "." {
		return nil, fs.ErrExist
	}
	if fi, err := t.root.Stat(c); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory: %w", p, fs.ErrExist)
	}
	// The folder must exist, inside the tree, before any byte is taken.
	if fi, err := t.root.Stat(parent(c)); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", parent(c), fs.ErrNotExist)
	}
	var rnd [12]byte
	rand.Read(rnd[:])
	tmp := hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(int(t.s.staging.Fd()), tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, noSpace(fmt.Errorf("start upload of %s: %w", p, err))
	}
	u := &Upload{t: t, top: top, name: c, tmp: tmp, f: os.NewFile(uintptr(fd), tmp), h: newHasher()}
	if fi, err := t.root.Stat(c); err == nil {
		u.oldSize = fi.Size()
	}
	if n != 0 {
		if old, err := t.root.Open(c); err == nil {
			if fi, serr := old.Stat(); serr == nil && (n < 0 || n > fi.Size()) {
				n = fi.Size()
			}
			err = u.CopyFrom(old, n) // its holes kept
			old.Close()
			if err != nil {
				u.Abort()
				return nil, noSpace(err)
			}
		}
	}
	return u, nil
}

// MoveTo makes the upload commit to p instead: the file was renamed while
// it was being written (sshfs renames an editor's temporary file before it
// closes it).
func (u *Upload) MoveTo(p string) error {
	t, c, err := u.top.atWrite(p)
	if err != nil {
		return err
	}
	if t != u.t {
		return &fs.PathError{Op: "rename", Path: p, Err: errCrossMount}
	}
	if c == "." || t.only != "" {
		return fs.ErrExist
	}
	if fi, err := u.t.root.Stat(parent(c)); err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s: %w", parent(c), fs.ErrNotExist)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.name = c
	u.oldSize = 0
	if fi, err := u.t.root.Stat(c); err == nil {
		u.oldSize = fi.Size()
	}
	return nil
}

// SetModTime gives the file the client's modification time instead of the
// time of the upload.
func (u *Upload) SetModTime(t time.Time) { u.mtime = t }

// SetTimes gives the file the client's access and modification times.
func (u *Upload) SetTimes(atime, mtime time.Time) { u.atime, u.mtime = atime, mtime }

// SetPerm gives the file permission bits (as safePerm keeps them) at commit.
func (u *Upload) SetPerm(perm fs.FileMode) { u.perm = safePerm(perm, false) }

// Expect makes Commit refuse the upload unless its content has this digest.
// Call it before writing.
func (u *Upload) Expect(c Checksum) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case c.Algo == "MD5" && u.h.md5 == nil:
		u.h.md5 = md5.New()
	case c.Algo == "ADLER32" && u.h.adler == nil:
		u.h.adler = adler32.New()
	default:
		u.expect = append(u.expect, c)
		return
	}
	if u.h.n > 0 {
		u.h.broken = true // what came before was not hashed so
	}
	u.expect = append(u.expect, c)
}

// Result describes the committed file.
func (u *Upload) Result() Info { return u.result }

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
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.grow(u.size+int64(len(b)), len(b)); err != nil {
		return 0, err
	}
	n, err := u.f.Write(b)
	if err != nil && u.roomMade(err, len(b)-n) {
		var m int
		m, err = u.f.Write(b[n:])
		n += m
	}
	u.h.Write(b[:n])
	u.size += int64(n)
	if err != nil && u.err == nil {
		u.err = noSpace(err)
	}
	return n, noSpaceOrNil(err)
}

// grow checks that the upload may reach end bytes, n of them written now,
// within the quota and, when the write leaves a hole before it, the free
// space: a hole reads as zeros, bytes a copy or a restore writes out and
// every digest reads, so one 10-byte write at 2^40 must not make a
// terabyte. What the file would hold beyond what it has on the disk is
// measured (its size less its allocated blocks), so that holes made a step
// at a time, each within the free space that holes never use up, add up.
// Called with u.mu held.
func (u *Upload) grow(end int64, n int) error {
	if end <= u.size {
		return nil
	}
	err := u.t.overQuota(end - u.oldSize)
	if err == nil && end-int64(n) > u.size {
		var st unix.Stat_t
		allocated := u.size // if fstat fails: the holes made before are not counted
		if unix.Fstat(int(u.f.Fd()), &st) == nil {
			allocated = st.Blocks * 512
		}
		if free, ferr := u.t.Free(); ferr == nil && end-allocated > free {
			err = fmt.Errorf("a write at byte %d would make the file %d bytes with %d of them on the disk, more than the disk's %d free: %w",
				end-int64(n), end, allocated, free, ErrNoSpace)
		}
	}
	if err != nil && u.err == nil {
		u.err = err
	}
	return err
}

// WriteAt writes data at an offset (SFTP writes arrive so, maybe out of order).
func (u *Upload) WriteAt(b []byte, off int64) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.grow(off+int64(len(b)), len(b)); err != nil {
		return 0, err
	}
	n, err := u.f.WriteAt(b, off)
	if err != nil && u.roomMade(err, len(b)-n) {
		var m int
		m, err = u.f.WriteAt(b[n:], off+int64(n))
		n += m
	}
	u.h.wrote(b[:n], off)
	u.size = max(u.size, off+int64(n))
	if err != nil && u.err == nil {
		u.err = noSpace(err)
	}
	return n, noSpaceOrNil(err)
}

// roomMade reports whether a write that failed with err, with left bytes
// unwritten, is worth trying once more: the disk was full, and the trash
// gave way.
func (u *Upload) roomMade(err error, left int) bool {
	return errors.Is(noSpace(err), ErrNoSpace) && u.t.s.makeRoom(int64(left))
}

func noSpaceOrNil(err error) error {
	if err == nil {
		return nil
	}
	return noSpace(err)
}

// ReadAt, Seek, Read and Stat let a client read back what it wrote.
func (u *Upload) ReadAt(b []byte, off int64) (int, error) { return u.f.ReadAt(b, off) }
func (u *Upload) Read(b []byte) (int, error)              { return u.f.Read(b) }
func (u *Upload) Seek(off int64, whence int) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.h.broken = true // later Writes land wherever the client seeked to
	return u.f.Seek(off, whence)
}

// Stat describes the file being written, with the date and permissions
// SetTimes and SetPerm gave it.
func (u *Upload) Stat() (fs.FileInfo, error) {
	fi, err := u.f.Stat()
	if err != nil {
		return nil, err
	}
	return pending{fi, u.mtime, u.perm}, nil
}

// pending is an open upload's file as its writer sees it: with the date
// and permissions it set, which the file takes at commit (touch and chmod
// over sshfs stat right after, with the file still open).
type pending struct {
	fs.FileInfo
	mtime time.Time
	perm  fs.FileMode
}

func (p pending) ModTime() time.Time {
	if !p.mtime.IsZero() {
		return p.mtime
	}
	return p.FileInfo.ModTime()
}

func (p pending) Mode() fs.FileMode {
	if p.perm != 0 {
		return p.FileInfo.Mode()&^fs.ModePerm | p.perm
	}
	return p.FileInfo.Mode()
}

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

// Commit checks the content against the client's checksums, dates it,
// records its digests and id on it, makes it durable (fsync), renames it over
// the final name, gives the folders above a new tag and makes the rename
// durable (fsync of the folder): commitSteps, in order. Only when it returns
// nil is the upload acknowledged.
func (u *Upload) Commit() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return errors.New("upload already closed")
	}
	u.closed = true
	if err := u.commit(len(commitSteps)); err != nil {
		u.f.Close()
		unix.Unlinkat(int(u.t.s.staging.Fd()), u.tmp, 0)
		return err
	}
	// The new file, or the old one kept as a version, may have taken the
	// disk below the trash's reserve: then the oldest trash goes.
	u.t.s.keepReserve()
	return nil
}

// commitSteps are a commit's steps. A power cut after any of them leaves,
// after the next start, the old file or the new one, each whole and with
// its own digests (the crash test stops after each in turn).
var commitSteps = []func(c *committing) error{
	(*committing).hash,
	(*committing).date,
	(*committing).record,
	(*committing).sync,
	(*committing).rename,
	(*committing).tag,
	(*committing).syncDir,
}

// committing is a commit under way.
type committing struct {
	u    *Upload
	size int64
	grew int64    // what the commit added to the user's bytes
	dir  *os.File // the final name's folder, from rename on
	// sized ends the change of the folders' sizes (sizeChange), from
	// the rename to their records.
	sized func()
}

// commit runs the first n of commitSteps.
func (u *Upload) commit(n int) error {
	c := &committing{u: u}
	defer func() {
		if c.dir != nil {
			c.dir.Close()
		}
		if c.sized != nil {
			c.sized()
		}
	}()
	for _, step := range commitSteps[:n] {
		if err := step(c); err != nil {
			return err
		}
	}
	return nil
}

// hash makes sure the digests are of the content as it is, and checks the
// client's checksums.
func (c *committing) hash() error {
	u := c.u
	size, err := u.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	c.size = size
	if u.h.broken || u.h.n != size {
		// Written out of order (SFTP's pipelined writes), or truncated:
		// hash what is there, the data only. A file of mostly holes, or
		// one whose client went away meanwhile, is kept without digests
		// (made when asked) unless the client sent one to check.
		if len(u.expect) == 0 && mostlyHoles(u.f, size) {
			u.lazy = true
			return nil
		}
		h := u.h.like()
		ctx := u.top.context()
		if err := hashSparse(ctx, h, u.f, size); err != nil {
			if ctx.Err() != nil && len(u.expect) == 0 {
				u.lazy = true
				return nil
			}
			return fmt.Errorf("read back %s: %w", u.name, err)
		}
		u.h = h
	}
	for _, want := range u.expect {
		if err := u.h.check(want); err != nil {
			return fmt.Errorf("%s: %w", u.name, err)
		}
	}
	return nil
}

// date gives the file the client's times and permissions.
func (c *committing) date() error {
	u := c.u
	if !u.mtime.IsZero() {
		ts := unix.NsecToTimespec(u.mtime.UnixNano())
		at := unix.Timespec{Nsec: unix.UTIME_OMIT}
		if !u.atime.IsZero() {
			at = unix.NsecToTimespec(u.atime.UnixNano())
		}
		if err := unix.UtimesNanoAt(int(u.t.s.staging.Fd()), u.tmp, []unix.Timespec{at, ts}, 0); err != nil {
			return fmt.Errorf("set the date of %s: %w", u.name, err)
		}
	}
	if u.perm != 0 {
		if err := u.f.Chmod(u.perm); err != nil {
			return fmt.Errorf("set the permissions of %s: %w", u.name, err)
		}
	}
	return nil
}

// record writes the file's id (the replaced file's, for a new version of
// it) and digests on it.
func (c *committing) record() error {
	u := c.u
	m := meta{FileID: newFileID(), Size: c.size, Sums: u.h.sums()}
	if u.lazy {
		m = meta{FileID: m.FileID, Size: -1} // no digests: the id alone
	}
	if old, err := u.t.root.Open(u.name); err == nil {
		if in, err := u.t.s.info(old); err == nil && in.Mode().IsRegular() {
			m.FileID = in.FileID // a new version of the same file, under the id it was listed with
		}
		old.Close()
	}
	if err := unix.Fsetxattr(int(u.f.Fd()), metaAttr, m.encode(), 0); err != nil && !errors.Is(err, unix.ENOTSUP) {
		return noSpace(fmt.Errorf("record the checksums of %s: %w", u.name, err))
	}
	return nil
}

// sync makes the file durable, and describes it for the answer.
func (c *committing) sync() error {
	u := c.u
	if err := u.f.Sync(); err != nil {
		return noSpace(err)
	}
	var err error
	if u.result, err = u.t.s.info(u.f); err != nil {
		return err
	}
	u.result.FileInfo = Named(u.result.FileInfo, path.Base(u.name))
	return noSpace(u.f.Close())
}

// rename puts the file in place, the quota checked again with what it
// replaces (one step for the user's usage), the replaced file kept as a
// version if the trash is on.
func (c *committing) rename() error {
	u := c.u
	dir, err := u.t.root.Open(parent(u.name))
	if err != nil {
		return err
	}
	c.dir = dir
	defer u.t.usageStep()()
	var old int64
	if fi, err := u.t.root.Stat(u.name); err == nil {
		old = fi.Size()
	}
	if err := u.t.overQuota(c.size - old); err != nil {
		return err
	}
	if u.guard != nil {
		if err := u.guard(); err != nil {
			return err
		}
	}
	version := u.t.versionBeforeReplace(dir, u.name)
	c.sized = u.t.sizeChange()
	if err := unix.Renameat(int(u.t.s.staging.Fd()), u.tmp, int(dir.Fd()), path.Base(u.name)); err != nil {
		u.t.dropVersion(version)
		return fmt.Errorf("put %s in place: %w", u.name, err)
	}
	c.grew = c.size - old
	u.t.account(c.grew)
	return nil
}

// tag gives the folders above new ETags.
func (c *committing) tag() error {
	c.u.t.touchUp(parent(c.u.name), c.grew)
	c.sized()
	c.sized = nil
	return nil
}

// syncDir makes the rename durable.
func (c *committing) syncDir() error { return c.dir.Sync() }

// Abort throws the upload away; the old file, if any, is untouched.
func (u *Upload) Abort() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	u.closed = true
	u.f.Close()
	unix.Unlinkat(int(u.t.s.staging.Fd()), u.tmp, 0)
}

// Named is fi under another name: a staged file's under its final one.
func Named(fi fs.FileInfo, name string) fs.FileInfo { return renamed{fi, name} }

type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }

// NoSpace wraps err in ErrNoSpace if it says the disk is full.
func NoSpace(err error) error { return noSpace(err) }

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

// Truncate sets the upload's length, as a client's ftruncate would.
func (u *Upload) Truncate(size int64) error {
	u.mu.Lock()
	u.h.broken = true
	if err := u.grow(size, 0); err != nil {
		u.mu.Unlock()
		return err
	}
	u.size = size
	u.mu.Unlock()
	return u.record(u.f.Truncate(size))
}
