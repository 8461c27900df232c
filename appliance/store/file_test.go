package store

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPropsStayWithTheFile: what a protocol keeps with a file (Props) is
// read back through the file, through its folder's listing, and through a
// copy's upload; an empty value takes it away.
func TestPropsStayWithTheFile(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Tree("ann")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	put(t, tr, "/a.txt", "hello", time.Unix(1e9, 0))
	f, err := tr.Open("/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := []byte(strings.Repeat("p", 2000)) // more than the first read's buffer
	if err := SetProps(f, want); err != nil {
		t.Skipf("no user xattrs here: %v", err)
	}
	if got, err := Props(f); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Props = %d bytes, %v; want %d", len(got), err, len(want))
	}
	dir, err := tr.OpenDir("/")
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if _, ok, err := tr.InfoIn(dir, "a.txt"); !ok || err != nil {
		t.Fatalf("InfoIn: %v %v", ok, err)
	}
	if got, err := PropsIn(dir, "a.txt"); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("PropsIn = %d bytes, %v", len(got), err)
	}
	u, err := tr.Create("/b.txt", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.CopyFrom(f, 5); err != nil {
		t.Fatal(err)
	}
	if err := u.SetProps(want); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := tr.Open("/b.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got, _ := Props(g); !bytes.Equal(got, want) {
		t.Errorf("the copy's props: %d bytes", len(got))
	}
	if err := SetProps(f, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := Props(f); err != nil || got != nil {
		t.Errorf("after removing: %q %v", got, err)
	}
}

// notOurs is a File the store did not open.
type notOurs struct{ File }

// TestForeignFilesRefused: a File the store did not open is refused where
// the store would read its descriptor, not followed into a panic.
func TestForeignFilesRefused(t *testing.T) {
	tr := &Tree{}
	if _, err := tr.Describe(notOurs{}); err == nil {
		t.Error("Describe took a foreign file")
	}
	if _, err := Props(notOurs{}); err == nil {
		t.Error("Props took a foreign file")
	}
	if _, _, ok := RecordedSHA1(notOurs{}); ok {
		t.Error("RecordedSHA1 read a foreign file")
	}
}
