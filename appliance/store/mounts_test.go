package store

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/rights"
)

// fakeMounts is a share table in memory.
type fakeMounts struct {
	byUser map[string][]Mount
	left   []string
}

func (f *fakeMounts) Mounts(user string) []Mount { return append([]Mount(nil), f.byUser[user]...) }
func (f *fakeMounts) Mount(user, name string) (Mount, bool) {
	for _, m := range f.byUser[user] {
		if m.Name == name {
			return m, true
		}
	}
	return Mount{}, false
}
func (f *fakeMounts) Renamed(user, id, name string) error {
	for i, m := range f.byUser[user] {
		if m.ID == id {
			f.byUser[user][i].Name = name
		}
	}
	return nil
}
func (f *fakeMounts) Left(user, id string) error {
	f.left = append(f.left, id)
	var keep []Mount
	for _, m := range f.byUser[user] {
		if m.ID != id {
			keep = append(keep, m)
		}
	}
	f.byUser[user] = keep
	return nil
}

// shareBox is a store where bob has Photos/Trip (a.jpg) and Private/secret,
// and shares: what mounts says.
func shareBox(t *testing.T) (*Store, *Tree, *fakeMounts) {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	s.SetTrashPolicy(month, 0)
	mounts := &fakeMounts{byUser: map[string][]Mount{}}
	s.SetMounts(mounts, func(user string) int64 { return map[string]int64{"bob": 1000}[user] })
	bob, err := s.Tree("bob")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bob.Close() })
	mkdirs(t, bob, "Photos", "Photos/Trip", "Private")
	put(t, bob, "Photos/Trip/a.jpg", "AAAA", time.Time{})
	put(t, bob, "Private/secret", "SECRET", time.Time{})
	return s, bob, mounts
}

func (f *fakeMounts) give(t *testing.T, owner *Tree, p, to, name string, perm rights.Set) Mount {
	t.Helper()
	in, err := owner.Info(p)
	if err != nil {
		t.Fatal(err)
	}
	m := Mount{ID: name + "-id", Name: name, Owner: owner.user, FileID: in.FileID, Path: p, Perm: perm}
	f.byUser[to] = append(f.byUser[to], m)
	return m
}

func open(t *testing.T, s *Store, user string) *Tree {
	t.Helper()
	tr, err := s.Tree(user)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func readAll(t *testing.T, tr *Tree, p string) (string, error) {
	t.Helper()
	f, err := tr.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b), nil
}

func TestReadOnlyShare(t *testing.T) {
	s, bob, mounts := shareBox(t)
	trip := mounts.give(t, bob, "Photos/Trip", "alice", "Trip", rights.Read)
	// A symlink in the shared folder to the rest of bob's files.
	os.Symlink("../../Private/secret", filepath.Join(s.Dir(), "bob", "Photos", "Trip", "link"))
	alice := open(t, s, "alice")

	entries, err := alice.ReadDir("/")
	if err != nil || len(entries) != 1 || entries[0].Name() != "Trip" || !entries[0].IsDir() {
		t.Fatalf("alice's top = %v, %v", entries, err)
	}
	in := info(t, alice, "Trip")
	if in.FileID != trip.FileID || in.ETag != info(t, bob, "Photos/Trip").ETag {
		t.Errorf("the mount is not described as the shared folder: %+v", in)
	}
	if got, err := readAll(t, alice, "/Trip/a.jpg"); err != nil || got != "AAAA" {
		t.Errorf("read through the share = %q, %v", got, err)
	}
	// Nothing outside the shared folder.
	for _, p := range []string{"Trip/link", "Trip/../Private/secret", "Trip/../../bob/Private/secret"} {
		if got, err := readAll(t, alice, p); err == nil {
			t.Errorf("%s read %q through the share", p, got)
		}
	}
	// Read-only: every change refused, by every way the store changes.
	refused := map[string]error{}
	_, refused["create"] = alice.Create("Trip/new.txt", false)
	_, refused["overwrite"] = alice.Create("Trip/a.jpg", false)
	refused["mkdir"] = alice.Mkdir("Trip/sub")
	refused["remove"] = alice.Remove("Trip/a.jpg")
	refused["rename"] = alice.Rename("Trip/a.jpg", "Trip/b.jpg")
	refused["settimes"] = alice.SetTimes("Trip/a.jpg", time.Time{}, time.Now())
	refused["chmod"] = alice.Chmod("Trip/a.jpg", 0o600)
	for what, err := range refused {
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s in a read-only share: %v, want a refusal", what, err)
		}
	}
	if got, _ := readAll(t, bob, "Photos/Trip/a.jpg"); got != "AAAA" {
		t.Errorf("bob's file changed: %q", got)
	}
	// Revoked: at once, for a tree already open (an SFTP session's).
	saved := mounts.byUser["alice"]
	mounts.byUser["alice"] = nil
	if _, err := readAll(t, alice, "/Trip/a.jpg"); err == nil {
		t.Error("a revoked share still reads")
	}
	mounts.byUser["alice"] = saved
	// Found by id from the recipient's side, at the recipient's path.
	a := info(t, bob, "Photos/Trip/a.jpg")
	if p, _, err := alice.Find(a.FileID); err != nil || p != "/Trip/a.jpg" {
		t.Errorf("Find from alice = %q, %v", p, err)
	}
	if who, p, _ := alice.Owner("Trip/a.jpg"); who != "bob" || p != "/Photos/Trip/a.jpg" {
		t.Errorf("Owner = %s %s", who, p)
	}
}

func TestReadWriteShare(t *testing.T) {
	s, bob, mounts := shareBox(t)
	mounts.give(t, bob, "Photos/Trip", "alice", "Trip", rights.All)
	alice := open(t, s, "alice")
	topBefore, photosBefore := info(t, alice, "/").ETag, info(t, bob, "Photos").ETag
	bobUsed := used(t, bob)
	put(t, alice, "Trip/from-alice.txt", "hello", time.Time{})
	if got, _ := readAll(t, bob, "Photos/Trip/from-alice.txt"); got != "hello" {
		t.Errorf("bob sees %q", got)
	}
	// The owner's: bob's usage, bob's folders up to his top; alice's top
	// changes too, so her sync client looks.
	if got := used(t, bob); got != bobUsed+5 {
		t.Errorf("bob's usage %d, want %d", got, bobUsed+5)
	}
	if used(t, alice) != 0 {
		t.Errorf("alice was charged")
	}
	if info(t, bob, "Photos").ETag == photosBefore || info(t, alice, "/").ETag == topBefore {
		t.Error("the change did not reach bob's Photos or alice's top")
	}
	if n := treeSize(t, bob, "Photos"); n != 4+5 {
		t.Errorf("bob's Photos holds %d by its record, want 9", n)
	}
	// Bob's quota (1000) holds for alice's writes in his share.
	u, _ := alice.Create("Trip/big.bin", false)
	if _, err := u.Write(make([]byte, 2000)); !errors.Is(err, ErrQuota) {
		t.Errorf("a write past bob's quota: %v", err)
	}
	u.Abort()
	// A delete goes to bob's trash, under bob's path.
	if err := alice.Remove("Trip/from-alice.txt"); err != nil {
		t.Fatal(err)
	}
	items := trashList(t, bob)
	if len(items) != 1 || items[0].Path != "Photos/Trip/from-alice.txt" {
		t.Errorf("bob's trash = %+v", items)
	}
	// A rename stays in the share; out of it, it must be a copy.
	put(t, alice, "Trip/x.txt", "x", time.Time{})
	if err := alice.Rename("Trip/x.txt", "Trip/y.txt"); err != nil {
		t.Errorf("rename in the share: %v", err)
	}
	if err := alice.Rename("Trip/y.txt", "mine.txt"); !errors.Is(err, errCrossMount) {
		t.Errorf("rename out of the share: %v", err)
	}
}

func TestMountRenameLeaveAndMoved(t *testing.T) {
	s, bob, mounts := shareBox(t)
	mounts.give(t, bob, "Photos/Trip", "alice", "Trip", rights.Read)
	alice := open(t, s, "alice")
	if err := alice.Rename("Trip", "Bob's trip"); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, alice, "Bob's trip/a.jpg"); err != nil || got != "AAAA" {
		t.Errorf("after a rename of the mount: %q %v", got, err)
	}
	if err := alice.Rename("Bob's trip", "sub/Trip"); err == nil {
		t.Error("a share moved into a folder")
	}
	// Bob moves the folder: the share follows it (by id).
	if err := bob.Rename("Photos/Trip", "Trip2024"); err != nil {
		t.Fatal(err)
	}
	again := open(t, s, "alice")
	if got, err := readAll(t, again, "Bob's trip/a.jpg"); err != nil || got != "AAAA" {
		t.Errorf("after bob moved it: %q %v", got, err)
	}
	// Removing it leaves the share; bob's files stay.
	if err := again.RemoveAll("Bob's trip"); err != nil {
		t.Fatal(err)
	}
	if len(mounts.left) != 1 {
		t.Errorf("left = %v", mounts.left)
	}
	if got, _ := readAll(t, bob, "Trip2024/a.jpg"); got != "AAAA" {
		t.Error("leaving the share deleted bob's file")
	}
	if _, err := again.Stat("Bob's trip"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after leaving, the mount is still there: %v", err)
	}
}

func TestSharedFileAndDrop(t *testing.T) {
	s, bob, mounts := shareBox(t)
	mounts.give(t, bob, "Private/secret", "alice", "secret", rights.Read|rights.Update)
	alice := open(t, s, "alice")
	if got, err := readAll(t, alice, "secret"); err != nil || got != "SECRET" {
		t.Errorf("a shared file: %q %v", got, err)
	}
	if _, err := alice.Stat("secret/x"); err == nil {
		t.Error("a shared file has something below it")
	}
	put(t, alice, "secret", "CHANGED", time.Time{})
	if got, _ := readAll(t, bob, "Private/secret"); got != "CHANGED" {
		t.Errorf("bob's file = %q after alice's update", got)
	}
	if err := alice.Remove("secret"); err != nil { // leaves the share
		t.Fatal(err)
	}
	if _, err := bob.Stat("Private/secret"); err != nil {
		t.Error("leaving a file share deleted the file")
	}
	// A file drop: new files only; nothing read, nothing replaced.
	in := info(t, bob, "Photos")
	drop, err := s.Shared("bob", in.FileID, "Photos", rights.Create)
	if err != nil {
		t.Fatal(err)
	}
	defer drop.Close()
	put(t, drop, "dropped.txt", "hi", time.Time{})
	if got, _ := readAll(t, bob, "Photos/dropped.txt"); got != "hi" {
		t.Errorf("the drop wrote %q", got)
	}
	if _, err := drop.ReadDir("/"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a drop listed its folder: %v", err)
	}
	if _, err := drop.Create("dropped.txt", false); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a drop replaced a file: %v", err)
	}
}

// A folder made through the store has an id of its own: after a shared
// folder is deleted for good, a new folder that reuses its inode number
// is not what the share opens.
func TestShareOfDeletedFolderOpensNothing(t *testing.T) {
	s, bob, mounts := shareBox(t)
	s.SetTrashPolicy(0, 0) // deletes are for good: the inode is freed
	mkdirs(t, bob, "Holiday")
	put(t, bob, "Holiday/beach.jpg", "x", time.Time{})
	m := mounts.give(t, bob, "Holiday", "alice", "Holiday", rights.Read)
	if err := bob.RemoveAll("Holiday"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 { // folders and files, to take the freed inode
		name := "New" + string(rune('a'+i))
		mkdirs(t, bob, name)
		put(t, bob, name+"/passwords.txt", "secret", time.Time{})
	}
	if sh, err := s.Shared("bob", m.FileID, m.Path, rights.Read); err == nil {
		ents, _ := sh.ReadDir("/")
		sh.Close()
		t.Fatalf("the share of a deleted folder opened something, with %d entries", len(ents))
	}
	ids := map[uint64]string{}
	for _, p := range []string{"Photos", "Photos/Trip", "Newa", "Newb"} {
		in := info(t, bob, p)
		if other, ok := ids[in.FileID]; ok {
			t.Errorf("%s and %s have one id", p, other)
		}
		ids[in.FileID] = p
	}
}

// An open tree (an SFTP session) that used a shared file follows the file,
// not its name: the owner renames it and puts another file under the name.
func TestOpenTreeFollowsTheSharedFile(t *testing.T) {
	s, bob, mounts := shareBox(t)
	put(t, bob, "Photos/report.txt", "shared content", time.Time{})
	mounts.give(t, bob, "Photos/report.txt", "alice", "report.txt", rights.Read)
	alice := open(t, s, "alice")
	if got, err := readAll(t, alice, "/report.txt"); err != nil || got != "shared content" {
		t.Fatalf("read = %q, %v", got, err)
	}
	if err := bob.Rename("Photos/report.txt", "Photos/report-old.txt"); err != nil {
		t.Fatal(err)
	}
	if err := bob.Rename("Private/secret", "Photos/report.txt"); err != nil {
		t.Fatal(err)
	}
	if got, _ := readAll(t, alice, "/report.txt"); got != "shared content" {
		t.Errorf("after the owner's renames the session reads %q, want the shared file", got)
	}
	// A shared folder moved by its owner: the session's writes land in it
	// where it is now.
	mounts.give(t, bob, "Photos/Trip", "alice", "Trip", rights.All)
	if _, err := readAll(t, alice, "/Trip/a.jpg"); err != nil {
		t.Fatal(err)
	}
	if err := bob.Rename("Photos/Trip", "Trip2026"); err != nil {
		t.Fatal(err)
	}
	put(t, alice, "/Trip/b.jpg", "BB", time.Time{})
	if got, err := readAll(t, bob, "Trip2026/b.jpg"); err != nil || got != "BB" {
		t.Errorf("the write went elsewhere: %q, %v", got, err)
	}
	if in := info(t, bob, "Trip2026"); in.TreeSize != 6 {
		t.Errorf("the moved folder's size = %d, want 6", in.TreeSize)
	}
}

// A move or copy that a share's permissions refuse is refused before the
// destination is touched; across a share's edge a move is no rename.
func TestCheckTransfer(t *testing.T) {
	s, bob, mounts := shareBox(t)
	mounts.give(t, bob, "Photos", "alice", "Ro", rights.Read)
	mounts.give(t, bob, "Private", "alice", "Rw", rights.Read|rights.Update|rights.Create|rights.Delete)
	alice := open(t, s, "alice")
	mkdirs(t, alice, "Mine", "Mine2")
	for _, c := range []struct {
		src, dst   string
		move       bool
		ok, rename bool
	}{
		{"Mine", "Mine3", true, true, true},
		{"Mine", "Ro/Trip", true, false, false},       // would replace a read-only folder
		{"Ro/Trip", "Mine3", true, false, false},      // cannot delete from a read-only share
		{"Ro/Trip", "Mine3", false, true, false},      // a copy out is a read
		{"Mine", "Rw/sub", true, true, false},         // into a read-write share: copy and delete
		{"Mine", "Rw/secret", true, true, false},      // a folder over a file there
		{"Mine", "Ro", true, false, false},            // over a mount
		{"Rw", "Shared-by-bob", true, true, true},     // the mount renamed
		{"Rw/secret", "Rw/secret2", true, true, true}, // inside the share
	} {
		rename, err := alice.CheckTransfer(c.src, c.dst, c.move)
		if (err == nil) != c.ok || err == nil && rename != c.rename {
			t.Errorf("CheckTransfer(%s, %s, move %v) = %v, %v; want ok %v, rename %v", c.src, c.dst, c.move, rename, err, c.ok, c.rename)
		}
	}
	if _, err := readAll(t, bob, "Photos/Trip/a.jpg"); err != nil {
		t.Errorf("a check changed the owner's files: %v", err)
	}
}
