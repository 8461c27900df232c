package files

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/store"
)

// maxCopyDepth bounds the folders a COPY descends into.
const maxCopyDepth = 1000

// copyMove answers COPY and MOVE of the request's path to dst (RFC 4918
// sections 9.8 and 9.9). Overwrite is T unless the client says F. A file
// onto a file is replaced by one rename (a copy is written beside it
// first), so that a copy that fails (quota, full disk) or a power cut
// leaves the old file; a folder in the way is removed first, as the RFC
// says, once every permission a share asks for is known to be there. A
// MOVE into or out of a share is a copy and a delete. A copy keeps its
// source's dates and dead properties.
func (q *request) copyMove(dst string) {
	r, w := q.r, q.w
	src := path.Clean("/" + q.name)
	if dst == src || within(dst, src) {
		http.Error(w, "the destination is the source or inside it", http.StatusForbidden)
		return
	}
	if within(src, dst) {
		// Overwriting the destination would remove the source with it.
		http.Error(w, "the destination holds the source", http.StatusForbidden)
		return
	}
	depth, ok := copyDepth(r)
	if !ok {
		http.Error(w, "COPY takes Depth 0 or infinity, MOVE infinity", http.StatusBadRequest)
		return
	}
	var mtime time.Time
	if v := r.Header.Get("X-OC-Mtime"); v != "" {
		t, err := parseUnixTime(v)
		if err != nil {
			http.Error(w, "X-OC-Mtime: "+err.Error(), http.StatusBadRequest)
			return
		}
		mtime = t
	}
	sfi, err := q.tree.Stat(src)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	if pfi, err := q.tree.Stat(path.Dir(dst)); err != nil || !pfi.IsDir() {
		http.Error(w, "the folder the destination would be in does not exist", http.StatusConflict)
		return
	}
	dfi, statErr := q.tree.Stat(dst)
	created := statErr != nil
	if !created && r.Header.Get("Overwrite") == "F" {
		http.Error(w, "the destination exists (Overwrite: F)", http.StatusPreconditionFailed)
		return
	}
	move := r.Method == "MOVE"
	rename, err := q.tree.CheckTransfer(src, dst, move)
	if err != nil {
		q.refused(r.Method, err)
		return
	}
	if !created && !(sfi.Mode().IsRegular() && dfi.Mode().IsRegular()) {
		if err := q.tree.RemoveAll(dst); err != nil {
			q.refused(r.Method, err)
			return
		}
	}
	switch {
	case move && rename:
		err = q.tree.Rename(src, dst)
	case move: // into or out of a share: the owner's files are another tree
		if err = q.copy(src, dst, -1, 0); err == nil {
			err = q.tree.RemoveAll(src)
		}
	default:
		err = q.copy(src, dst, depth, 0)
	}
	if err != nil {
		q.refused(r.Method, err)
		return
	}
	if !mtime.IsZero() && q.tree.SetModTime(dst, mtime) == nil {
		w.Header().Set("X-OC-MTime", "accepted")
	}
	if in, err := q.tree.Info(dst); err == nil {
		targetHeaders(w.Header(), in)
	}
	if created {
		w.WriteHeader(http.StatusCreated)
	} else {
		w.WriteHeader(http.StatusNoContent)
	}
}

// within says whether the clean path p is below the folder dir.
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// copyDepth reads a COPY's Depth (0 or infinity, the default) or a
// MOVE's (infinity only); -1 is infinity.
func copyDepth(r *http.Request) (int, bool) {
	switch d := r.Header.Get("Depth"); {
	case d == "" || d == "infinity" || d == "Infinity":
		return -1, true
	case d == "0" && r.Method == "COPY":
		return 0, true
	}
	return 0, false
}

// copy copies src to dst: a file through a store Upload (replacing a file
// at dst when it commits), a folder as a new folder and, at depth
// infinity, what it holds.
func (q *request) copy(src, dst string, depth, level int) error {
	if level > maxCopyDepth {
		return fmt.Errorf("copy %s: folders nested deeper than %d", src, maxCopyDepth)
	}
	f, err := q.tree.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return q.copyFile(f, fi, dst)
	}
	if err := q.tree.Mkdir(dst); err != nil {
		return err
	}
	if err := q.copyFolderProps(f, dst); err != nil {
		return err
	}
	if depth != 0 {
		entries, err := q.tree.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := q.copy(path.Join(src, e.Name()), path.Join(dst, e.Name()), depth, level+1); err != nil {
				return err
			}
		}
	}
	// Dated last: writing what it holds changed its date.
	return q.tree.SetModTime(dst, fi.ModTime())
}

// copyFolderProps gives the new folder dst the dead properties of the
// open folder f.
func (q *request) copyFolderProps(f store.File, dst string) error {
	b, err := store.Props(f)
	if err != nil || len(b) == 0 {
		return err
	}
	d, err := q.tree.Open(dst)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := store.SetProps(d, b); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// copyFile copies the open file f (fi) to dst with its date and dead
// properties; the copy is committed only if every byte was copied.
func (q *request) copyFile(f store.File, fi fs.FileInfo, dst string) error {
	u, err := q.tree.Create(dst, false)
	if err != nil {
		return err
	}
	u.SetModTime(fi.ModTime())
	err = u.CopyFrom(f, fi.Size()) // its holes kept
	if err == nil {
		err = copyDeadProps(f, u)
	}
	if err != nil {
		u.Fail(err)
	}
	return u.Close()
}

// copyDeadProps gives the upload u the dead properties of the file f.
func copyDeadProps(f store.File, u *store.Upload) error {
	b, err := store.Props(f)
	if err != nil || len(b) == 0 {
		return err
	}
	if err := u.SetProps(b); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
