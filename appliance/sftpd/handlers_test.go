package sftpd

import (
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/pkg/sftp"

	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
)

// client serves a fresh user tree over an in-memory pipe with the real
// request server and returns a pkg/sftp client for it.
func client(t *testing.T) *sftp.Client { return clientWithLocks(t, nil) }

// clientWithLocks is client with WebDAV's lock table for alice.
func clientWithLocks(t *testing.T, table *locks.Table) *sftp.Client {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := st.Tree("alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	a, b := net.Pipe()
	var locked func(...locks.Change) error
	if table != nil {
		locked = func(c ...locks.Change) error { return table.Check("alice", nil, c...) }
	}
	srv := sftp.NewRequestServer(a, Handlers(tree, locked))
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	c, err := sftp.NewClientPipe(b, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c *sftp.Client, name, content string, flags int) {
	t.Helper()
	f, err := c.OpenFile(name, flags)
	if err != nil {
		t.Fatalf("OpenFile(%s): %v", name, err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("Close(%s): %v", name, err)
	}
}

func read(t *testing.T, c *sftp.Client, name string) string {
	t.Helper()
	f, err := c.Open(name)
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

// Truncation is honoured, by path and on an open file, as sshfs and sync
// tools use it; it is never silently ignored.
func TestTruncate(t *testing.T) {
	c := client(t)
	write(t, c, "/t.txt", "hello world, long content", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err := c.Truncate("/t.txt", 5); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c, "/t.txt"); got != "hello" {
		t.Errorf("after Truncate(5): %q", got)
	}
	// Open without O_TRUNC, cut to nothing, write less than was there.
	f, err := c.OpenFile("/t.txt", os.O_WRONLY)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("xy"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c, "/t.txt"); got != "xy" {
		t.Errorf("after open, ftruncate(0), write xy: %q", got)
	}
}

func TestOpenMissingWithoutCreat(t *testing.T) {
	c := client(t)
	if f, err := c.OpenFile("/nope.txt", os.O_WRONLY); err == nil {
		f.Close()
		if _, err := c.Stat("/nope.txt"); err == nil {
			t.Error("opening a missing file without O_CREATE created it")
		}
	}
}

// A WebDAV lock taken while an SFTP upload is open still stops it from
// replacing the file at close.
func TestLockTakenMidUpload(t *testing.T) {
	table := locks.New()
	c := clientWithLocks(t, table)
	write(t, c, "doc.txt", "original", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	f, err := c.OpenFile("doc.txt", os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("from sftp"))
	if _, err := table.Create("alice", "/doc.txt", 0, false, "", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err == nil {
		t.Error("closing an upload to a file locked meanwhile succeeded")
	}
	if got := read(t, c, "doc.txt"); got != "original" {
		t.Errorf("the locked file became %q", got)
	}
	if err := c.Remove("doc.txt"); err == nil {
		t.Error("removing a locked file succeeded")
	}
}
