package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFindByID(t *testing.T) {
	tr, _ := tree(t)
	mkdirs(t, tr, "a", "a/b")
	doc := put(t, tr, "a/b/doc.txt", "doc", time.Time{})
	folder := info(t, tr, "a/b")

	// Nothing seen yet: a walk finds it, and does not follow the symlinks
	// tree planted (root-link leads to "/").
	p, in, err := tr.Find(doc.FileID)
	if err != nil || p != "/a/b/doc.txt" || in.FileID != doc.FileID {
		t.Fatalf("Find(doc) = %q, %d, %v; want /a/b/doc.txt", p, in.FileID, err)
	}
	if p, _, err := tr.Find(folder.FileID); err != nil || p != "/a/b" {
		t.Errorf("Find(folder) = %q, %v; want /a/b", p, err)
	}
	// Renamed: the remembered place no longer holds the id; found again.
	if err := tr.Rename("a/b/doc.txt", "a/moved.txt"); err != nil {
		t.Fatal(err)
	}
	if p, _, err := tr.Find(doc.FileID); err != nil || p != "/a/moved.txt" {
		t.Errorf("Find after rename = %q, %v; want /a/moved.txt", p, err)
	}
	// A new version keeps the id.
	put(t, tr, "a/moved.txt", "doc, edited", time.Time{})
	if p, _, err := tr.Find(doc.FileID); err != nil || p != "/a/moved.txt" {
		t.Errorf("Find after an edit = %q, %v", p, err)
	}
	// An id that is nowhere, and one that is gone.
	if _, _, err := tr.Find(12345); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Find(12345) = %v, want ErrNotExist", err)
	}
	if err := tr.Remove("a/moved.txt"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.Find(doc.FileID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Find(deleted) = %v, want ErrNotExist", err)
	}
	// Another user's ids are not found in this tree.
	bob, err := tr.s.Tree("bob")
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	other := put(t, bob, "x.txt", "x", time.Time{})
	if _, _, err := tr.Find(other.FileID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alice found bob's file: %v", err)
	}
	// Seen fills the table: a file put there behind the store's back, under
	// a name the walk would reach last, is found without a walk only if
	// seen; a wrong sighting is checked and not believed.
	tr.Seen("/hello.txt", other.FileID)
	if _, _, err := tr.Find(other.FileID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a wrong sighting was believed: %v", err)
	}
}

func TestIDKeptWhenChangedOutside(t *testing.T) {
	tr, _ := tree(t)
	in := put(t, tr, "f.txt", "one", time.Time{})
	// Changed behind the store's back (same inode, other size): the
	// digests no longer hold, the id does.
	os.WriteFile(filepath.Join(tr.s.Dir(), "alice", "f.txt"), []byte("longer content"), 0o644)
	now := info(t, tr, "f.txt")
	if now.FileID != in.FileID || now.Sums != nil || now.ETag == in.ETag {
		t.Errorf("after an outside change: id %d sums %v etag %s; want id %d, no sums, a new etag", now.FileID, now.Sums, now.ETag, in.FileID)
	}
	// A file the store never wrote is listed with its inode as its id; an
	// upload over it keeps that id.
	os.WriteFile(filepath.Join(tr.s.Dir(), "alice", "g.txt"), []byte("from outside"), 0o644)
	first := info(t, tr, "g.txt")
	if got := put(t, tr, "g.txt", "through the store", time.Time{}); got.FileID != first.FileID {
		t.Errorf("an upload over g.txt gave id %d, want the id it was listed with, %d", got.FileID, first.FileID)
	}
}

func TestVersionsFollowRename(t *testing.T) {
	tr := trashTree(t)
	put(t, tr, "doc.txt", "one", time.Time{})
	put(t, tr, "doc.txt", "two", time.Time{})
	if err := tr.Rename("doc.txt", "renamed.txt"); err != nil {
		t.Fatal(err)
	}
	vs, err := tr.Bin().Versions("renamed.txt")
	if err != nil || len(vs) != 1 || readTrash(t, tr, vs[0].ID) != "one" {
		t.Fatalf("Versions(renamed.txt) = %+v, %v; want the first content", vs, err)
	}
	// Restoring it puts it where the file is now, not at the old path.
	to, displaced, err := tr.Bin().Restore(vs[0].ID)
	if err != nil || to != "renamed.txt" || !displaced {
		t.Fatalf("Restore = %q, %v, %v; want renamed.txt, displacing", to, displaced, err)
	}
	if got := read(t, tr, "renamed.txt"); got != "one" {
		t.Errorf("renamed.txt = %q after the restore, want one", got)
	}
	if _, err := tr.Stat("doc.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the restore made the old path again: %v", err)
	}
}

func TestWalk(t *testing.T) {
	tr, _ := tree(t)
	mkdirs(t, tr, "d", "d/e")
	put(t, tr, "d/e/f.txt", "f", time.Time{})
	var seen []string
	err := tr.Walk("/", func(p string, in Info) error {
		seen = append(seen, p)
		if p == "/sub" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"/hello.txt": true, "/sub": true, "/d": true, "/d/e": true, "/d/e/f.txt": true}
	if len(seen) != len(want) {
		t.Errorf("Walk saw %q, want %d entries (no symlinks)", seen, len(want))
	}
	for _, p := range seen {
		if !want[p] {
			t.Errorf("Walk saw %q", p)
		}
	}
}
