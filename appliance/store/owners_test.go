package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A deleted user's files: listed with what they take, handed to another
// user with their dates, ids and digests, and removed with their trash.
func TestHandOverAndRemoveAnOwnersFiles(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	s.SetTrashPolicy(month, 0)
	ann, _ := s.Tree("ann")
	bob, _ := s.Tree("bob")
	defer bob.Close()
	when := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	mkdirs(t, ann, "photos")
	pic := put(t, ann, "photos/a.jpg", "a picture", when)
	put(t, ann, "notes.txt", "first", when)
	put(t, ann, "notes.txt", "second!", when.Add(time.Hour)) // keeps "first" as a version
	put(t, ann, "gone.txt", "deleted", when)
	if err := ann.Remove("gone.txt"); err != nil {
		t.Fatal(err)
	}
	ann.Close()
	put(t, bob, "mine.txt", "bob's", when)
	before := used(t, bob)

	if owners, err := s.Owners(); err != nil || !slices.Equal(owners, []string{"ann", "bob"}) {
		t.Fatalf("Owners() = %v %v", owners, err)
	}
	u, err := s.UsageOf("ann")
	if err != nil || u != (Usage{Files: 9 + 7, Trash: 7, Versions: 5}) {
		t.Fatalf("ann's usage %+v %v", u, err)
	}

	if err := s.HandOver("ann", "bob", "mine.txt"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a hand-over onto bob's own file: %v", err)
	}
	if err := s.HandOver("ann", "bob", "../x"); err == nil {
		t.Fatal("a hand-over to a folder name with a slash was taken")
	}
	if err := s.HandOver("ann", "bob", "Files of ann"); err != nil {
		t.Fatal(err)
	}
	if got := used(t, bob); got != before+16 {
		t.Errorf("bob's usage %d, want %d", got, before+16)
	}
	if size, _ := bob.Size("."); size != before+16 {
		t.Errorf("bob's top folder's size %d, want %d", size, before+16)
	}
	got := info(t, bob, "Files of ann/photos/a.jpg")
	if got.FileID != pic.FileID || got.Sums == nil || got.Sums.SHA1 != pic.Sums.SHA1 || !got.ModTime().Equal(when) {
		t.Errorf("the handed-over picture: id %d sums %v mtime %v; was id %d, %v", got.FileID, got.Sums, got.ModTime(), pic.FileID, when)
	}
	if read(t, bob, "Files of ann/notes.txt") != "second!" {
		t.Error("the handed-over notes")
	}
	if err := s.HandOver("ann", "bob", "again"); err == nil {
		t.Error("a second hand-over of files that went")
	}
	// ann's trash and versions stay until removed.
	if u, _ := s.UsageOf("ann"); u != (Usage{Trash: 7, Versions: 5}) {
		t.Errorf("ann after the hand-over: %+v", u)
	}
	if err := s.RemoveOwner("ann"); err != nil {
		t.Fatal(err)
	}
	if owners, _ := s.Owners(); !slices.Equal(owners, []string{"bob"}) {
		t.Errorf("after removing ann: %v", owners)
	}
	if err := s.RemoveOwner("../bob"); err == nil {
		t.Error("RemoveOwner took a path")
	}
}

// A second process's store (bonesync copy) beside the server's: the same
// folder ETags, and the server's running mark left alone, so the server's
// next start is not taken for one after a crash.
func TestOpenBesideKeepsTheServersMark(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	server, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	beside, err := OpenBeside(dir)
	if err != nil {
		t.Fatal(err)
	}
	if beside.epoch != server.epoch {
		t.Error("the second opener has another epoch: every folder ETag would differ")
	}
	beside.Close()
	if _, err := os.Stat(filepath.Join(dir, ownDir, "running")); err != nil {
		t.Fatalf("the server's running mark is gone: %v", err)
	}
	server.Close()
	again, _ := Open(dir)
	defer again.Close()
	if again.epoch != server.epoch {
		t.Error("after a clean stop the epoch was renewed")
	}
}
