package store

// Shares: another user's file or folder in a user's tree.
//
// A share a user receives is mounted at the top of their tree under a
// name of their own (Mount, kept by package shares, which the store asks:
// Mounts). Every path through the tree is resolved by at(): a path whose
// first name is a mount's goes to the owner's tree, confined to the shared
// folder by an os.Root opened on it (so no "..", no symlink, can lead out
// of it into the rest of the owner's files) or, for a shared file, to that
// one file; and the share's permissions are checked there, by every
// protocol alike, since they all go through the store. What is done there
// is the owner's: their quota, their trash and versions, their folders'
// tags and sizes, up to the top of their tree, so their own sync clients
// see it. A public link's tree (Shared) is the same, without a recipient.
//
// The recipient's tree holds an empty folder under each mount's name, so
// that listings of its top show the share; its description is the shared
// item's. Removing it leaves the share, renaming it renames the mount.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/bonesync/bonesync/appliance/rights"
)

// Mount is a share as its recipient sees it: the file or folder FileID of
// Owner's tree, last seen at Path, at the top of the recipient's tree as
// Name.
type Mount struct {
	ID     string
	Name   string
	Owner  string
	FileID uint64
	Path   string
	Perm   rights.Set
}

// Mounts are the shares the users receive (package shares). They are
// asked at each use, so a share revoked or changed is so at once, even
// for an SFTP session that stays open.
type Mounts interface {
	// Mounts are the shares user receives.
	Mounts(user string) []Mount
	// Mount is the share user receives under name, if any.
	Mount(user, name string) (Mount, bool)
	// Renamed says user gave the mount id a new name.
	Renamed(user, id, name string) error
	// Left says user removed the mount id: they leave the share.
	Left(user, id string) error
}

// errCrossMount is returned for a rename between a user's files and a
// share, or between two shares: a copy and a delete do it.
var errCrossMount = errors.New("a rename cannot cross into or out of a share")

// SetMounts gives the store the shares the users receive, and the users'
// quotas (what a share's writes are charged to: its owner's). Call it
// before opening trees.
func (s *Store) SetMounts(m Mounts, quotas func(user string) int64) { s.mounts, s.quotas = m, quotas }

// Shared opens what a share gives: the file or folder id of owner's tree
// (looked for at p first, then by id, since the owner may have moved it)
// as a tree of its own, with the permissions perm. For a folder, the tree
// is the folder; for a file, it holds that one file as ".". The caller
// closes it.
func (s *Store) Shared(owner string, id uint64, p string, perm rights.Set) (*Tree, error) {
	home, err := s.tree(owner, false)
	if err != nil {
		return nil, err
	}
	c, in, err := home.locate(id, p)
	if err != nil {
		home.Close()
		return nil, err
	}
	dir := c
	if !in.IsDir() {
		dir = parent(c)
	}
	r, err := home.root.OpenRoot(dir)
	if err != nil {
		home.Close()
		return nil, err
	}
	t := &Tree{root: r, user: owner, s: s, prefix: dir, perm: perm, home: home}
	if s.quotas != nil {
		t.quota = s.quotas(owner) // charged to the owner
	}
	if !in.IsDir() {
		t.only = path.Base(c)
	}
	return t, nil
}

// locate finds the file or folder id: at p, or wherever it is now.
func (t *Tree) locate(id uint64, p string) (string, Info, error) {
	if c, err := t.clean(p); err == nil {
		if in, err := t.Info(c); err == nil && in.FileID == id {
			return c, in, nil
		}
	}
	p, in, err := t.Find(id)
	if err != nil {
		return "", Info{}, err
	}
	c, _ := t.clean(p)
	return c, in, nil
}

// full is the owner's path of c, a path of this tree.
func (t *Tree) full(c string) string {
	if t.prefix == "" || t.prefix == "." {
		return c
	}
	if t.only != "" && c == "." {
		c = t.only
	}
	return path.Join(t.prefix, c)
}

// PermAt is what may be done at p: everything in one's own files, a
// share's permissions in it.
func (t *Tree) PermAt(p string) (rights.Set, error) {
	tt, _, err := t.at(p, 0)
	if err != nil {
		return 0, err
	}
	if tt.perm == 0 {
		return rights.All, nil
	}
	return tt.perm, nil
}

// Owner is whose file p is, and its path in their tree ("/a/b"): for the
// locks, which must be one for everyone who reaches a file.
func (t *Tree) Owner(p string) (string, string, error) {
	tt, c, err := t.at(p, 0)
	if err != nil {
		return "", "", err
	}
	return tt.user, "/" + trimDot(tt.full(c)), nil
}

// MountAt is the mount whose name p is (a recipient's own path to a
// share's top), if it is one.
func (t *Tree) MountAt(p string) (Mount, bool) {
	c, err := t.clean(p)
	if err != nil {
		return Mount{}, false
	}
	return t.mountOf(c)
}

// mountOf is the share mounted under name at the top of a user's own
// tree, if any.
func (t *Tree) mountOf(name string) (Mount, bool) {
	if t.s.mounts == nil || t.prefix != "" || strings.Contains(name, "/") {
		return Mount{}, false
	}
	return t.s.mounts.Mount(t.user, name)
}

// at resolves p: the tree that holds it (this one, or a share mounted at
// the top) and its path there, after checking that need may be done
// there.
func (t *Tree) at(p string, need rights.Set) (*Tree, string, error) {
	c, err := t.clean(p)
	if err != nil {
		return nil, "", err
	}
	if c != "." {
		first, rest, _ := strings.Cut(c, "/")
		if m, ok := t.mountOf(first); ok {
			sub, err := t.mounted(m)
			if err != nil {
				return nil, "", err
			}
			return sub.at(rest, need)
		}
	}
	if t.only != "" {
		if c != "." { // a shared file has nothing below it
			return nil, "", &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		c = t.only
	}
	if err := t.allows(need, p); err != nil {
		return nil, "", err
	}
	return t, c, nil
}

// allows says whether need may be done in this tree, at p.
func (t *Tree) allows(need rights.Set, p string) error {
	if t.perm != 0 && t.perm&need != need {
		return &fs.PathError{Op: permOp(need), Path: p, Err: fs.ErrPermission}
	}
	return nil
}

// atWrite resolves p for a write: creating it if it does not exist there,
// replacing it if it does (whether it does is seen without reading).
func (t *Tree) atWrite(p string) (*Tree, string, error) {
	tt, c, err := t.at(p, 0)
	if err != nil {
		return nil, "", err
	}
	need := rights.Create
	if _, err := tt.root.Lstat(c); err == nil {
		need = rights.Update
	}
	if err := tt.allows(need, p); err != nil {
		return nil, "", err
	}
	return tt, c, nil
}

func permOp(need rights.Set) string {
	switch need {
	case rights.Update:
		return "change (the share is read-only)"
	case rights.Create:
		return "create (the share takes no new files)"
	case rights.Delete:
		return "delete (the share takes no deletes)"
	}
	return "read"
}

// mounted opens the share m for this tree, once, and again if its
// permissions changed or the shared item is no longer where it was opened
// (the owner moved it, or put something else under its name).
func (t *Tree) mounted(m Mount) (*Tree, error) {
	if sub, ok := t.subs[m.ID]; ok {
		if sub.perm == m.Perm && sub.stillHolds(m.FileID) {
			return sub, nil
		}
		sub.Close()
		delete(t.subs, m.ID)
	}
	sub, err := t.s.Shared(m.Owner, m.FileID, m.Path, m.Perm)
	if err != nil {
		return nil, fmt.Errorf("the share %s: %w", m.Name, err)
	}
	if t.subs == nil {
		t.subs = map[string]*Tree{}
	}
	t.subs[m.ID] = sub
	return sub, nil
}

// stillHolds reports whether the share's tree, opened on the item id of
// its owner's tree, still stands on it: the owner's path it was opened at
// holds that id. A long-lived tree (an SFTP session) asks it at each use.
func (t *Tree) stillHolds(id uint64) bool {
	in, err := t.home.Info(t.full("."))
	return err == nil && in.FileID == id
}

// loadMounts reads the shares a user's tree holds, and makes the folders
// that stand for them at its top where missing.
func (t *Tree) loadMounts() {
	if t.s.mounts == nil {
		return
	}
	for _, m := range t.s.mounts.Mounts(t.user) {
		if _, err := t.root.Lstat(m.Name); errors.Is(err, fs.ErrNotExist) {
			t.root.Mkdir(m.Name, 0o700)
		}
	}
	if fi, err := t.root.Stat("."); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			t.topIno = st.Ino
		}
	}
}

// isTop reports whether dir is this tree's top folder (where mounts are).
func (t *Tree) isTop(dir *os.File) bool {
	if t.s.mounts == nil || t.prefix != "" {
		return false
	}
	fi, err := dir.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Ino == t.topIno
}

// mountInfo describes the mount named base as the recipient sees it: the
// shared item, under the mount's name.
func (t *Tree) mountInfo(m Mount) (Info, error) {
	sub, err := t.mounted(m)
	if err != nil {
		return Info{}, err
	}
	in, err := sub.Info(".")
	if err != nil {
		return Info{}, err
	}
	in.FileInfo = Named(in.FileInfo, m.Name)
	return in, nil
}

// closeMounts closes the shares opened.
func (t *Tree) closeMounts() {
	for _, sub := range t.subs {
		sub.Close()
	}
}

// leave removes the mount m: the user leaves the share; the owner's
// files are untouched.
func (t *Tree) leave(m Mount) error {
	if err := t.s.mounts.Left(t.user, m.ID); err != nil {
		return err
	}
	t.root.Remove(m.Name) // the empty folder that stood for it
	return nil
}

// Unmounted takes away the empty folder that stood for a share user no
// longer receives (revoked, or expired).
func (s *Store) Unmounted(user, name string) {
	t, err := s.tree(user, false)
	if err != nil {
		return
	}
	defer t.Close()
	if c, err := t.clean(name); err == nil && !strings.Contains(c, "/") && c != "." {
		t.root.Remove(c) // only if empty: never a folder of the user's own
	}
}

// renameMount gives the mount m a new name at the top.
func (t *Tree) renameMount(m Mount, name string) error {
	if strings.Contains(name, "/") {
		return &fs.PathError{Op: "move a share into a folder", Path: m.Name, Err: fs.ErrPermission}
	}
	if _, err := t.root.Lstat(name); err == nil {
		return &fs.PathError{Op: "rename", Path: name, Err: fs.ErrExist}
	}
	if err := t.s.mounts.Renamed(t.user, m.ID, name); err != nil {
		return err
	}
	t.root.Rename(m.Name, name)
	return nil
}

// topETag is the top folder's ETag with the shares' in it: a change in a
// share changes the recipient's top, so their sync client looks.
func (t *Tree) topETag(own string) string {
	ms := t.s.mounts.Mounts(t.user)
	if len(ms) == 0 {
		return own
	}
	parts := [][]byte{[]byte(own)}
	slices.SortFunc(ms, func(a, b Mount) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range ms {
		if in, err := t.mountInfo(m); err == nil {
			parts = append(parts, []byte(m.Name), []byte(in.ETag))
		}
	}
	return etag("t", parts...)
}

// CheckTransfer says, before anything is changed, whether src may be
// moved (move) or copied to dst, which it replaces if it exists: in one
// tree a move is a rename (rename is true); across a share's edge it is a
// copy and a delete. The shares' permissions are checked for every step,
// so that a refusal never comes after the destination was removed.
func (t *Tree) CheckTransfer(src, dst string, move bool) (rename bool, err error) {
	if _, ok := t.MountAt(src); ok && move {
		return true, nil // renaming the mount, the recipient's own name
	}
	need := rights.Read
	if move {
		need = rights.Delete
	}
	from, o, err := t.at(src, need)
	if err != nil {
		return false, err
	}
	to, n, err := t.at(dst, 0)
	if err != nil {
		return false, err
	}
	if _, ok := t.MountAt(dst); ok {
		return false, &fs.PathError{Op: "replace", Path: dst, Err: fs.ErrPermission}
	}
	need = rights.Create
	if dfi, err := to.root.Lstat(n); err == nil {
		need = rights.Update
		sfi, err := from.root.Lstat(o)
		if err != nil {
			return false, err
		}
		if !(dfi.Mode().IsRegular() && sfi.Mode().IsRegular()) {
			need = rights.Delete | rights.Create // removed, then made again
		}
	}
	if err := to.allows(need, dst); err != nil {
		return false, err
	}
	return from == to, nil
}
