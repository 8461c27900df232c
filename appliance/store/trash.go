package store

// Trash and versions.
//
// A file or folder deleted through the store, and the old content of a
// file an upload or a rename replaces, is kept for a while in the user's
// trash, STORE/.bonesync/trash/USER, outside the tree: no protocol lists
// it and no quota counts it. Each item is the trashed file or folder
// itself, moved there by a rename (a deletion) or hard-linked there just
// before the new file is renamed over it (a version), so nothing is copied
// and a version keeps its inode's attributes (date, digests, file id).
// Beside it, ID.json records where it came from.
//
// The steps, in order: the record is written and synced (writeSynced);
// the item is moved or linked in; the trash folder and the item's old
// folder are synced. A power cut can therefore leave a record without its
// item (the delete had not happened: the file is still in the tree), which
// the next listing drops, but never an item without a record; should one
// appear all the same (a record lost by hand), it is listed as a deletion
// from recovered/ID.
//
// IDs sort by time: 16 hex digits of the Unix time in nanoseconds, a dash
// and 8 random hex digits. The oldest items are purged first (purge.go).

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/state"
)

// Kinds of trash items.
const (
	KindDeleted = "deleted" // deleted: restored to its path, or beside it if that is taken
	KindVersion = "version" // the content a file had before it was replaced
)

// TrashItem is a deleted file or folder, or an old version of a file.
type TrashItem struct {
	ID      string    // names the item in OpenTrash, Restore and DeleteTrash
	Path    string    // where it was in the tree, cleaned ("docs/a.txt")
	Kind    string    // KindDeleted or KindVersion
	At      time.Time // when it was deleted or replaced
	ModTime time.Time // its own modification time
	Size    int64     // bytes; for a folder, of all the files in it
	Dir     bool
	FileID  uint64 // the id it had in the tree (a version: the file's)
	ETag    string // the ETag it had in the tree
}

// trashRecord is ID.json.
type trashRecord struct {
	Path    string    `json:"path"`
	Kind    string    `json:"kind"`
	Size    int64     `json:"size"`
	Dir     bool      `json:"dir"`
	ModTime time.Time `json:"mtime"`
}

const recordSuffix = ".json"

// newTrashID is an ID for an item trashed at.
func newTrashID(at time.Time) string {
	var rnd [4]byte
	rand.Read(rnd[:])
	return fmt.Sprintf("%016x-%s", at.UnixNano(), hex.EncodeToString(rnd[:]))
}

// validTrashID reports whether id has the form newTrashID gives: nothing
// else (no "/", no "..", no record or temporary name) is ever opened.
func validTrashID(id string) bool {
	if len(id) != 16+1+8 || id[16] != '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if i != 16 && !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// trashIDTime is the time an ID was made at.
func trashIDTime(id string) time.Time {
	n, _ := strconv.ParseUint(id[:16], 16, 64)
	return time.Unix(0, int64(n))
}

func badTrashID(id string) error { return fmt.Errorf("trash item %q: %w", id, ErrBadName) }

// trashLock serialises the changes to user's trash folder, so that a
// listing or a purge never finds a record whose item is still on its way.
func (s *Store) trashLock(user string) *sync.Mutex { return &s.usageOf(user).trash }

func (s *Store) trashPath(user string) string { return filepath.Join(s.own, "trash", user) }

// openTrash opens user's trash folder, creating it (durably) if needed.
func (s *Store) openTrash(user string) (*os.File, error) {
	dir := s.trashPath(user)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("trash of %s: %w", user, err)
		}
		for _, d := range []string{filepath.Dir(dir), s.own} {
			if err := state.SyncDir(d); err != nil {
				return nil, fmt.Errorf("trash of %s: %w", user, err)
			}
		}
	}
	return os.Open(dir)
}

// trashMove puts the entry base of the open folder dir into the user's
// trash folder td under rec: the record first, synced, then the entry,
// renamed there (link false) or hard-linked there (link true), then a sync
// of the trash folder. If the entry cannot be moved, the record is removed
// again. It returns the item's ID once the entry is moved, even if the
// sync then fails. The caller holds the user's trash lock and syncs dir.
func (t *Tree) trashMove(td, dir *os.File, base string, rec trashRecord, link bool) (string, error) {
	id := newTrashID(time.Now()) // the ID holds when it was trashed
	b, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	record := filepath.Join(td.Name(), id+recordSuffix)
	if err := writeSynced(record, b); err != nil {
		return "", fmt.Errorf("trash record for %s: %w", rec.Path, err)
	}
	if link {
		err = unix.Linkat(int(dir.Fd()), base, int(td.Fd()), id, 0)
	} else {
		err = unix.Renameat(int(dir.Fd()), base, int(td.Fd()), id)
	}
	if err != nil {
		os.Remove(record)
		return "", fmt.Errorf("move %s to the trash: %w", rec.Path, err)
	}
	return id, td.Sync()
}

// recordOf describes the entry base of dir, at c in the tree, for the
// trash, with its file type (unix.S_IFMT bits); size is what the caller
// measured for a folder.
func recordOf(dir *os.File, base, c, kind string, size int64) (trashRecord, uint32, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return trashRecord{}, 0, &fs.PathError{Op: "stat", Path: c, Err: err}
	}
	typ := st.Mode & unix.S_IFMT
	rec := trashRecord{Path: c, Kind: kind, Size: size,
		Dir: typ == unix.S_IFDIR, ModTime: time.Unix(st.Mtim.Unix())}
	if typ == unix.S_IFREG {
		rec.Size = st.Size
	}
	return rec, typ, nil
}

// discard deletes c into the trash, if the trash is on: a file or symlink,
// or a folder that is not empty (size is what its files take), is moved
// there; an empty folder is simply removed. gone is false when the caller
// must delete c itself: the trash is off, or cannot take c (the disk has
// no room even for its record, or c is on another file system).
func (t *Tree) discard(c string, size int64) (gone bool, err error) {
	if !t.s.trashOn() {
		return false, nil
	}
	dir, err := t.root.Open(parent(c))
	if err != nil {
		return false, err
	}
	defer dir.Close()
	base := path.Base(c)
	rec, _, err := recordOf(dir, base, t.full(c), KindDeleted, size)
	if err != nil {
		return false, err
	}
	if rec.Dir {
		err := unix.Unlinkat(int(dir.Fd()), base, unix.AT_REMOVEDIR)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
			return false, &fs.PathError{Op: "remove", Path: c, Err: err}
		}
	}
	id, err := t.toTrash(dir, base, rec, false, false)
	switch {
	case id != "":
		return true, err // in the trash, maybe not yet durably
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EXDEV):
		return false, nil // a delete must work on a full disk: it is then final
	}
	return false, err
}

// toTrash is trashMove with the trash folder opened (and the user's trash
// lock taken unless locked).
func (t *Tree) toTrash(dir *os.File, base string, rec trashRecord, link, locked bool) (string, error) {
	if !locked {
		l := t.s.trashLock(t.user)
		l.Lock()
		defer l.Unlock()
	}
	td, err := t.s.openTrash(t.user)
	if err != nil {
		return "", err
	}
	defer td.Close()
	return t.trashMove(td, dir, base, rec, link)
}

// keepVersion hard-links the regular file base of the open folder dir (c
// in the tree) into the trash as a version of c, just before something
// replaces it. It returns the item's ID, or "" if there was nothing to
// keep (no file, not a regular file, the trash off). The caller holds the
// user's usage step, and the user's trash lock if locked is true.
func (t *Tree) keepVersion(dir *os.File, base, c string, locked bool) (string, error) {
	rec, typ, err := recordOf(dir, base, t.full(c), KindVersion, 0)
	if err != nil || typ != unix.S_IFREG {
		return "", nil // nothing (or no file) to keep
	}
	return t.toTrash(dir, base, rec, true, locked)
}

// versionBeforeReplace keeps the file at c as a version, if the trash is
// on, before an upload or a rename replaces it. Failing to keep it is no
// reason to refuse the change the client asked for (a version is history,
// the new content is what the client was promised), so an error only
// means there is no version: the ID is "".
func (t *Tree) versionBeforeReplace(dir *os.File, c string) string {
	if !t.s.trashOn() {
		return ""
	}
	id, _ := t.keepVersion(dir, path.Base(c), c, false) // see above: no version, no failure
	return id
}

// dropVersion removes an item trashed for a replacement that then did not
// happen: the file it copies is still in place. Should the removal fail,
// the item is only a needless version, which the purge takes in time.
func (t *Tree) dropVersion(id string) {
	if id == "" {
		return
	}
	l := t.s.trashLock(t.user)
	l.Lock()
	defer l.Unlock()
	t.s.removeItem(t.user, id)
}

// Bin is a tree's trash: its deleted files and folders and its files'
// old versions, which it lists, opens, restores and removes by the IDs
// Items gives.
type Bin struct{ t *Tree }

// Bin is the tree's trash.
func (t *Tree) Bin() Bin { return Bin{t} }

// Items lists the user's deleted files and folders and old versions,
// newest first. Records whose item is missing (a power cut before the
// move) are dropped; an item without a record is listed, and recorded, as
// deleted from recovered/ID.
func (b Bin) Items() ([]TrashItem, error) {
	t := b.t
	l := t.s.trashLock(t.user)
	l.Lock()
	defer l.Unlock()
	return t.s.loadTrash(t.user)
}

// HistoryOf is the tree whose trash holds the versions of the file p, once
// need is allowed at p: this one for one's own files, the owner's whole
// tree for a file in a share (Versions lists them). The caller uses it
// only for the ids Versions gave, and does not close it.
func (t *Tree) HistoryOf(p string, need rights.Set) (*Tree, error) {
	tt, _, err := t.at(p, need)
	if err != nil {
		return nil, err
	}
	if tt.home != nil {
		return tt.home, nil
	}
	return tt, nil
}

// Versions lists the old versions of the file at p, newest first: those
// with its file id, which it keeps when renamed, and those made at its
// path (a file another was renamed over, as editors and rsync save).
func (b Bin) Versions(p string) ([]TrashItem, error) {
	t := b.t
	t, c, err := t.at(p, rights.Read) // a share's: the owner's versions
	if err != nil {
		return nil, err
	}
	f, err := t.root.Open(c)
	if err != nil {
		return nil, err
	}
	in, err := t.s.info(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	all, err := t.Bin().Items() // the owner's, for a share
	if err != nil {
		return nil, err
	}
	var out []TrashItem
	for _, it := range all {
		if it.Kind == KindVersion && (it.FileID == in.FileID || it.Path == t.full(c)) {
			out = append(out, it)
		}
	}
	return out, nil
}

// versionHome is where the version id of the file once at c goes back to:
// c, unless the file with the version's id is now elsewhere.
func (t *Tree) versionHome(c string, id uint64) string {
	if in, err := t.Info(c); err == nil && in.FileID == id {
		return c
	}
	if p, in, err := t.Find(id); err == nil && in.Mode().IsRegular() {
		return p[1:]
	}
	return c
}

// itemInfo describes the trash item id in dir as it was in the tree: its
// file id and ETag (a folder's is its own now).
func (s *Store) itemInfo(dir, id string) Info {
	name := filepath.Join(dir, id)
	fi, err := os.Lstat(name)
	if err != nil {
		return Info{}
	}
	return s.describe(fi, pathXattrs(name))
}

// trashIDs lists the IDs in user's trash folder, from items and records
// alike, oldest first; items and records are which of them exist.
func (s *Store) trashIDs(user string) (ids []string, items, records map[string]bool, err error) {
	entries, err := os.ReadDir(s.trashPath(user))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("trash of %s: %w", user, err)
	}
	items, records = map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		switch id, ok := strings.CutSuffix(name, recordSuffix); {
		case validTrashID(name):
			items[name] = true
		case ok && validTrashID(id):
			records[id] = true
		}
	}
	for id := range items {
		ids = append(ids, id)
	}
	for id := range records {
		if !items[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, items, records, nil
}

// loadTrash reads user's trash, newest first, mending what a power cut
// left (see Trash). The caller holds the user's trash lock.
func (s *Store) loadTrash(user string) ([]TrashItem, error) {
	ids, items, records, err := s.trashIDs(user)
	if err != nil || ids == nil {
		return nil, err
	}
	dir := s.trashPath(user)
	// A record's temporary file, from a cut during writeSynced.
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*"+recordSuffix+".tmp")); len(tmps) > 0 {
		for _, tmp := range tmps {
			os.Remove(tmp)
		}
	}
	out := make([]TrashItem, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		if !items[id] {
			os.Remove(filepath.Join(dir, id+recordSuffix))
			continue
		}
		rec, err := s.readRecord(user, id, records[id])
		if err != nil {
			return nil, err
		}
		in := s.itemInfo(dir, id)
		out = append(out, TrashItem{ID: id, Path: rec.Path, Kind: rec.Kind, At: trashIDTime(id),
			ModTime: rec.ModTime, Size: rec.Size, Dir: rec.Dir, FileID: in.FileID, ETag: in.ETag})
	}
	return out, nil
}

// readRecord reads the record of the item id; an item without one (or
// with one that does not parse) is adopted: described, recorded as
// deleted from recovered/ID, and returned so.
func (s *Store) readRecord(user, id string, hasRecord bool) (trashRecord, error) {
	dir := s.trashPath(user)
	var rec trashRecord
	if hasRecord {
		b, err := os.ReadFile(filepath.Join(dir, id+recordSuffix))
		if err == nil && json.Unmarshal(b, &rec) == nil && (rec.Kind == KindDeleted || rec.Kind == KindVersion) {
			if c, err := Clean(rec.Path); err == nil && c != "." {
				rec.Path = c
				return rec, nil
			}
		}
	}
	fi, err := os.Lstat(filepath.Join(dir, id))
	if err != nil {
		return rec, fmt.Errorf("trash of %s: %w", user, err)
	}
	rec = trashRecord{Path: "recovered/" + id, Kind: KindDeleted,
		Size: itemSize(dir, id), Dir: fi.IsDir(), ModTime: fi.ModTime()}
	if b, err := json.Marshal(rec); err == nil {
		writeSynced(filepath.Join(dir, id+recordSuffix), b) // if it fails, it is adopted again next time
	}
	return rec, nil
}

// itemSize adds up the regular files of trash item id in dir.
func itemSize(dir, id string) int64 {
	n, _ := FilesSize(os.DirFS(dir), id)
	return n
}

// Open opens a trashed file for reading (a download or a preview).
// A folder, a symlink or an ID that is not one Items lists is refused.
func (b Bin) Open(id string) (File, error) {
	t := b.t
	if !validTrashID(id) {
		return nil, badTrashID(id)
	}
	name := filepath.Join(t.s.trashPath(t.user), id)
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "trash item " + id, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil && fi.IsDir() {
			err = syscall.EISDIR // a folder is restored, not read
		} else if err == nil {
			err = syscall.EINVAL
		}
		return nil, &fs.PathError{Op: "open", Path: "trash item " + id, Err: err}
	}
	return f, nil
}

// Root opens a trashed folder, to list and read what it holds; the
// caller closes it. Nothing outside the item can be reached through it.
func (b Bin) Root(id string) (*os.Root, error) {
	t := b.t
	if !validTrashID(id) {
		return nil, badTrashID(id)
	}
	r, err := os.OpenRoot(filepath.Join(t.s.trashPath(t.user), id))
	if err != nil {
		return nil, fmt.Errorf("trash item %s: %w", id, err)
	}
	return r, nil
}

// Delete removes an item from the trash for good.
func (b Bin) Delete(id string) error {
	t := b.t
	if !validTrashID(id) {
		return badTrashID(id)
	}
	l := t.s.trashLock(t.user)
	l.Lock()
	defer l.Unlock()
	_, items, records, err := t.s.trashIDs(t.user)
	if err != nil {
		return err
	}
	if !items[id] && !records[id] {
		return fmt.Errorf("trash item %s: %w", id, fs.ErrNotExist)
	}
	if _, err := t.s.removeItem(t.user, id); err != nil {
		return err
	}
	return state.SyncDir(t.s.trashPath(t.user))
}

// Empty removes the items of the kind given (KindDeleted,
// KindVersion; "": all of them) from the user's trash for good.
func (b Bin) Empty(kind string) error {
	t := b.t
	l := t.s.trashLock(t.user)
	l.Lock()
	defer l.Unlock()
	ids, _, _, err := t.s.trashIDs(t.user)
	if err != nil || ids == nil {
		return err
	}
	if kind != "" {
		items, err := t.s.loadTrash(t.user)
		if err != nil {
			return err
		}
		ids = ids[:0]
		for _, it := range items {
			if it.Kind == kind {
				ids = append(ids, it.ID)
			}
		}
	}
	var errs []error
	for _, id := range ids {
		if _, err := t.s.removeItem(t.user, id); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, state.SyncDir(t.s.trashPath(t.user)))
	return errors.Join(errs...)
}

// removeItem deletes a trash item and then its record (the other way
// round, a cut could leave an item without a record, to be adopted). It
// returns the bytes the item held, as recorded. The caller holds the
// user's trash lock.
func (s *Store) removeItem(user, id string) (int64, error) {
	dir := s.trashPath(user)
	item := filepath.Join(dir, id)
	var size int64
	if _, err := os.Lstat(item); err == nil {
		size = s.recordedSize(user, id, true)
	}
	if err := os.RemoveAll(item); err != nil {
		return 0, fmt.Errorf("trash of %s: %w", user, err)
	}
	if err := os.Remove(filepath.Join(dir, id+recordSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return size, fmt.Errorf("trash of %s: %w", user, err)
	}
	return size, nil
}

// recordedSize is the size an item's record gives, or, without a record,
// what the item takes.
func (s *Store) recordedSize(user, id string, hasRecord bool) int64 {
	dir := s.trashPath(user)
	if hasRecord {
		var rec trashRecord
		if b, err := os.ReadFile(filepath.Join(dir, id+recordSuffix)); err == nil && json.Unmarshal(b, &rec) == nil {
			return rec.Size
		}
	}
	return itemSize(dir, id)
}
