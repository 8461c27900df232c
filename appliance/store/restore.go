package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Restore puts a trashed item back and returns the path it now has, and
// whether a file there was displaced (kept as a version in turn). A
// deleted file or folder goes back to its path, re-creating the folders
// above it that are gone; if the path is taken, it becomes "NAME
// (restored).EXT", or "NAME (restored 2).EXT" and so on. A version
// replaces the file at its path, or where that file (its id) has moved,
// which is kept as a version in turn (so a restore can be undone). Restoring counts against the quota like any
// write (ErrQuota), and is synced and tagged like any change.
func (b Bin) Restore(id string) (to string, displaced bool, err error) {
	t := b.t
	if !validTrashID(id) {
		return "", false, badTrashID(id)
	}
	defer t.usageStep()()
	l := t.s.trashLock(t.user)
	l.Lock()
	defer l.Unlock()
	td, err := os.Open(t.s.trashPath(t.user))
	if err != nil {
		return "", false, fmt.Errorf("trash item %s: %w", id, fs.ErrNotExist)
	}
	defer td.Close()
	_, items, records, err := t.s.trashIDs(t.user)
	if err != nil {
		return "", false, err
	}
	if !items[id] {
		return "", false, fmt.Errorf("trash item %s: %w", id, fs.ErrNotExist)
	}
	rec, err := t.s.readRecord(t.user, id, records[id])
	if err != nil {
		return "", false, err
	}
	if rec.Kind == KindVersion {
		rec.Path = t.versionHome(rec.Path, t.s.itemInfo(td.Name(), id).FileID)
	}
	r := restoring{t: t, td: td, id: id, rec: rec}
	to, displaced, err = r.run()
	if err != nil {
		return "", false, fmt.Errorf("restore %s: %w", rec.Path, err)
	}
	return to, displaced, nil
}

// restoring is one Restore's work, under the user's usage step and trash
// lock.
type restoring struct {
	t   *Tree
	td  *os.File // the trash folder
	id  string
	rec trashRecord // its Size is what the item takes: a trashed item does not change
}

func (r restoring) run() (to string, displaced bool, err error) {
	t := r.t
	c := r.rec.Path
	// A version replaces the file at its path (if that is a file); a
	// deleted item, or a version whose path is now a folder, goes beside.
	cur, lerr := t.root.Lstat(c)
	exists := lerr == nil
	replace := r.rec.Kind == KindVersion && !r.rec.Dir && (!exists || cur.Mode().IsRegular())
	grow := r.rec.Size
	if replace && exists {
		grow -= cur.Size()
	}
	if err := t.overQuota(grow); err != nil {
		return "", false, err
	}
	created, err := t.makeParents(parent(c))
	if err != nil {
		return "", false, err
	}
	defer t.sizeChange()()
	dir, err := t.root.Open(parent(c))
	if err != nil {
		return "", false, err
	}
	defer dir.Close() // dropped: a directory's close after its sync loses nothing
	base := path.Base(c)
	if replace {
		to, err = r.replace(dir, base, exists)
	} else {
		to, err = r.beside(dir, base)
	}
	if err != nil {
		return "", false, err
	}
	t.account(grow)
	// Back in the tree: the record goes (a cut before that leaves a record
	// without item, dropped), the folders get their tags, then the syncs.
	os.Remove(filepath.Join(r.td.Name(), r.id+recordSuffix))
	t.touchUp(parent(to), grow)
	if err := r.td.Sync(); err != nil {
		return "", false, err
	}
	if err := dir.Sync(); err != nil {
		return "", false, err
	}
	for _, d := range created { // deepest first: each one's own entry
		if err := t.syncDir(parent(d)); err != nil {
			return "", false, err
		}
	}
	return to, replace && exists, nil
}

// replace puts a version in place of the file at base, keeping that file,
// if it exists, as a version first.
func (r restoring) replace(dir *os.File, base string, exists bool) (string, error) {
	t := r.t
	if exists && sameEntry(r.td, r.id, dir, base) {
		// The version is the current file itself: a cut fell between its
		// link and the rename that was to replace it. Restoring it is
		// dropping the extra link (a rename would do nothing).
		return r.rec.Path, unix.Unlinkat(int(r.td.Fd()), r.id, 0)
	}
	var kept string
	if exists {
		id, err := t.keepVersion(dir, base, r.rec.Path, true)
		if err != nil {
			return "", fmt.Errorf("keep the current file: %w", err)
		}
		kept = id
	}
	if err := unix.Renameat(int(r.td.Fd()), r.id, int(dir.Fd()), base); err != nil {
		if kept != "" {
			t.s.removeItem(t.user, kept)
		}
		return "", err
	}
	return r.rec.Path, nil
}

// sameEntry reports whether a in folder ad and b in folder bd are links
// to one inode.
func sameEntry(ad *os.File, a string, bd *os.File, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Fstatat(int(ad.Fd()), a, &sa, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		unix.Fstatat(int(bd.Fd()), b, &sb, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// beside puts a deleted item back at base, or, if that is taken, at the
// first free "NAME (restored N).EXT".
func (r restoring) beside(dir *os.File, base string) (string, error) {
	for n := 0; n < 1000; n++ {
		name := restoredName(base, n, r.rec.Dir)
		err := renameNoReplace(r.td, r.id, dir, name)
		if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) {
			continue
		}
		if err != nil {
			return "", err
		}
		return path.Join(parent(r.rec.Path), name), nil
	}
	return "", fmt.Errorf("no free name beside %s", r.rec.Path)
}

// renameNoReplace renames, failing with EEXIST if the target exists.
func renameNoReplace(from *os.File, old string, to *os.File, name string) error {
	err := unix.Renameat2(int(from.Fd()), old, int(to.Fd()), name, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	// A file system without RENAME_NOREPLACE: check, then rename.
	var st unix.Stat_t
	if unix.Fstatat(int(to.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EEXIST
	}
	return unix.Renameat(int(from.Fd()), old, int(to.Fd()), name)
}

// restoredName is base for n == 0, else "NAME (restored).EXT" (n == 1)
// or "NAME (restored N).EXT", cut to the 255 bytes a name may have. A
// folder's name is not split at a dot.
func restoredName(base string, n int, dir bool) string {
	if n == 0 {
		return base
	}
	stem, ext := base, ""
	if !dir {
		if e := path.Ext(base); e != base {
			stem, ext = strings.TrimSuffix(base, e), e
		}
	}
	mark := " (restored)"
	if n > 1 {
		mark = fmt.Sprintf(" (restored %d)", n)
	}
	for len(stem)+len(mark)+len(ext) > 255 && stem != "" {
		_, size := utf8.DecodeLastRuneInString(stem)
		stem = stem[:len(stem)-size]
	}
	return stem + mark + ext
}

// makeParents makes the folder c and those above it that are missing, and
// returns the ones it made, deepest first.
func (t *Tree) makeParents(c string) ([]string, error) {
	var missing []string
	for d := c; d != "."; d = parent(d) {
		if _, err := t.root.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if err := t.root.MkdirAll(c, 0o755); err != nil {
		return nil, err
	}
	for _, d := range missing {
		t.newFolder(d) // (without attributes, the inode number is the id)
	}
	return missing, nil
}
