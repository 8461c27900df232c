//go:build vm

package systemd

// Under a real systemd: a Debian bookworm amd64 system (debootstrap, cached by
// scripts/systest-rootfs.sh) booted in QEMU, where systest.sh installs the
// .deb and checks the service. Run by make test-systemd-vm.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestUnderSystemd(t *testing.T) {
	tarball := "../out/cache/systest-rootfs.tar"
	if out, err := exec.Command("../scripts/systest-rootfs.sh", "../out/cache").CombinedOutput(); err != nil {
		t.Fatalf("systest-rootfs.sh: %v\n%s", err, out)
	}
	work := t.TempDir()
	root := filepath.Join(work, "root")
	os.Mkdir(root, 0o755)
	if out, err := exec.Command("tar", "-C", root, "-xf", tarball).CombinedOutput(); err != nil {
		t.Fatalf("untar: %v %s", err, out)
	}
	// The package, the test script and the unit that runs it at boot.
	put := func(src, dst string, mode os.FileMode) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(root, dst)), 0o755)
		if err := os.WriteFile(filepath.Join(root, dst), b, mode); err != nil {
			t.Fatal(err)
		}
	}
	put(deb(t, "amd64"), "root/bonesync.deb", 0o644)
	put("systest.sh", "usr/local/sbin/systest", 0o755)
	os.WriteFile(filepath.Join(root, "etc/systemd/system/systest.service"), []byte(
		"[Unit]\nDescription=bonesync systemd test\nAfter=multi-user.target\n[Service]\nType=oneshot\nExecStart=/usr/local/sbin/systest\nTimeoutStartSec=30min\n[Install]\nWantedBy=multi-user.target\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "etc/systemd/system/multi-user.target.wants"), 0o755)
	os.Symlink("/etc/systemd/system/systest.service", filepath.Join(root, "etc/systemd/system/multi-user.target.wants/systest.service"))
	os.WriteFile(filepath.Join(root, "etc/fstab"), []byte("/dev/vda / ext4 rw,errors=remount-ro 0 1\n"), 0o644)
	os.WriteFile(filepath.Join(root, "etc/hostname"), []byte("systest\n"), 0o644)
	// No password prompt anywhere: nothing waits for a login.
	kernel, _ := filepath.Glob(filepath.Join(root, "boot/vmlinuz-*"))
	initrd, _ := filepath.Glob(filepath.Join(root, "boot/initrd.img-*"))
	if len(kernel) == 0 || len(initrd) == 0 {
		t.Fatal("the root file system has no kernel or initramfs")
	}
	img := filepath.Join(work, "root.ext4")
	if out, err := exec.Command("mke2fs", "-q", "-t", "ext4", "-d", root, img, "3G").CombinedOutput(); err != nil {
		t.Fatalf("mke2fs: %v %s", err, out)
	}
	log := &lockedBuf{}
	start := time.Now()
	qemu := exec.Command("qemu-system-x86_64", "-m", "1024", "-smp", "2", "-nographic", "-no-reboot",
		"-kernel", kernel[0], "-initrd", initrd[0],
		"-append", "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 panic=-1",
		"-drive", "file="+img+",format=raw,if=virtio", "-nic", "none")
	qemu.Stdout, qemu.Stderr = log, log
	if err := qemu.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- qemu.Wait() }()
	defer qemu.Process.Kill()
	select {
	case <-done:
	case <-time.After(25 * time.Minute):
		t.Fatalf("the systemd VM did not finish in 25 minutes:\n%s", tailOf(log.String()))
	}
	out := log.String()
	os.WriteFile("../out/systemd-vm.log", []byte(out), 0o644)
	results := regexp.MustCompile(`SYSTEST (ok|FAIL|info) ([^\r\n]*)`).FindAllStringSubmatch(out, -1)
	if len(results) == 0 || !strings.Contains(out, "SYSTEST DONE") {
		t.Fatalf("the test script did not finish:\n%s", tailOf(out))
	}
	for _, r := range results {
		switch r[1] {
		case "FAIL":
			t.Errorf("under systemd: %s failed", r[2])
		default:
			t.Logf("under systemd: %s %s", r[1], r[2])
		}
	}
	t.Logf("whole systemd test %v", time.Since(start).Round(time.Second))
}

func tailOf(s string) string {
	if len(s) > 5000 {
		return "...\n" + s[len(s)-5000:]
	}
	return s
}
