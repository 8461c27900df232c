package sftpd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"time"

	"github.com/pkg/sftp"

	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
)

func init() {
	// Advertise only what works: no hardlink@openssh.com (links could lead
	// out of a tree, and the store offers none).
	if err := sftp.SetSFTPExtensions("posix-rename@openssh.com", "statvfs@openssh.com"); err != nil {
		panic(err)
	}
}

// Handlers serves one user's tree over SFTP. locked, if not nil, is asked
// before every change: a path a WebDAV client has locked is not written,
// renamed or removed (locks.Table.Check, with no token submitted).
func Handlers(t Tree, locked func(...locks.Change) error) sftp.Handlers {
	if locked == nil {
		locked = func(...locks.Change) error { return nil }
	}
	h := &handler{t: t, locked: locked, open: map[string]*upload{}}
	return sftp.Handlers{FileGet: h, FilePut: h, FileCmd: h, FileList: h}
}

// Tree is what SFTP does with a user's files (a *store.Tree): read,
// write, rename and remove them, set their dates and modes, and answer
// statvfs from the quota and the disk.
type Tree interface {
	Open(p string) (store.File, error)
	Stat(p string) (fs.FileInfo, error)
	Lstat(p string) (fs.FileInfo, error)
	ReadDir(p string) ([]fs.FileInfo, error)
	Create(p string, keep bool) (*store.Upload, error)
	CreateKeeping(p string, n int64) (*store.Upload, error)
	Mkdir(p string) error
	Rename(oldp, newp string) error
	Remove(p string) error
	Chmod(p string, perm fs.FileMode) error
	SetTimes(p string, atime, mtime time.Time) error
	Free() (int64, error)
	Fits(n int64) error
	Quota() int64
	Usage() (int64, error)
}

type handler struct {
	t      Tree
	locked func(...locks.Change) error
	mu     sync.Mutex
	open   map[string]*upload // uploads this session has open, by path
}

// checkLocks refuses a change to a locked path with a permission error that
// says why.
func (h *handler) checkLocks(changes ...locks.Change) error {
	if err := h.locked(changes...); err != nil {
		return fmt.Errorf("%w: %w", err, sftp.ErrSSHFxPermissionDenied)
	}
	return nil
}

// upload is an Upload that the session can find by path (for a stat, a
// truncate, a rename or a remove of an open file) until it is closed.
type upload struct {
	*store.Upload
	h       *handler
	path    string
	removed bool // removed while open: nothing is committed at the close
}

func (u *upload) Close() error {
	u.h.mu.Lock()
	removed := u.removed
	if u.h.open[u.path] == u {
		delete(u.h.open, u.path)
	}
	u.h.mu.Unlock()
	if removed {
		u.Upload.Abort()
		return nil
	}
	return u.Upload.Close()
}

// openUpload is the upload this session has open at p, if any.
func (h *handler) openUpload(p string) *upload {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open[path.Clean("/"+p)]
}

// A file this session is still writing may be renamed or removed, as on a
// local disk: sshfs closes a file (FUSE's release) after close(2) has
// returned, so `echo x > f; rm f` and an editor's save (write, then rename
// over the original) send the REMOVE or RENAME before the CLOSE that
// commits the file; pkg/sftp serves them in that order.

// removeOpen removes a file being written: nothing is committed at its
// close, and what was there before goes now.
func (h *handler) removeOpen(up *upload) error {
	h.mu.Lock()
	up.removed = true
	delete(h.open, up.path)
	h.mu.Unlock()
	if err := h.t.Remove(up.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// renameOpen renames a file being written: its close commits it at to, and
// the version there before, if any, moves with it now.
func (h *handler) renameOpen(up *upload, to string) error {
	if _, err := h.t.Lstat(up.path); err == nil {
		if err := h.t.Rename(up.path, to); err != nil {
			return err
		}
	}
	if err := up.MoveTo(to); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.open, up.path)
	up.path = path.Clean("/" + to)
	h.open[up.path] = up
	h.mu.Unlock()
	return nil
}

func (h *handler) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	f, err := h.t.Open(r.Filepath)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		f.Close()
		return nil, sftp.ErrSSHFxFailure
	}
	return f, nil
}

// Filewrite starts an Upload: the file appears when the client closes it,
// after fsync; a dropped connection aborts it (TransferError).
func (h *handler) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	flags := r.Pflags()
	if flags.Excl {
		if _, err := h.t.Lstat(r.Filepath); err == nil {
			return nil, os.ErrExist
		}
	}
	_, statErr := h.t.Stat(r.Filepath)
	if !flags.Creat && !flags.Trunc && statErr != nil {
		return nil, statErr // opening a missing file without CREAT
	}
	if err := h.checkLocks(locks.Change{Path: r.Filepath, Member: statErr != nil}); err != nil {
		return nil, err
	}
	u, err := h.t.Create(r.Filepath, !flags.Trunc)
	if err != nil {
		return nil, err
	}
	p := r.Filepath
	u.SetGuard(func() error { // a lock taken while the file was being written
		_, err := h.t.Stat(p)
		return h.checkLocks(locks.Change{Path: p, Member: err != nil})
	})
	up := &upload{Upload: u, h: h, path: path.Clean("/" + r.Filepath)}
	h.mu.Lock()
	h.open[up.path] = up
	h.mu.Unlock()
	return up, nil
}

// OpenFile serves opens for reading and writing at once.
func (h *handler) OpenFile(r *sftp.Request) (sftp.WriterAtReaderAt, error) {
	w, err := h.Filewrite(r)
	if err != nil {
		return nil, err
	}
	return w.(*upload), nil
}

func (h *handler) Filecmd(r *sftp.Request) error {
	var err error
	switch r.Method {
	case "Setstat":
		if err := h.checkLocks(locks.Change{Path: r.Filepath}); err != nil {
			return err
		}
		return h.setstat(r)
	case "Rename":
		err = h.checkLocks(locks.Change{Path: r.Filepath, Tree: true, Member: true}, locks.Change{Path: r.Target, Tree: true, Member: true})
	case "Rmdir", "Remove":
		err = h.checkLocks(locks.Change{Path: r.Filepath, Tree: true, Member: true})
	case "Mkdir":
		err = h.checkLocks(locks.Change{Path: r.Filepath, Member: true})
	}
	if err != nil {
		return err
	}
	switch r.Method {
	case "Rename":
		// SFTP rename does not replace an existing file.
		if _, err := h.t.Lstat(r.Target); err == nil || h.openUpload(r.Target) != nil {
			return os.ErrExist
		}
		if up := h.openUpload(r.Filepath); up != nil {
			return h.renameOpen(up, r.Target)
		}
		return h.t.Rename(r.Filepath, r.Target)
	case "Rmdir":
		fi, err := h.t.Lstat(r.Filepath)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return sftp.ErrSSHFxFailure
		}
		return h.t.Remove(r.Filepath)
	case "Remove":
		if up := h.openUpload(r.Filepath); up != nil {
			return h.removeOpen(up)
		}
		fi, err := h.t.Lstat(r.Filepath)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return sftp.ErrSSHFxFailure
		}
		return h.t.Remove(r.Filepath)
	case "Mkdir":
		return h.t.Mkdir(r.Filepath)
	}
	// Links could be pointed outside the tree: not offered.
	return sftp.ErrSSHFxOpUnsupported
}

// PosixRename is posix-rename@openssh.com: rename, replacing the target.
func (h *handler) PosixRename(r *sftp.Request) error {
	if err := h.checkLocks(locks.Change{Path: r.Filepath, Tree: true, Member: true}, locks.Change{Path: r.Target, Tree: true, Member: true}); err != nil {
		return err
	}
	if up := h.openUpload(r.Filepath); up != nil {
		return h.renameOpen(up, r.Target)
	}
	return h.t.Rename(r.Filepath, r.Target)
}

func (h *handler) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	switch r.Method {
	case "List":
		entries, err := h.t.ReadDir(r.Filepath)
		if err != nil {
			return nil, err
		}
		return lister(entries), nil
	case "Stat":
		if fi, ok := h.openStat(r.Filepath); ok {
			return lister{fi}, nil
		}
		fi, err := h.t.Stat(r.Filepath)
		if err != nil {
			return nil, err
		}
		return lister{fi}, nil
	}
	return nil, sftp.ErrSSHFxOpUnsupported
}

// Lstat describes a file without following a final symlink.
func (h *handler) Lstat(r *sftp.Request) (sftp.ListerAt, error) {
	if fi, ok := h.openStat(r.Filepath); ok {
		return lister{fi}, nil
	}
	fi, err := h.t.Lstat(r.Filepath)
	if err != nil {
		return nil, err
	}
	return lister{fi}, nil
}

// openStat describes a file this session is writing, as the writer sees
// it: sshfs and paramiko stat a file they have just created, which the
// store shows to everyone else only when it is closed.
func (h *handler) openStat(p string) (fs.FileInfo, bool) {
	h.mu.Lock()
	up := h.open[path.Clean("/"+p)]
	h.mu.Unlock()
	if up == nil {
		return nil, false
	}
	fi, err := up.Stat()
	if err != nil {
		return nil, false
	}
	return store.Named(fi, path.Base(path.Clean("/"+p))), true
}

// StatVFS answers statvfs@openssh.com (df in sftp): the disk's free space,
// or what the user's quota leaves if that is less.
func (h *handler) StatVFS(r *sftp.Request) (*sftp.StatVFS, error) {
	free, err := h.t.Free()
	if err != nil {
		return nil, err
	}
	total := free
	if q := h.t.Quota(); q > 0 {
		used, err := h.t.Usage()
		if err != nil {
			return nil, err
		}
		free = max(0, min(free, q-used))
		total = q
	} else if used, err := h.t.Usage(); err == nil {
		total = free + used
	}
	const block = 4096
	return &sftp.StatVFS{
		Bsize: block, Frsize: block,
		Blocks: uint64(total) / block, Bfree: uint64(free) / block, Bavail: uint64(free) / block,
		Files: 1 << 20, Ffree: 1 << 20, Favail: 1 << 20, Namemax: 255,
	}, nil
}

type lister []fs.FileInfo

func (l lister) ListAt(out []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(out, l[off:])
	if n < len(out) {
		return n, io.EOF
	}
	return n, nil
}

// setstat honours a SETSTAT or FSETSTAT (sftp put -p, scp -p, touch and
// chmod over sshfs, rclone's dates): times, permission bits within
// the store's mask (0777, the owner keeping read and write), and a
// size within the quota and the free space, checked before anything
// changes. Owners cannot be changed (SSH_FX_OP_UNSUPPORTED, never a silent
// OK).
func (h *handler) setstat(r *sftp.Request) error {
	flags, attrs := r.AttrFlags(), r.Attributes()
	if flags.UidGid {
		return fmt.Errorf("owners are the box's: %w", sftp.ErrSSHFxOpUnsupported)
	}
	h.mu.Lock()
	up := h.open[path.Clean("/"+r.Filepath)]
	h.mu.Unlock()
	var cur fs.FileInfo
	var err error
	if up != nil {
		cur, err = up.Stat()
	} else {
		cur, err = h.t.Stat(r.Filepath)
	}
	if err != nil {
		return err
	}
	perm := fs.FileMode(attrs.Mode) & fs.ModePerm // the store keeps the owner's access
	if flags.Size {
		if cur.IsDir() {
			return sftp.ErrSSHFxFailure
		}
		if grow := int64(attrs.Size) - cur.Size(); grow > 0 {
			// A size is real bytes on the card: a 100-byte request must not
			// make a sparse terabyte that a copy later writes out.
			if free, err := h.t.Free(); err == nil && grow > free {
				return fmt.Errorf("%d more bytes do not fit on the disk: %w", grow, store.ErrNoSpace)
			}
			if err := h.t.Fits(grow); err != nil {
				return err
			}
		}
		if err := h.truncate(r.Filepath, int64(attrs.Size)); err != nil {
			return err
		}
	}
	if flags.Permissions {
		if up != nil {
			up.SetPerm(perm)
		} else if err := h.t.Chmod(r.Filepath, perm); err != nil {
			return err
		}
	}
	if flags.Acmodtime {
		atime, mtime := time.Unix(int64(attrs.Atime), 0), time.Unix(int64(attrs.Mtime), 0)
		if up != nil {
			up.SetTimes(atime, mtime)
		} else if err := h.t.SetTimes(r.Filepath, atime, mtime); err != nil {
			return err
		}
	}
	return nil
}

// truncate sets a file's length: that of an upload this session has open, or
// else of the stored file, by a new upload of its content (so a reader never
// sees it half-cut).
func (h *handler) truncate(p string, size int64) error {
	h.mu.Lock()
	up := h.open[path.Clean("/"+p)]
	h.mu.Unlock()
	if up != nil {
		return up.Truncate(size)
	}
	u, err := h.t.CreateKeeping(p, size) // copies only what it keeps
	if err != nil {
		return err
	}
	u.SetGuard(func() error { return h.checkLocks(locks.Change{Path: p}) })
	if err := u.Truncate(size); err != nil {
		u.Abort()
		return err
	}
	return u.Commit()
}
