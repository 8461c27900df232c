package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteReplacesAtomically(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Write("a", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Write("a", []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := d.Read("a")
	if err != nil || string(b) != "two" {
		t.Errorf("Read(a) = %q, %v, want two", b, err)
	}
	fi, _ := os.Stat(d.Join("a"))
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode = %v, want 0600", got)
	}
	left, _ := filepath.Glob(filepath.Join(d.Path, ".*"))
	if len(left) != 0 {
		t.Errorf("temp files left behind: %v", left)
	}
}

func TestFailedWriteKeepsOldFile(t *testing.T) {
	d, _ := Open(t.TempDir())
	if err := d.Write("a", []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory in the way of the rename makes the final step fail after the
	// temp file was written.
	if err := os.Mkdir(d.Join("b"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d.Join("b"), "x"), nil, 0o600)
	if err := d.Write("b", []byte("new"), 0o600); err == nil {
		t.Fatal("Write over a non-empty directory succeeded, want error")
	}
	left, _ := filepath.Glob(filepath.Join(d.Path, ".*"))
	if len(left) != 0 {
		t.Errorf("temp files left behind after failure: %v", left)
	}
	if b, _ := d.Read("a"); string(b) != "old" {
		t.Errorf("a = %q, want old", b)
	}
}

func TestStaleTempsRemovedOnOpen(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".tls.key.tmp-123")
	os.WriteFile(stale, []byte("half"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	fresh := filepath.Join(dir, ".users.json.tmp-456") // another process's write under way
	os.WriteFile(fresh, []byte("new"), 0o600)
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temp %s still there after Open", stale)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("Open removed %s, a write in progress", fresh)
	}
}

func TestReadEmptyIsDamaged(t *testing.T) {
	d, _ := Open(t.TempDir())
	os.WriteFile(d.Join("report.json"), nil, 0o600)
	_, err := d.Read("report.json")
	if !IsDamaged(err) {
		t.Fatalf("Read(empty) = %v, want Damaged", err)
	}
	if want := d.Join("report.json"); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	if _, err := d.Read("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v, want ErrNotExist", err)
	}
}

func TestTimeFile(t *testing.T) {
	d, _ := Open(t.TempDir())
	f := TimeFile{d}
	if got, err := f.Load(); err != nil || !got.IsZero() {
		t.Fatalf("Load() on a new dir = %v, %v, want zero, nil", got, err)
	}
	want := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	if err := f.Save(want); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Load(); err != nil || !got.Equal(want) {
		t.Errorf("Load() = %v, %v, want %v", got, err, want)
	}
	os.WriteFile(d.Join(Clock), []byte("yesterday\n"), 0o644)
	if _, err := f.Load(); !IsDamaged(err) {
		t.Errorf("Load(garbage) = %v, want Damaged", err)
	}
}

func TestTryLock(t *testing.T) {
	d, _ := Open(t.TempDir())
	unlock, err := d.Lock()
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file, so a second open conflicts even
	// within one process, as another bonesync process would.
	if _, err := d.TryLock(); !errors.Is(err, ErrBusy) {
		t.Errorf("TryLock while locked = %v, want ErrBusy", err)
	}
	unlock()
	u2, err := d.TryLock()
	if err != nil {
		t.Fatalf("TryLock after unlock = %v", err)
	}
	u2()
}

// Writing the bytes a file already holds touches nothing: same inode, same
// modification time. Other bytes or other permissions replace it.
func TestWriteUnchangedIsNoWrite(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Write(Report, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(d.Join(Report))
	time.Sleep(20 * time.Millisecond)
	if err := d.Write(Report, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(d.Join(Report))
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("writing the same bytes replaced the file")
	}
	if err := d.Write(Report, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d.Join(Report)); fi.Mode().Perm() != 0o600 {
		t.Error("a new permission was not applied")
	}
	if err := d.Write(Report, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := d.Read(Report); string(b) != "two" {
		t.Errorf("read %q after writing new bytes", b)
	}
}

// Root writing in a directory that belongs to the service's user (sudo
// bonesync user passwd on a Debian install) keeps the files that user's.
func TestRootKeepsTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	base := t.TempDir()
	os.Chown(base, 65534, 65534)
	d, err := Open(filepath.Join(base, "state"))
	if err != nil {
		t.Fatal(err)
	}
	os.Chown(d.Path, 65534, 65534)
	if err := d.Write("users.json", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	owner := func() uint32 {
		fi, err := os.Stat(d.Join("users.json"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Uid
	}
	if owner() != 65534 {
		t.Fatalf("a new file belongs to %d, want the directory's owner 65534", owner())
	}
	if err := d.Write("users.json", []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if owner() != 65534 {
		t.Errorf("a replaced file belongs to %d, want 65534", owner())
	}
	// A file an earlier sudo left root's is mended, even with the same bytes.
	os.Chown(d.Join("users.json"), 0, 0)
	if err := d.Write("users.json", []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if owner() != 65534 {
		t.Errorf("a root-owned file in the service's directory stays %d's", owner())
	}
}

// A second server on the same directory is refused, told who serves it;
// once the first is gone, the directory is free again.
func TestServing(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	release, err := d.Serving()
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Serving()
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("another bonesync serves %s (pid %d, since ", d.Path, os.Getpid())) {
		t.Errorf("a second server: %v", err)
	}
	release()
	again, err := d.Serving()
	if err != nil {
		t.Fatalf("after the first was gone: %v", err)
	}
	again()
}
