// Package store is the users' files: one directory per user, reached only
// through os.Root, so no path, symlink or ".." a client sends can lead
// outside it, and written only through Uploads, which become visible when
// complete and on disk. WebDAV and SFTP both sit on it, so the two protocols
// cannot disagree about what a path means or when a file exists.
package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
	"golang.org/x/text/unicode/norm"

	"github.com/bonesync/bonesync/appliance/rights"
)

// Store is the directory holding one subdirectory per user, and .bonesync,
// the store's own: the staging folder for uploads in progress, the epoch
// of folder ETags (see meta.go) and the users' trash (trash.go).
type Store struct {
	beside  bool // OpenBeside's: the running mark is another process's
	dir     string
	own     string   // dir/.bonesync
	staging *os.File // dir/.bonesync/staging, where uploads are written
	epoch   [8]byte

	mu      sync.Mutex
	usage   map[string]*usage // by user
	keep    time.Duration     // the trash policy (purge.go)
	reserve int64

	purgeMu sync.Mutex            // one purge at a time
	free    func() (int64, error) // the disk's free space; tests replace it

	seen   sightings // where listings saw file ids (ids.go)
	mounts Mounts    // the shares users receive (mounts.go)
	quotas func(user string) int64

	heldMu sync.Mutex // what the trash holds, as last counted (trashHeld)
	held   int64
	heldAt time.Time
}

const ownDir = ".bonesync"

// Open returns the store at dir, creating it (0700) if needed. If the last
// process to open it did not Close it (a crash, a power cut), the epoch of
// folder ETags is renewed, so every sync client walks its tree again once:
// a change that landed without its folder tags is found that way.
func Open(dir string) (*Store, error) {
	s := &Store{dir: dir, own: filepath.Join(dir, ownDir)}
	s.free = func() (int64, error) { _, free, err := diskSpace(dir); return free, err }
	if err := os.MkdirAll(filepath.Join(s.own, "staging"), 0o700); err != nil {
		return nil, fmt.Errorf("file store %s: %w", dir, err)
	}
	var err error
	if s.staging, err = os.Open(filepath.Join(s.own, "staging")); err != nil {
		return nil, fmt.Errorf("file store %s: %w", dir, err)
	}
	running := filepath.Join(s.own, "running")
	_, err = os.Stat(running)
	unclean := err == nil
	// An epoch that cannot be read is made anew, as after an unclean stop.
	epoch, readErr := os.ReadFile(filepath.Join(s.own, "epoch"))
	if unclean || readErr != nil || len(epoch) != len(s.epoch) {
		rand.Read(s.epoch[:])
		if err := writeSynced(filepath.Join(s.own, "epoch"), s.epoch[:]); err != nil {
			return nil, fmt.Errorf("file store %s: %w", dir, err)
		}
	} else {
		copy(s.epoch[:], epoch)
	}
	if err := writeSynced(running, nil); err != nil {
		return nil, fmt.Errorf("file store %s: %w", dir, err)
	}
	return s, nil
}

// OpenBeside opens the store at dir for a second process while the
// server may hold it (bonesync copy run and restore): it takes the epoch
// of folder ETags as it is and neither writes nor removes the running
// mark, which is the server's. Writes through it keep the files'
// records and folder tags on the disk; the server's counts of usage learn
// of them at its next start.
func OpenBeside(dir string) (*Store, error) {
	s := &Store{dir: dir, own: filepath.Join(dir, ownDir), beside: true}
	s.free = func() (int64, error) { _, free, err := diskSpace(dir); return free, err }
	if err := os.MkdirAll(filepath.Join(s.own, "staging"), 0o700); err != nil {
		return nil, fmt.Errorf("file store %s: %w", dir, err)
	}
	var err error
	if s.staging, err = os.Open(filepath.Join(s.own, "staging")); err != nil {
		return nil, fmt.Errorf("file store %s: %w", dir, err)
	}
	epoch, err := os.ReadFile(filepath.Join(s.own, "epoch"))
	switch {
	case err == nil && len(epoch) == len(s.epoch):
		copy(s.epoch[:], epoch)
	case errors.Is(err, fs.ErrNotExist): // a store nobody opened yet
		rand.Read(s.epoch[:])
		if err := writeSynced(filepath.Join(s.own, "epoch"), s.epoch[:]); err != nil {
			return nil, fmt.Errorf("file store %s: %w", dir, err)
		}
	default:
		return nil, fmt.Errorf("file store %s: its epoch is unreadable (%v): start the server once", dir, err)
	}
	return s, nil
}

// Close marks a clean stop: the next Open keeps the folder ETags. (A
// store opened beside the server leaves the mark alone.)
func (s *Store) Close() error {
	s.staging.Close()
	if s.beside {
		return nil
	}
	return os.Remove(filepath.Join(s.own, "running"))
}

// writeSynced writes a small file of the store's own and makes it durable.
func writeSynced(name string, b []byte) error {
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer d.Close() // dropped: a directory's close after its sync loses nothing
	return d.Sync()
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// OwnDir is a folder of the store's own, .bonesync/NAME, for what is kept
// beside the files: made from them (the previews) or about them (the
// favourites). It is made if needed; no protocol lists it and no quota
// counts it. The store's own names (staging, trash, chunks...) are
// refused.
func (s *Store) OwnDir(name string) (string, error) {
	switch name {
	case "", "staging", "trash", "chunks", "running", "epoch", "nfc":
		return "", fmt.Errorf("%q is not a folder of the store's to give", name)
	}
	if strings.ContainsAny(name, "/.\\") {
		return "", fmt.Errorf("bad folder name %q", name)
	}
	dir := filepath.Join(s.own, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("file store's %s: %w", name, err)
	}
	return dir, nil
}

// Tree opens the named user's directory, creating it if needed. The caller
// must Close it.
func (s *Store) Tree(user string) (*Tree, error) { return s.tree(user, true) }

// tree opens a user's tree, with the shares they receive if withMounts.
func (s *Store) tree(user string, withMounts bool) (*Tree, error) {
	if !validUser(user) {
		return nil, fmt.Errorf("bad user name %q", user)
	}
	dir := filepath.Join(s.dir, user)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("user directory %s: %w", dir, err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open user directory %s: %w", dir, err)
	}
	t := &Tree{root: r, user: user, s: s}
	if withMounts {
		t.loadMounts()
	}
	return t, nil
}

// RemoveStaleUploads deletes the uploads that a crash or a power cut
// interrupted: everything in the staging folder, and the temporary files
// that versions before it left beside their targets. Nothing acknowledged
// is in them. Call it once at start, before serving.
func (s *Store) RemoveStaleUploads() error {
	names, err := s.staging.Readdirnames(-1)
	if err != nil {
		return err
	}
	s.staging.Seek(0, 0)
	for _, n := range names {
		unix.Unlinkat(int(s.staging.Fd()), n, 0)
	}
	s.ExpireChunks()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		t, err := s.Tree(e.Name())
		if err != nil {
			return err
		}
		t.removeStaleUploads(".")
		t.Close()
	}
	return nil
}

// Tree is one user's directory. Every method takes a client path: "/a/b",
// "a/b" and "" all mean paths within the tree; nothing can name anything
// outside it.
type Tree struct {
	root  *os.Root
	user  string // whose files: for a share, the owner's
	s     *Store
	quota int64
	ctx   context.Context // SetContext's: ends long work

	// A user's own tree: the shares they receive at its top, opened, by
	// mount id (mounts.go), and the top's inode.
	subs   map[string]*Tree
	topIno uint64

	// A share's tree: where it is in the owner's tree, what may be done in
	// it, the one file it holds (a shared file), and the owner's whole
	// tree, for what is kept above it (folder tags and sizes, the usage).
	prefix string
	perm   rights.Set
	only   string
	home   *Tree
}

// Close releases the tree.
func (t *Tree) Close() error {
	t.closeMounts()
	if t.home != nil {
		t.home.Close()
	}
	return t.root.Close()
}

// ErrBadName is returned for a path that no client should send: one that
// is not UTF-8, or with a NUL, a control character or a backslash in it,
// or naming an upload's temporary file.
var ErrBadName = errors.New("invalid file name")

// Clean turns a client path into a path relative to the tree: "." for the
// top, never starting with "/" or "..". Cleaning is lexical ("a/../b" is "b",
// and "/../.." is "."); os.Root then refuses symlinks that lead out. Names
// are put in Unicode normal form C, as Windows and Linux write them, so a
// name that macOS sends decomposed (NFD) reaches the same file.
func Clean(p string) (string, error) {
	if !utf8.ValidString(p) {
		// A name XML cannot carry: no listing could show it.
		return "", fmt.Errorf("%q: not UTF-8: %w", p, ErrBadName)
	}
	p = norm.NFC.String(p)
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "", fmt.Errorf("%q: %w", p, ErrBadName)
		}
	}
	c := path.Clean("/" + p)[1:]
	if c == "" {
		return ".", nil
	}
	for _, part := range strings.Split(c, "/") {
		if isUploadTemp(part) {
			return "", fmt.Errorf("%q: %w", p, ErrBadName)
		}
	}
	return c, nil
}

func (t *Tree) clean(p string) (string, error) { return Clean(p) }

// Stat describes the named file, following symlinks that stay inside.
func (t *Tree) Stat(p string) (fs.FileInfo, error) {
	t, c, err := t.at(p, rights.Read)
	if err != nil {
		return nil, err
	}
	return t.root.Stat(c)
}

// Lstat describes the named file without following a final symlink.
func (t *Tree) Lstat(p string) (fs.FileInfo, error) {
	t, c, err := t.at(p, rights.Read)
	if err != nil {
		return nil, err
	}
	return t.root.Lstat(c)
}

// Open opens the named file or directory for reading.
func (t *Tree) Open(p string) (File, error) { return file(t.open(p)) }

func (t *Tree) open(p string) (*os.File, error) {
	t, c, err := t.at(p, rights.Read)
	if err != nil {
		return nil, err
	}
	return t.root.Open(c)
}

// Mkdir makes a directory.
func (t *Tree) Mkdir(p string) error {
	t, c, err := t.at(p, rights.Create)
	if err != nil {
		return err
	}
	if c == "." || t.only != "" {
		return fs.ErrExist
	}
	if err := t.root.Mkdir(c, 0o755); err != nil {
		return noSpace(err)
	}
	if err := t.newFolder(c); err != nil && !errors.Is(err, unix.ENOTSUP) {
		t.root.Remove(c)
		return noSpace(err)
	}
	t.touchUp(parent(c), 0)
	return t.syncDir(parent(c))
}

// Remove removes a file or an empty directory. With the trash on (see
// SetTrashPolicy), a file or symlink is moved to the trash instead.
func (t *Tree) Remove(p string) error {
	if m, ok := t.MountAt(p); ok {
		return t.leave(m)
	}
	t, c, err := t.at(p, rights.Delete)
	if err != nil {
		return err
	}
	if c == "." || t.only != "" {
		return fs.ErrPermission // a share's top: left by its recipient, above
	}
	defer t.usageStep()()
	var freed int64
	fi, err := t.root.Lstat(c)
	if err == nil && fi.Mode().IsRegular() {
		freed = fi.Size()
	}
	return t.drop(c, freed, err == nil && !fi.IsDir(), t.root.Remove)
}

// drop moves c, which holds freed bytes of files, to the trash (if trash
// and the trash takes it) or else removes it with remove; then counts it
// out of the usage, tags the folders above and makes it durable.
func (t *Tree) drop(c string, freed int64, trash bool, remove func(string) error) error {
	defer t.sizeChange()()
	gone := false
	var err error
	if trash {
		if gone, err = t.discard(c, freed); !gone && err != nil {
			return err
		}
	}
	if !gone {
		if err = remove(c); err != nil {
			return err
		}
	}
	t.account(-freed)
	t.touchUp(parent(c), -freed)
	if err != nil {
		return err // moved to the trash, but not durably
	}
	return t.syncDir(parent(c))
}

// RemoveAll removes a file or a directory and everything in it. The top of
// the tree cannot be removed. With the trash on, what is removed goes to
// the trash (an empty directory is simply removed).
func (t *Tree) RemoveAll(p string) error {
	if m, ok := t.MountAt(p); ok {
		return t.leave(m)
	}
	t, c, err := t.at(p, rights.Delete)
	if err != nil {
		return err
	}
	if c == "." || t.only != "" {
		return fs.ErrPermission
	}
	if _, err := t.root.Lstat(c); err != nil {
		return err
	}
	defer t.usageStep()()
	freed, _ := t.sizeOf(c)
	return t.drop(c, freed, true, func(c string) error {
		err := t.root.RemoveAll(c)
		if err != nil { // part of it went: counted again when next asked
			t.s.forgetUsage(t.user)
			t.unsize(parent(c))
		}
		return err
	})
}

// Rename moves oldp to newp, replacing a file at newp. With the trash on,
// the file replaced is kept as a version of newp.
func (t *Tree) Rename(oldp, newp string) error {
	if m, ok := t.MountAt(oldp); ok {
		n, err := t.clean(newp)
		if err != nil {
			return err
		}
		return t.renameMount(m, n)
	}
	from, o, err := t.at(oldp, rights.Delete)
	if err != nil {
		return err
	}
	to, n, err := t.atWrite(newp)
	if err != nil {
		return err
	}
	if from != to {
		return &fs.PathError{Op: "rename", Path: oldp, Err: errCrossMount}
	}
	t = from
	if o == "." || n == "." || t.only != "" {
		return fs.ErrPermission
	}
	unlock := t.usageStep()
	var replaced, moved int64
	var version string
	if fi, err := t.root.Lstat(o); err == nil && fi.Mode().IsRegular() {
		moved = fi.Size()
	} else if err == nil && fi.IsDir() {
		moved, _ = t.folderSize(o)
	}
	if fi, err := t.root.Lstat(n); err == nil && fi.Mode().IsRegular() {
		replaced = fi.Size()
		if ofi, err := t.root.Lstat(o); err == nil && !os.SameFile(fi, ofi) {
			if dir, err := t.root.Open(parent(n)); err == nil {
				version = t.versionBeforeReplace(dir, n)
				dir.Close()
			}
		}
	}
	sized := t.sizeChange()
	defer sized()
	err = t.root.Rename(o, n)
	if err == nil {
		t.account(-replaced)
	} else {
		t.dropVersion(version)
	}
	unlock()
	if err != nil {
		return err
	}
	if version != "" {
		defer t.s.keepReserve() // the replaced file's space was not freed
	}
	if parent(o) == parent(n) {
		t.touchUp(parent(n), -replaced)
	} else {
		t.touchUp(parent(n), moved-replaced)
		t.touchUp(parent(o), -moved)
	}
	if err := t.syncDir(parent(n)); err != nil {
		return err
	}
	if parent(o) != parent(n) {
		return t.syncDir(parent(o))
	}
	return nil
}

// ReadDir lists a directory, leaving out uploads in progress.
func (t *Tree) ReadDir(p string) ([]fs.FileInfo, error) {
	f, err := t.open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.Readdir(-1)
	if err != nil {
		return nil, err
	}
	if t.isTop(f) { // a share is listed as what it shares
		out := entries[:0]
		for _, e := range entries {
			if m, ok := t.mountOf(e.Name()); ok {
				in, err := t.mountInfo(m)
				if err != nil {
					continue // gone: not listed
				}
				e = in
			}
			out = append(out, e)
		}
		entries = out
	}
	return visible(entries), nil
}

// IsInternal reports whether a name in a user's folder is the store's own
// (an upload's temporary file, as versions before the staging folder left
// them), never to be listed.
func IsInternal(name string) bool { return isUploadTemp(name) }

// visible drops the temporary files of uploads in progress from a listing.
func visible(entries []fs.FileInfo) []fs.FileInfo {
	out := entries[:0]
	for _, e := range entries {
		if !isUploadTemp(e.Name()) {
			out = append(out, e)
		}
	}
	return out
}

func (t *Tree) syncDir(c string) error {
	d, err := t.root.Open(c)
	if err != nil {
		return err
	}
	defer d.Close() // dropped: a directory's close after its sync loses nothing
	return d.Sync()
}

// chunksKept is how long the parts of a chunked upload wait for the rest,
// as on a Nextcloud server: a client can resume within it.
const chunksKept = 24 * time.Hour

// ExpireChunks removes the chunked uploads nobody touched for a day.
func (s *Store) ExpireChunks() {
	before := time.Now().Add(-chunksKept)
	users, _ := os.ReadDir(filepath.Join(s.own, "chunks"))
	for _, u := range users {
		dir := filepath.Join(s.own, "chunks", u.Name())
		transfers, _ := os.ReadDir(dir)
		for _, t := range transfers {
			if fi, err := t.Info(); err == nil && fi.ModTime().Before(before) {
				os.RemoveAll(filepath.Join(dir, t.Name()))
			}
		}
	}
}

// forgetUsage makes the next Usage count the user's files again.
func (s *Store) forgetUsage(user string) {
	u := s.usageOf(user)
	u.mu.Lock()
	u.known = false
	u.mu.Unlock()
}

// Chunks opens, creating it if needed, the folder where user's chunked
// uploads collect their parts before they are assembled into the tree
// (Nextcloud's uploads/USER). It is outside the tree: no file protocol
// lists it. The caller must Close it.
func (s *Store) Chunks(user string) (*os.Root, error) {
	if !validUser(user) {
		return nil, fmt.Errorf("bad user name %q", user)
	}
	dir := filepath.Join(s.own, "chunks", user)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("chunked uploads of %s: %w", user, err)
	}
	return os.OpenRoot(dir)
}

// NormaliseNames renames, in every user's tree, the files and folders whose
// names are not in Unicode NFC (written before the store normalised names,
// or put there from outside it) to their NFC spelling, so that Clean's
// lookups reach them. A name whose NFC spelling is taken is left and
// reported. It runs once per store (files/.bonesync/nfc marks it done);
// call it at start, before serving.
func (s *Store) NormaliseNames() (renamed int, problems []string) {
	marker := filepath.Join(s.own, "nfc")
	if _, err := os.Stat(marker); err == nil {
		return 0, nil
	}
	users, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, []string{err.Error()}
	}
	for _, u := range users {
		if !u.IsDir() || strings.HasPrefix(u.Name(), ".") {
			continue
		}
		root := filepath.Join(s.dir, u.Name())
		var odd []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && p != root && !norm.NFC.IsNormalString(d.Name()) {
				odd = append(odd, p)
			}
			return nil
		})
		// Deepest first, so a folder's new name does not break the paths
		// of what is inside it.
		sort.Slice(odd, func(i, j int) bool { return strings.Count(odd[i], "/") > strings.Count(odd[j], "/") })
		for _, p := range odd {
			to := filepath.Join(filepath.Dir(p), norm.NFC.String(filepath.Base(p)))
			if _, err := os.Lstat(to); err == nil {
				problems = append(problems, fmt.Sprintf("%s: its NFC spelling %s exists too; left as it is", p, filepath.Base(to)))
				continue
			}
			if err := os.Rename(p, to); err != nil {
				problems = append(problems, err.Error())
				continue
			}
			renamed++
		}
	}
	if len(problems) == 0 {
		writeSynced(marker, nil)
	}
	return renamed, problems
}
