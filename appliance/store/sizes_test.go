package store

import (
	"testing"
	"time"
)

// treeSize is the folder's size as a listing reads it (its record), or -1.
func treeSize(t *testing.T, tr *Tree, p string) int64 {
	t.Helper()
	return info(t, tr, p).TreeSize
}

func TestFolderSizesFollowChanges(t *testing.T) {
	tr := trashTree(t) // hello.txt (5 bytes) and sub/, put there from outside
	mkdirs(t, tr, "a", "a/b", "c")
	// Never counted: counted when asked, then kept.
	if got := treeSize(t, tr, "."); got != -1 {
		t.Errorf("an uncounted top says %d", got)
	}
	if n, err := tr.Size("/"); err != nil || n != 5 {
		t.Fatalf("Size(/) = %d, %v; want 5", n, err)
	}
	check := func(when string, want map[string]int64) {
		t.Helper()
		for p, n := range want {
			if got := treeSize(t, tr, p); got != n {
				t.Errorf("%s: %s holds %d bytes by its record, want %d", when, p, got, n)
			}
		}
	}
	check("counted", map[string]int64{".": 5, "a": 0, "a/b": 0})
	put(t, tr, "a/b/f.txt", "0123456789", time.Time{})
	check("after an upload", map[string]int64{".": 15, "a": 10, "a/b": 10, "c": 0})
	put(t, tr, "a/b/f.txt", "0123", time.Time{})
	check("after an overwrite", map[string]int64{".": 9, "a": 4, "a/b": 4})
	if err := tr.Rename("a/b", "c/b"); err != nil {
		t.Fatal(err)
	}
	check("after a folder moved", map[string]int64{".": 9, "a": 0, "c": 4, "c/b": 4})
	put(t, tr, "c/g.txt", "gg", time.Time{})
	if err := tr.Rename("c/g.txt", "c/b/f.txt"); err != nil { // over f.txt (4 bytes)
		t.Fatal(err)
	}
	check("after a rename over a file", map[string]int64{".": 7, "c": 2, "c/b": 2})
	if err := tr.RemoveAll("c/b"); err != nil {
		t.Fatal(err)
	}
	check("after a delete", map[string]int64{".": 5, "c": 0})
	items := trashList(t, tr)
	if _, _, err := tr.Bin().Restore(items[0].ID); err != nil {
		t.Fatal(err)
	}
	check("after a restore", map[string]int64{".": 7, "c": 2, "c/b": 2})
	// The usage is the top's record.
	if n, _ := tr.Usage(); n != 7 {
		t.Errorf("Usage = %d, want 7", n)
	}
}

// After an unclean stop the records are of another epoch: counted again,
// and right.
func TestFolderSizesAfterPowerCut(t *testing.T) {
	tr, _ := tree(t)
	mkdirs(t, tr, "a")
	put(t, tr, "a/f.txt", "abc", time.Time{})
	tr.Size("/")
	dir := tr.s.Dir()
	// No Close: the next Open takes it for a power cut.
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr2, _ := s2.Tree("alice")
	defer tr2.Close()
	if got := treeSize(t, tr2, "a"); got != -1 {
		t.Errorf("after a power cut a's record says %d, want none", got)
	}
	if n, _ := tr2.Size("/"); n != 8 {
		t.Errorf("Size(/) = %d, want 8", n)
	}
	if got := treeSize(t, tr2, "a"); got != 3 {
		t.Errorf("counted again, a says %d", got)
	}
}

// A count that overlaps a change (which may have seen the file before its
// bytes reach the records) records nothing; one after it does.
func TestCountDuringChangeRecordsNothing(t *testing.T) {
	tr := trashTree(t) // hello.txt (5 bytes), put there from outside: uncounted
	done := tr.sizeChange()
	if n, err := tr.Size("/"); err != nil || n != 5 {
		t.Fatalf("Size(/) = %d, %v", n, err)
	}
	if got := treeSize(t, tr, "."); got != -1 {
		t.Errorf("a count during a change recorded %d", got)
	}
	done()
	tr.Size("/")
	if got := treeSize(t, tr, "."); got != 5 {
		t.Errorf("a quiet count recorded %d, want 5", got)
	}
}
