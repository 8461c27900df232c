package datadisk

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// need skips without a tool, and fails in CI, where the scripts install it.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (e2fsprogs)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

func testFormat() Format {
	return Format{Label: "BONESYNC", UUID: [16]byte{0x1e, 0x4b, 0x22, 0x9f, 0x11, 0x22, 0x43, 0x44, 0x95, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc},
		Now: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)}
}

// mkfsFile formats a sparse file of size bytes.
func mkfsFile(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := Mkfs(f, size, testFormat()); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMkfsFsck formats disks of several shapes (one group; a last group
// cut short; a last group too short to keep; many groups, with copies of
// the superblock in 3, 5, 7, 9, 25, 27, 49) and asks e2fsck, forced, if
// anything is wrong.
func TestMkfsFsck(t *testing.T) {
	need(t, "e2fsck", "dumpe2fs")
	for _, size := range []int64{32 << 20, 100 << 20, 128<<20 + 40<<12, 300<<20 + 7<<12, 8 << 30, 20 << 30} { // 20 GiB: descriptors over two blocks
		p := mkfsFile(t, size)
		out, err := exec.Command("e2fsck", "-fn", p).CombinedOutput()
		if err != nil {
			t.Fatalf("size %d: e2fsck: %v\n%s", size, err, out)
		}
		out, err = exec.Command("dumpe2fs", "-h", p).CombinedOutput()
		if err != nil {
			t.Fatalf("dumpe2fs: %v\n%s", err, out)
		}
		for _, want := range []string{"Filesystem volume name:   BONESYNC", "has_journal", "extent", "uninit_bg",
			"Inode size:	          256", "Filesystem UUID:          1e4b229f-1122-4344-9566-778899aabbcc", "Total journal size:"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("size %d: dumpe2fs -h lacks %q:\n%s", size, want, out)
			}
		}
	}
}

func TestMkfsRefuses(t *testing.T) {
	if err := Mkfs(nil, 8<<20, testFormat()); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Errorf("an 8 MiB disk: %v", err)
	}
	if err := Mkfs(nil, 17<<40, testFormat()); err == nil || !strings.Contains(err.Error(), "16 TiB") {
		t.Errorf("a 17 TiB disk: %v", err)
	}
	f := testFormat()
	f.Label = "a label far too long"
	if err := Mkfs(nil, 64<<20, f); err == nil {
		t.Error("a long label was taken")
	}
}

// TestMkfsMount mounts what Mkfs wrote with the kernel's ext4 (as root, on
// a loop device), fills it past group 0 with files and their extended
// attributes, and has e2fsck check it again after the unmount: the
// kernel's and e2fsck's reading of the uninitialised groups agree.
func TestMkfsMount(t *testing.T) {
	need(t, "e2fsck", "mount", "umount", "losetup")
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	p := mkfsFile(t, 600<<20)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-o", "loop", "-t", "ext4", p, dir).CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount: %v\n%s", err, out)
		}
		t.Skipf("mount: %v\n%s", err, out)
	}
	mounted := true
	defer func() {
		if mounted {
			exec.Command("umount", dir).Run()
		}
	}()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	for i := 0; i < 300; i++ { // 300 MiB: groups 1 and 2 and beyond
		sub := filepath.Join(dir, "files", string(rune('a'+i%20)))
		os.MkdirAll(sub, 0o755)
		f := filepath.Join(sub, strings.Repeat("x", i%40)+".bin")
		if err := os.WriteFile(f, chunk, 0o644); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if err := unix.Setxattr(f, "user.bonesync", chunk[:53], 0); err != nil {
			t.Fatalf("setxattr: %v", err)
		}
	}
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	mounted = false
	if out, err := exec.Command("e2fsck", "-fn", p).CombinedOutput(); err != nil {
		t.Fatalf("e2fsck after use: %v\n%s", err, out)
	}
}
