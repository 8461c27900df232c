package sftpd

import (
	"io"
	"io/fs"
	"os"

	"github.com/pkg/sftp"

	"github.com/bonesync/bonesync/appliance/store"
)

// Handlers serves one user's tree over SFTP.
func Handlers(t *store.Tree) sftp.Handlers {
	h := &handler{t: t}
	return sftp.Handlers{FileGet: h, FilePut: h, FileCmd: h, FileList: h}
}

type handler struct{ t *store.Tree }

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
	return h.t.Create(r.Filepath, !flags.Trunc)
}

// OpenFile serves opens for reading and writing at once.
func (h *handler) OpenFile(r *sftp.Request) (sftp.WriterAtReaderAt, error) {
	w, err := h.Filewrite(r)
	if err != nil {
		return nil, err
	}
	return w.(*store.Upload), nil
}

func (h *handler) Filecmd(r *sftp.Request) error {
	switch r.Method {
	case "Setstat":
		return nil // modes and times are the box's to keep
	case "Rename":
		// SFTP rename does not replace an existing file.
		if _, err := h.t.Lstat(r.Target); err == nil {
			return os.ErrExist
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
func (h *handler) PosixRename(r *sftp.Request) error { return h.t.Rename(r.Filepath, r.Target) }

func (h *handler) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	switch r.Method {
	case "List":
		entries, err := h.t.ReadDir(r.Filepath)
		if err != nil {
			return nil, err
		}
		return lister(entries), nil
	case "Stat":
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
	fi, err := h.t.Lstat(r.Filepath)
	if err != nil {
		return nil, err
	}
	return lister{fi}, nil
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
