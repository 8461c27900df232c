package store

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const month = 30 * 24 * time.Hour

// trashTree is tree's alice with the trash on and no reserve.
func trashTree(t *testing.T) *Tree {
	t.Helper()
	tr, _ := tree(t)
	tr.s.SetTrashPolicy(month, 0)
	return tr
}

// mkdirs makes folders one by one.
func mkdirs(t *testing.T, tr *Tree, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := tr.Mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
}

func trashList(t *testing.T, tr *Tree) []TrashItem {
	t.Helper()
	items, err := tr.Bin().Items()
	if err != nil {
		t.Fatalf("Trash() = %v", err)
	}
	return items
}

func readTrash(t *testing.T, tr *Tree, id string) string {
	t.Helper()
	f, err := tr.Bin().Open(id)
	if err != nil {
		t.Fatalf("OpenTrash(%s) = %v", id, err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

func used(t *testing.T, tr *Tree) int64 {
	t.Helper()
	n, err := tr.Usage()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeleteGoesToTrashAndComesBack(t *testing.T) {
	tr := trashTree(t)
	when := time.Date(2021, 5, 6, 7, 8, 9, 0, time.UTC)
	put(t, tr, "sub/doc.txt", "keep me", when)
	before := used(t, tr)
	if err := tr.Remove("/sub/doc.txt"); err != nil {
		t.Fatal(err)
	}
	if list, _ := tr.ReadDir("sub"); len(list) != 0 {
		t.Errorf("ReadDir(sub) after Remove = %d entries, want none", len(list))
	}
	if got := used(t, tr); got != before-7 {
		t.Errorf("usage after Remove = %d, want %d (the trash counts against no quota)", got, before-7)
	}
	items := trashList(t, tr)
	if len(items) != 1 {
		t.Fatalf("Trash() = %+v, want one item", items)
	}
	it := items[0]
	if it.Path != "sub/doc.txt" || it.Kind != KindDeleted || it.Size != 7 || it.Dir || !it.ModTime.Equal(when) || time.Since(it.At) > time.Minute {
		t.Errorf("Trash()[0] = %+v", it)
	}
	if got := readTrash(t, tr, it.ID); got != "keep me" {
		t.Errorf("OpenTrash = %q, want the deleted content", got)
	}
	to, _, err := tr.Bin().Restore(it.ID)
	if err != nil || to != "sub/doc.txt" {
		t.Fatalf("Restore = %q, %v; want sub/doc.txt", to, err)
	}
	if got := read(t, tr, "sub/doc.txt"); got != "keep me" {
		t.Errorf("restored content = %q", got)
	}
	in := info(t, tr, "sub/doc.txt")
	if !in.ModTime().Equal(when) || in.Sums == nil || in.Sums.SHA1 != sha1.Sum([]byte("keep me")) {
		t.Errorf("restored file: date %v, sums %v; want its date and digests back", in.ModTime(), in.Sums)
	}
	if got := used(t, tr); got != before {
		t.Errorf("usage after Restore = %d, want %d", got, before)
	}
	if items := trashList(t, tr); len(items) != 0 {
		t.Errorf("Trash() after Restore = %+v, want empty", items)
	}
}

func TestDeletedFolderComesBack(t *testing.T) {
	tr := trashTree(t)
	mkdirs(t, tr, "a", "a/b")
	put(t, tr, "a/b/c.txt", "ccc", time.Time{})
	put(t, tr, "a/d.txt", "dd", time.Time{})
	if err := tr.Mkdir("a/empty"); err != nil {
		t.Fatal(err)
	}
	if err := tr.RemoveAll("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Stat("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat(a) after RemoveAll = %v", err)
	}
	items := trashList(t, tr)
	if len(items) != 1 || !items[0].Dir || items[0].Size != 5 || items[0].Path != "a" {
		t.Fatalf("Trash() = %+v, want folder a of 5 bytes", items)
	}
	if _, err := tr.Bin().Open(items[0].ID); err == nil {
		t.Error("OpenTrash of a folder succeeded")
	}
	if to, _, err := tr.Bin().Restore(items[0].ID); err != nil || to != "a" {
		t.Fatalf("Restore = %q, %v", to, err)
	}
	if read(t, tr, "a/b/c.txt") != "ccc" || read(t, tr, "a/d.txt") != "dd" {
		t.Error("the folder came back without its files")
	}
	if fi, err := tr.Stat("a/empty"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(a/empty) = %v", err)
	}
	// An empty folder is simply removed.
	if err := tr.RemoveAll("a/empty"); err != nil {
		t.Fatal(err)
	}
	if items := trashList(t, tr); len(items) != 0 {
		t.Errorf("an empty folder went to the trash: %+v", items)
	}
}

func TestRestoreRemakesFolders(t *testing.T) {
	tr := trashTree(t)
	mkdirs(t, tr, "x", "x/y")
	put(t, tr, "x/y/f.txt", "f", time.Time{})
	if err := tr.Remove("x/y/f.txt"); err != nil {
		t.Fatal(err)
	}
	id := trashList(t, tr)[0].ID
	if err := tr.Remove("x/y"); err != nil { // empty: gone for good
		t.Fatal(err)
	}
	if err := tr.Remove("x"); err != nil {
		t.Fatal(err)
	}
	if to, displaced, err := tr.Bin().Restore(id); err != nil || to != "x/y/f.txt" || displaced {
		t.Fatalf("Restore = %q, %v, %v; want x/y/f.txt, displacing nothing", to, displaced, err)
	}
	if got := read(t, tr, "x/y/f.txt"); got != "f" {
		t.Errorf("x/y/f.txt = %q", got)
	}
}

func TestRestoreOntoTakenPath(t *testing.T) {
	tr := trashTree(t)
	for _, content := range []string{"one", "two"} {
		put(t, tr, "f.txt", content, time.Time{})
		tr.Remove("f.txt")
	}
	put(t, tr, "f.txt", "three", time.Time{})
	items := trashList(t, tr) // newest first
	for i, want := range []string{"f (restored).txt", "f (restored 2).txt"} {
		if to, _, err := tr.Bin().Restore(items[1-i].ID); err != nil || to != want {
			t.Fatalf("Restore = %q, %v; want %q", to, err, want)
		}
	}
	if read(t, tr, "f.txt") != "three" || read(t, tr, "f (restored).txt") != "one" || read(t, tr, "f (restored 2).txt") != "two" {
		t.Error("a restore onto a taken path changed the file there, or restored the wrong content")
	}
}

func TestRestoredName(t *testing.T) {
	long := strings.Repeat("é", 126) + ".txt" // 256 bytes with the mark
	for _, tc := range []struct {
		base string
		n    int
		dir  bool
		want string
	}{
		{"a.txt", 0, false, "a.txt"},
		{"a.txt", 1, false, "a (restored).txt"},
		{"a.tar.gz", 2, false, "a.tar (restored 2).gz"},
		{".bashrc", 1, false, ".bashrc (restored)"},
		{"photos.2020", 1, true, "photos.2020 (restored)"},
		{long, 1, false, strings.Repeat("é", 120) + " (restored).txt"},
	} {
		if got := restoredName(tc.base, tc.n, tc.dir); got != tc.want {
			t.Errorf("restoredName(%q, %d, %v) = %q, want %q", tc.base, tc.n, tc.dir, got, tc.want)
		}
	}
}

func TestOverwriteKeepsVersion(t *testing.T) {
	tr := trashTree(t)
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	first := put(t, tr, "doc.txt", "version one", old)
	put(t, tr, "doc.txt", "v2", time.Time{})
	if got := used(t, tr); got != 5+2 { // hello.txt and v2
		t.Errorf("usage = %d, want 7: versions count against no quota", got)
	}
	vs, err := tr.Bin().Versions("/doc.txt")
	if err != nil || len(vs) != 1 {
		t.Fatalf("Versions = %+v, %v; want one", vs, err)
	}
	if vs[0].Kind != KindVersion || vs[0].Size != 11 || !vs[0].ModTime.Equal(old) {
		t.Errorf("version = %+v", vs[0])
	}
	if got := readTrash(t, tr, vs[0].ID); got != "version one" {
		t.Errorf("version content = %q", got)
	}
	if to, displaced, err := tr.Bin().Restore(vs[0].ID); err != nil || to != "doc.txt" || !displaced {
		t.Fatalf("Restore = %q, %v, %v; want doc.txt, displacing the file there", to, displaced, err)
	}
	in := info(t, tr, "doc.txt")
	if read(t, tr, "doc.txt") != "version one" || !in.ModTime().Equal(old) || in.ETag != first.ETag || in.FileID != first.FileID {
		t.Errorf("restored version: date %v etag %s id %d; want the old file's %v %s %d", in.ModTime(), in.ETag, in.FileID, old, first.ETag, first.FileID)
	}
	if got := used(t, tr); got != 5+11 {
		t.Errorf("usage after Restore = %d, want 16", got)
	}
	vs, _ = tr.Bin().Versions("doc.txt")
	if len(vs) != 1 || readTrash(t, tr, vs[0].ID) != "v2" {
		t.Errorf("after Restore, Versions = %+v; want the newer content kept as one", vs)
	}
}

func TestFailedUploadKeepsNoVersion(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "doc.txt", "old", time.Time{})
	u, _ := tr.Create("doc.txt", false)
	u.Expect(Checksum{"SHA1", make([]byte, 20)})
	u.Write([]byte("new"))
	if err := u.Close(); !errors.Is(err, ErrChecksum) {
		t.Fatalf("Close = %v, want ErrChecksum", err)
	}
	u, _ = tr.Create("doc.txt", false)
	u.SetGuard(func() error { return fs.ErrPermission })
	u.Write([]byte("new"))
	if err := u.Close(); err == nil {
		t.Fatal("Close passed a guard that refused")
	}
	if items := trashList(t, tr); len(items) != 0 {
		t.Errorf("failed uploads left versions: %+v", items)
	}
}

func TestRenameOverKeepsVersion(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "a.txt", "A", time.Time{})
	put(t, tr, "b.txt", "B", time.Time{})
	if err := tr.Rename("a.txt", "b.txt"); err != nil {
		t.Fatal(err)
	}
	if read(t, tr, "b.txt") != "A" {
		t.Error("rename did not replace b.txt")
	}
	vs, _ := tr.Bin().Versions("b.txt")
	if len(vs) != 1 || readTrash(t, tr, vs[0].ID) != "B" {
		t.Errorf("Versions(b.txt) = %+v, want the replaced B", vs)
	}
	// A rename that fails keeps no version.
	if err := tr.Rename("missing.txt", "b.txt"); err == nil {
		t.Fatal("Rename of a missing file succeeded")
	}
	if vs, _ := tr.Bin().Versions("b.txt"); len(vs) != 1 {
		t.Errorf("a failed rename left a version: %+v", vs)
	}
}

func TestTrashOffDeletesForGood(t *testing.T) {
	tr, _ := tree(t) // never SetTrashPolicy: off
	put(t, tr, "f.txt", "one", time.Time{})
	put(t, tr, "f.txt", "two", time.Time{})
	if err := tr.Remove("f.txt"); err != nil {
		t.Fatal(err)
	}
	if err := tr.RemoveAll("sub"); err != nil {
		t.Fatal(err)
	}
	if items := trashList(t, tr); len(items) != 0 {
		t.Errorf("Trash() with the trash off = %+v", items)
	}
	if _, err := os.Stat(tr.s.trashPath("alice")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the trash off made a trash folder: %v", err)
	}
	// Turning it off empties it at the next purge.
	tr.s.SetTrashPolicy(month, 0)
	tr.Remove("hello.txt")
	tr.s.SetTrashPolicy(0, 0)
	if n, _, err := tr.s.purgeTrash(time.Now()); n != 1 || err != nil {
		t.Errorf("PurgeTrash with the trash off = %d, %v; want 1 removed", n, err)
	}
}

func TestSymlinkInTrashIsNotFollowed(t *testing.T) {
	tr := trashTree(t)
	if err := tr.Remove("abs-link"); err != nil {
		t.Fatal(err)
	}
	items := trashList(t, tr)
	if len(items) != 1 {
		t.Fatalf("Trash() = %+v", items)
	}
	if f, err := tr.Bin().Open(items[0].ID); err == nil {
		b, _ := io.ReadAll(f)
		f.Close()
		t.Errorf("OpenTrash followed a trashed symlink and read %q", b)
	}
	if _, _, err := tr.Bin().Restore(items[0].ID); err != nil {
		t.Fatal(err)
	}
	if fi, err := tr.Lstat("abs-link"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("restored link: %v, %v", fi, err)
	}
}

// age makes a trash item look older by d, as the passing of time would:
// its ID (which holds the time) is renamed.
func age(t *testing.T, s *Store, user, id string, d time.Duration) string {
	t.Helper()
	old := newTrashID(trashIDTime(id).Add(-d))
	dir := s.trashPath(user)
	for _, suffix := range []string{"", recordSuffix} {
		if err := os.Rename(filepath.Join(dir, id+suffix), filepath.Join(dir, old+suffix)); err != nil {
			t.Fatal(err)
		}
	}
	return old
}

func TestPurgeByAge(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "old.txt", "old", time.Time{})
	put(t, tr, "new.txt", "newer", time.Time{})
	tr.Remove("old.txt")
	age(t, tr.s, "alice", trashList(t, tr)[0].ID, 40*24*time.Hour)
	tr.Remove("new.txt")
	n, freed, err := tr.s.purgeTrash(time.Now())
	if n != 1 || freed != 3 || err != nil {
		t.Errorf("PurgeTrash = %d, %d, %v; want 1 item of 3 bytes", n, freed, err)
	}
	if items := trashList(t, tr); len(items) != 1 || items[0].Path != "new.txt" {
		t.Errorf("after purge, Trash() = %+v; want new.txt only", items)
	}
	if n, _, _ := tr.s.purgeTrash(time.Now().Add(month + time.Hour)); n != 1 {
		t.Errorf("a month later PurgeTrash removed %d, want 1", n)
	}
}

// fakeDisk replaces the store's free-space function: capacity less what
// the trash's items hold.
func fakeDisk(s *Store, capacity int64) {
	s.free = func() (int64, error) {
		held := int64(0)
		filepath.WalkDir(filepath.Join(s.own, "trash"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.HasSuffix(p, recordSuffix) {
				if fi, err := d.Info(); err == nil { // not purged meanwhile
					held += fi.Size()
				}
			}
			return nil
		})
		return capacity - held, nil
	}
}

func TestPurgeByReserveOldestFirst(t *testing.T) {
	tr := trashTree(t)
	bob, err := tr.s.Tree("bob")
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	for _, step := range []struct {
		t *Tree
		p string
	}{{tr, "a1"}, {bob, "b1"}, {tr, "a2"}, {bob, "b2"}} {
		put(t, step.t, step.p, strings.Repeat("x", 100), time.Time{})
		if err := step.t.Remove(step.p); err != nil {
			t.Fatal(err)
		}
	}
	fakeDisk(tr.s, 1000) // 600 free with 400 in the trash
	tr.s.SetTrashPolicy(month, 750)
	n, freed, err := tr.s.purgeTrash(time.Now())
	if n != 2 || freed != 200 || err != nil {
		t.Errorf("PurgeTrash = %d, %d, %v; want the 2 oldest, 200 bytes", n, freed, err)
	}
	if a, b := trashList(t, tr), trashList(t, bob); len(a) != 1 || a[0].Path != "a2" || len(b) != 1 || b[0].Path != "b2" {
		t.Errorf("left: alice %+v, bob %+v; want a2 and b2", a, b)
	}
	// A write that cannot fit even with the trash emptied is refused and
	// takes nothing from the trash.
	if err := tr.Fits(10000); !errors.Is(err, ErrNoSpace) {
		t.Errorf("Fits(10000) on a 1000-byte disk = %v, want ErrNoSpace", err)
	}
	if a, b := trashList(t, tr), trashList(t, bob); len(a) != 1 || len(b) != 1 {
		t.Errorf("a refused write emptied the trash: alice %+v, bob %+v", a, b)
	}
	// A write that needs room: the trash gives way until n beyond the
	// reserve is free.
	if err := tr.Fits(100); err != nil {
		t.Fatal(err)
	}
	if a, b := trashList(t, tr), trashList(t, bob); len(a) != 0 || len(b) != 1 {
		t.Errorf("after Fits(100): alice %+v, bob %+v; want only b2 left", a, b)
	}
}

func TestTrashAfterPowerCut(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "f.txt", "f", time.Time{})
	tr.Remove("f.txt")
	dir := tr.s.trashPath("alice")
	// A record whose item never came (the cut fell between the two).
	orphan := newTrashID(time.Now())
	os.WriteFile(filepath.Join(dir, orphan+recordSuffix), []byte(`{"path":"g.txt","kind":"deleted"}`), 0o600)
	os.WriteFile(filepath.Join(dir, orphan+recordSuffix+".tmp"), []byte(`{"pa`), 0o600)
	// An item without its record.
	stray := newTrashID(time.Now().Add(-time.Hour))
	os.WriteFile(filepath.Join(dir, stray), []byte("stray"), 0o600)
	items := trashList(t, tr)
	if len(items) != 2 || items[0].Path != "f.txt" || items[1].Path != "recovered/"+stray || items[1].Kind != KindDeleted || items[1].Size != 5 {
		t.Fatalf("Trash() = %+v; want f.txt and recovered/%s", items, stray)
	}
	for _, gone := range []string{orphan + recordSuffix, orphan + recordSuffix + ".tmp"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
	if to, _, err := tr.Bin().Restore(stray); err != nil || to != "recovered/"+stray || read(t, tr, to) != "stray" {
		t.Errorf("Restore of the adopted item = %q, %v", to, err)
	}
}

func TestBadTrashIDs(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "f.txt", "f", time.Time{})
	tr.Remove("f.txt")
	id := trashList(t, tr)[0].ID
	for _, bad := range []string{"", "../x", "a/b", "..", id + recordSuffix, "../" + id, id[:16], strings.ToUpper(id), "../../alice/hello.txt"} {
		if _, err := tr.Bin().Open(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("OpenTrash(%q) = %v, want ErrBadName", bad, err)
		}
		if _, _, err := tr.Bin().Restore(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("Restore(%q) = %v, want ErrBadName", bad, err)
		}
		if err := tr.Bin().Delete(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("DeleteTrash(%q) = %v, want ErrBadName", bad, err)
		}
	}
	// Another user's item is not this user's.
	bob, _ := tr.s.Tree("bob")
	defer bob.Close()
	if _, err := bob.Bin().Open(id); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob's OpenTrash of alice's item = %v", err)
	}
	if _, _, err := bob.Bin().Restore(id); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob's Restore of alice's item = %v", err)
	}
}

func TestDeleteAndEmptyTrash(t *testing.T) {
	tr := trashTree(t)
	for _, p := range []string{"a", "b", "c"} {
		put(t, tr, p, p, time.Time{})
		tr.Remove(p)
	}
	items := trashList(t, tr)
	if err := tr.Bin().Delete(items[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := tr.Bin().Delete(items[0].ID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("DeleteTrash twice = %v, want ErrNotExist", err)
	}
	if got := trashList(t, tr); len(got) != 2 {
		t.Errorf("after DeleteTrash, %d items, want 2", len(got))
	}
	if err := tr.Bin().Empty(""); err != nil {
		t.Fatal(err)
	}
	if got := trashList(t, tr); len(got) != 0 {
		t.Errorf("after EmptyTrash, %+v", got)
	}
}

func TestRestoreCountsAgainstQuota(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "big", strings.Repeat("x", 100), time.Time{})
	tr.Remove("big")
	tr.SetQuota(50)
	id := trashList(t, tr)[0].ID
	if _, _, err := tr.Bin().Restore(id); !errors.Is(err, ErrQuota) {
		t.Errorf("Restore over the quota = %v, want ErrQuota", err)
	}
	if len(trashList(t, tr)) != 1 {
		t.Error("a refused restore lost the item")
	}
}

// Listings, and purges, while deletes are under way never catch a record
// before its item: nothing is dropped or adopted as recovered. With purge,
// the disk is short, so the purges do remove items (all but 10).
func TestTrashListedWhileDeleting(t *testing.T) {
	t.Run("listed", func(t *testing.T) { trashWhileDeleting(t, false) })
	t.Run("purged", func(t *testing.T) { trashWhileDeleting(t, true) })
}

func trashWhileDeleting(t *testing.T, purge bool) {
	tr := trashTree(t)
	const keep = 10 // bytes of trash the short disk leaves room for
	if purge {
		fakeDisk(tr.s, 1<<20)
		tr.s.SetTrashPolicy(month, 1<<20-keep)
	}
	const n = 20
	for i := range 2 * n {
		put(t, tr, fmt.Sprintf("f%d", i), "x", time.Time{})
	}
	done := make(chan bool)
	for g := range 2 {
		go func() {
			for i := range n {
				if err := tr.Remove(fmt.Sprintf("f%d", g*n+i)); err != nil {
					t.Error(err)
				}
			}
			done <- true
		}()
	}
	for finished := 0; finished < 2; {
		select {
		case <-done:
			finished++
		default:
			tr.Bin().Items()
			if purge {
				if _, _, err := tr.s.purgeTrash(time.Now()); err != nil {
					t.Error(err)
				}
			}
		}
	}
	if purge {
		tr.s.purgeTrash(time.Now())
	}
	items := trashList(t, tr)
	if want := map[bool]int{false: 2 * n, true: keep}[purge]; len(items) != want {
		t.Errorf("%d items in the trash, want %d", len(items), want)
	}
	// Every item has its record, every record its item.
	entries, _ := os.ReadDir(tr.s.trashPath(tr.user))
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	for name := range names {
		if id, isRecord := strings.CutSuffix(name, recordSuffix); isRecord && !names[id] {
			t.Errorf("record %s without its item", name)
		} else if !isRecord && !names[name+recordSuffix] {
			t.Errorf("item %s without its record", name)
		}
	}
	for _, it := range items {
		if strings.HasPrefix(it.Path, "recovered/") {
			t.Errorf("%s was adopted: its record was dropped while it was on its way", it.ID)
		}
	}
}

// A cut between an overwrite's link of the old file into the trash and
// the rename of the new one leaves a version that is the current file
// itself; restoring it leaves the file as it is and the trash without it.
func TestRestoreVersionThatIsTheFile(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "doc.txt", "same", time.Time{})
	dir, err := tr.root.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	id, err := tr.keepVersion(dir, "doc.txt", "doc.txt", false)
	if err != nil || id == "" {
		t.Fatalf("keepVersion = %q, %v", id, err)
	}
	if to, _, err := tr.Bin().Restore(id); err != nil || to != "doc.txt" {
		t.Fatalf("Restore = %q, %v", to, err)
	}
	if got := read(t, tr, "doc.txt"); got != "same" {
		t.Errorf("doc.txt = %q", got)
	}
	if items := trashList(t, tr); len(items) != 0 {
		t.Errorf("Trash() = %+v, want empty", items)
	}
	if n := used(t, tr); n != 5+4 {
		t.Errorf("usage = %d, want 9", n)
	}
}
