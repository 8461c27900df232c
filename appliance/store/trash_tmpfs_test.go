package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// smallDisk mounts a tmpfs of size bytes in a temporary folder and returns
// it; it is unmounted when the test ends. It needs root: without, the test
// is skipped (and fails where CI is set).
func smallDisk(t *testing.T, size int64) string {
	t.Helper()
	skip := t.Skip
	if os.Getenv("CI") != "" {
		skip = t.Fatal
	}
	if os.Geteuid() != 0 {
		skip("mounting a small tmpfs to fill needs root; run the store's tests as root to check the trash on a real full disk")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		skip(fmt.Sprintf("mount a tmpfs: %v", err))
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	// The store keeps a file's digests in a user extended attribute:
	// tmpfs has them since Linux 6.6.
	probe := filepath.Join(dir, "probe")
	os.WriteFile(probe, nil, 0o600)
	if err := unix.Setxattr(probe, metaAttr, []byte{1}, 0); err != nil {
		t.Logf("this tmpfs takes no user xattrs (%v): files will have no digests", err)
	}
	os.Remove(probe)
	return dir
}

// TestTrashGivesWayOnFullDisk fills a 32 MiB disk, moves it all to the
// trash, and uploads more: the oldest trash gives way, the disk's free
// space never ends below the reserve while there is trash, and every
// upload succeeds; then, with no reserve, an upload too big for the space
// left gets it from the trash when its writes meet ENOSPC.
func TestTrashGivesWayOnFullDisk(t *testing.T) {
	const mib = 1 << 20
	const reserve = 8 * mib
	dir := smallDisk(t, 32*mib)
	s, err := Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetTrashPolicy(month, reserve)
	tr, err := s.Tree("alice")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	chunk := bytes.Repeat([]byte("0123456789abcdef"), mib/16)
	upload := func(name string, size int, announce bool) error {
		if announce { // as WebDAV does with a Content-Length
			if err := tr.Fits(int64(size)); err != nil {
				return err
			}
		}
		u, err := tr.Create(name, false)
		if err != nil {
			return err
		}
		for left := size; left > 0; left -= mib {
			if _, err := u.Write(chunk[:min(left, mib)]); err != nil {
				u.Abort()
				return err
			}
		}
		return u.Close()
	}
	free := func() int64 {
		_, n, err := diskSpace(dir)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// 20 MiB of files, then all of it in the trash: f0 the oldest.
	for i := range 10 {
		if err := upload(fmt.Sprintf("f%d", i), 2*mib, true); err != nil {
			t.Fatalf("fill f%d: %v", i, err)
		}
	}
	for i := range 10 {
		if err := tr.Remove(fmt.Sprintf("f%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := used(t, tr); n != 0 {
		t.Errorf("usage with everything in the trash = %d, want 0", n)
	}
	// What a client is told is free counts the trash, which gives way.
	if avail, err := tr.Free(); err != nil || avail-free() != 20*mib {
		t.Errorf("Free() = %d, %v; want the disk's %d and the trash's 20 MiB", avail, err, free())
	}
	t.Logf("free with 20 MiB in the trash: %.1f MiB", float64(free())/mib)

	// New uploads: the trash gives way, oldest first.
	for i := 0; ; i++ {
		if i == 30 {
			t.Fatal("30 uploads and the trash is still not empty")
		}
		if err := upload(fmt.Sprintf("n%d", i), 2*mib, true); err != nil {
			t.Fatalf("upload n%d with trash to give way: %v", i, err)
		}
		items := trashList(t, tr)
		if f := free(); len(items) > 0 && f < reserve {
			t.Errorf("after n%d: %.1f MiB free with %d trash items left, below the %d MiB reserve", i, float64(f)/mib, len(items), reserve/mib)
		}
		for j, it := range items { // newest first: f9, f8, ... what is left
			if want := fmt.Sprintf("f%d", 9-j); it.Path != want {
				t.Fatalf("after n%d the trash holds %s where %s was due: not oldest first", i, it.Path, want)
			}
		}
		if len(items) == 0 {
			t.Logf("the trash made way for %d uploads; %.1f MiB free", i+1, float64(free())/mib)
			break
		}
	}

	// Everything to the trash again; with no reserve, an upload bigger
	// than the space left, size unannounced (as SFTP writes), meets ENOSPC
	// and the trash gives way under it.
	entries, _ := tr.ReadDir(".")
	for _, e := range entries {
		if err := tr.Remove(e.Name()); err != nil {
			t.Fatal(err)
		}
	}
	s.SetTrashPolicy(month, 0)
	before := len(trashList(t, tr))
	big := int(free()) + 4*mib
	if err := upload("big", big, false); err != nil {
		t.Fatalf("upload of %.1f MiB with %.1f MiB free and trash to give way: %v", float64(big)/mib, float64(free())/mib, err)
	}
	if fi, err := tr.Stat("big"); err != nil || fi.Size() != int64(big) {
		t.Errorf("big: %v, %v", fi, err)
	}
	items := trashList(t, tr)
	if len(items) == 0 || len(items) >= before {
		t.Errorf("trash items: %d before, %d after; want some, not all, given way", before, len(items))
	}
	t.Logf("an upload of %.1f MiB took %d of %d trash items", float64(big)/mib, before-len(items), before)
}
