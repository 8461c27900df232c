package sftpd

import (
	"io"
	"net"
	"os"
	"strings"
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
	c, _ := newClient(t, table, 0)
	return c
}

// newClient is client with a lock table and a quota, and alice's tree.
func newClient(t *testing.T, table *locks.Table, quota int64) (*sftp.Client, *store.Tree) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return storeClient(t, st, table, quota)
}

// storeClient is newClient on a store of the caller's.
func storeClient(t *testing.T, st *store.Store, table *locks.Table, quota int64) (*sftp.Client, *store.Tree) {
	t.Helper()
	tree, err := st.Tree("alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	tree.SetQuota(quota)
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
	return c, tree
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

// SETSTAT and FSETSTAT do what they say or refuse: times and permission
// bits kept, owners and unsafe bits refused, a size only within the quota.
func TestSetstat(t *testing.T) {
	c, tree := newClient(t, nil, 1<<20)
	write(t, c, "f.txt", "content", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	when := time.Date(2015, 6, 7, 8, 9, 10, 0, time.UTC)
	if err := c.Chtimes("f.txt", when, when); err != nil {
		t.Fatal(err)
	}
	if fi, _ := c.Stat("f.txt"); !fi.ModTime().Equal(when) {
		t.Errorf("after Chtimes the date is %v", fi.ModTime())
	}
	if err := c.Chmod("f.txt", 0o640); err != nil {
		t.Errorf("chmod 0640: %v", err)
	}
	if fi, _ := c.Stat("f.txt"); fi.Mode().Perm() != 0o640 {
		t.Errorf("after chmod 0640 the mode is %v", fi.Mode())
	}
	// Kept within the mask: no setuid, and the owner keeps read and write
	// (a read-only file copied with its mode keeps its date too).
	for mode, want := range map[os.FileMode]os.FileMode{os.ModeSetuid | 0o755: 0o755, 0o444: 0o644, 0o044: 0o644} {
		if err := c.Chmod("f.txt", mode); err != nil {
			t.Errorf("chmod %o: %v", mode, err)
		}
		if fi, _ := c.Stat("f.txt"); fi.Mode().Perm() != want || fi.Mode()&os.ModeSetuid != 0 {
			t.Errorf("after chmod %o the mode is %v, want %o", mode, fi.Mode(), want)
		}
	}
	if err := c.Chown("f.txt", 1000, 1000); err == nil {
		t.Error("chown succeeded")
	}
	if err := c.Truncate("f.txt", 1<<40); err == nil {
		t.Error("a SETSTAT to 1 TB succeeded")
	}
	if fi, _ := c.Stat("f.txt"); fi.Size() != 7 {
		t.Errorf("a refused size left %d bytes", fi.Size())
	}
	if used, _ := tree.Usage(); used != 7 {
		t.Errorf("usage after a refused size: %d", used)
	}
	// On an open file: the date is the client's when it is closed (put -p).
	f, _ := c.OpenFile("g.txt", os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	f.Write([]byte("new"))
	if err := c.Chtimes("g.txt", when, when); err != nil { // FSETSTAT takes the same path
		t.Fatalf("setstat times on an open file: %v", err)
	}
	if err := f.Chmod(0o600); err != nil {
		t.Fatalf("fsetstat mode: %v", err)
	}
	f.Close()
	if fi, _ := c.Stat("g.txt"); !fi.ModTime().Equal(when) || fi.Mode().Perm() != 0o600 {
		t.Errorf("put -p: date %v, mode %v", fi.ModTime(), fi.Mode())
	}
}

// A file being written can be stat'ed by path and by handle in the session
// that writes it (sshfs, paramiko), and nowhere else until it is closed.
func TestStatOfOpenFile(t *testing.T) {
	c := client(t)
	f, err := c.OpenFile("new.txt", os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("12345"))
	if fi, err := c.Stat("new.txt"); err != nil || fi.Name() != "new.txt" || fi.Size() != 5 {
		t.Errorf("stat of an open file = %v, %v", fi, err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 5 {
		t.Errorf("fstat of an open file = %v, %v", fi, err)
	}
	f.Close()
	if got := read(t, c, "new.txt"); got != "12345" {
		t.Errorf("after close: %q", got)
	}
}

func TestStatVFS(t *testing.T) {
	c, _ := newClient(t, nil, 1<<20)
	write(t, c, "f.txt", strings.Repeat("x", 4096*10), os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	st, err := c.StatVFS("/")
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalSpace() != 1<<20 || st.FreeSpace() != 1<<20-4096*10 {
		t.Errorf("statvfs with a 1 MiB quota: total %d, free %d", st.TotalSpace(), st.FreeSpace())
	}
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		`md5sum a\ b`:           {"md5sum", "a b"},
		`md5sum a\ b\'c`:        {"md5sum", "a b'c"},
		`sha1sum 'x y' "z\"w"`:  {"sha1sum", "x y", `z"w`},
		`  md5sum   /p/ü.txt  `: {"md5sum", "/p/ü.txt"},
	} {
		got, err := shellWords(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("shellWords(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"md5sum *", "md5sum $(id)", "ls; rm", `md5sum 'x`, "a | b"} {
		if _, err := shellWords(bad); err == nil {
			t.Errorf("shellWords(%q) accepted", bad)
		}
	}
}

// sshfs sends a REMOVE (or RENAME) of a file it has just written before the
// CLOSE that commits it (FUSE's release comes after close(2) returns): as
// on a local disk, the removed file is not committed at its close, and the
// renamed one is committed under its new name.
func TestRemoveWaitsForTheClose(t *testing.T) {
	c, tree := newClient(t, nil, 0)
	for _, op := range []string{"remove", "rename"} {
		f, err := c.OpenFile("late.txt", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("x"))
		if op == "remove" {
			err = c.Remove("late.txt")
		} else {
			err = c.PosixRename("late.txt", "moved.txt")
		}
		if err != nil {
			t.Fatalf("%s of a file whose close comes late: %v", op, err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("the close after the %s: %v", op, err)
		}
		if _, err := tree.Stat("late.txt"); err == nil {
			t.Errorf("after the %s and the close, late.txt is there", op)
		}
	}
	if got := read(t, c, "moved.txt"); got != "x" {
		t.Errorf("moved.txt = %q", got)
	}
}

// Every way SFTP deletes or replaces a file keeps the old one in the
// trash: a remove, an overwrite, a truncation, a rename over it, and a
// remove that comes before the close of the file being written.
func TestTrashKeepsWhatSFTPReplaces(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st.SetTrashPolicy(time.Hour, 0)
	c, tree := storeClient(t, st, nil, 0)
	create := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	write(t, c, "a.txt", "one", create)
	write(t, c, "a.txt", "two", create)
	if err := c.Truncate("a.txt", 1); err != nil {
		t.Fatal(err)
	}
	write(t, c, "b.txt", "bee", create)
	if err := c.PosixRename("b.txt", "a.txt"); err != nil {
		t.Fatal(err)
	}
	var got []string
	vs, err := tree.Bin().Versions("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		f, err := tree.Bin().Open(v.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got = append(got, string(b))
	}
	if want := "t two one"; strings.Join(got, " ") != want {
		t.Errorf("versions of a.txt, newest first = %q, want %q", got, want)
	}
	if err := c.Remove("a.txt"); err != nil {
		t.Fatal(err)
	}
	f, err := c.OpenFile("a.txt", create)
	if err != nil {
		t.Fatal(err)
	}
	write(t, c, "late.txt", "old", create)
	late, err := c.OpenFile("late.txt", create)
	if err != nil {
		t.Fatal(err)
	}
	late.Write([]byte("new"))
	if err := c.Remove("late.txt"); err != nil {
		t.Fatal(err)
	}
	late.Close()
	f.Close()
	items, err := tree.Bin().Items()
	if err != nil {
		t.Fatal(err)
	}
	deleted := map[string]bool{}
	for _, it := range items {
		if it.Kind == store.KindDeleted {
			deleted[it.Path] = true
		}
	}
	if len(deleted) != 2 || !deleted["a.txt"] || !deleted["late.txt"] {
		t.Errorf("deleted items: %v, want a.txt and late.txt", deleted)
	}
	if list, _ := c.ReadDir("/"); len(list) != 1 || list[0].Name() != "a.txt" {
		t.Errorf("listing after the deletes: %v, want only the new, empty a.txt", list)
	}
}

// One 10-byte WRITE at 2^40 would make a sparse terabyte that the close's
// digest, a COPY and a restore all read or write out in full: refused with
// why, the upload not kept. Out-of-order writes that leave small holes,
// as sftp's parallel requests do, still work.
func TestWriteFarPastTheEndRefused(t *testing.T) {
	c, _ := newClient(t, nil, 0)
	f, err := c.OpenFile("/far.bin", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt([]byte("0123456789"), 1<<40)
	if err == nil || !strings.Contains(err.Error(), "on the disk") {
		t.Fatalf("a write at 2^40: %v, want a refusal that says why", err)
	}
	f.Close()
	if _, err := c.Stat("/far.bin"); err == nil {
		if fi, _ := c.Stat("/far.bin"); fi.Size() > 0 {
			t.Errorf("the refused upload was kept, %d bytes", fi.Size())
		}
	}
	// Nor a step at a time: each hole within the free space, which holes
	// never use up, the file's size past it.
	st, err := c.StatVFS("/")
	if err != nil {
		t.Fatal(err)
	}
	free := int64(st.FreeSpace())
	s, err := c.OpenFile("/steps.bin", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	var stepErr error
	for i := int64(1); i <= 8 && stepErr == nil; i++ {
		_, stepErr = s.WriteAt([]byte("x"), i*free/3)
	}
	if stepErr == nil || !strings.Contains(stepErr.Error(), "on the disk") {
		t.Errorf("holes made a step at a time past the free space: %v", stepErr)
	}
	s.Close()
	g, err := c.OpenFile("/holes.bin", os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteAt([]byte("later"), 1<<20); err != nil {
		t.Fatalf("a write 1 MiB on: %v", err)
	}
	if _, err := g.WriteAt([]byte("first"), 0); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := c.Stat("/holes.bin"); err != nil || fi.Size() != 1<<20+5 {
		t.Errorf("out-of-order writes: %v %v", fi, err)
	}
}
