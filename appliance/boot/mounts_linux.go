package boot

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/board"
)

// mountPoint is one directory of the userland's skeleton and the file
// system mounted on it (none if FSType is empty).
type mountPoint struct {
	Dir            string
	Mode           os.FileMode
	FSType, Source string
	Flags          uintptr
	Opts           string
}

// baseNamespace is the userland's skeleton, in order. devtmpfs is not
// mounted by the kernel for an initramfs; the initramfs carries
// /dev/console itself so that PID 1 has a console before.
var baseNamespace = []mountPoint{
	{"/proc", 0o555, "proc", "proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
	{"/sys", 0o555, "sysfs", "sysfs", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
	{"/dev", 0o755, "devtmpfs", "devtmpfs", unix.MS_NOSUID, "mode=0755"},
	{"/dev/pts", 0o755, "devpts", "devpts", unix.MS_NOSUID | unix.MS_NOEXEC, "ptmxmode=0666,mode=0620"},
	{"/run", 0o755, "tmpfs", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=0755,size=16m"},
	{"/tmp", 0o1777, "tmpfs", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777,size=32m"},
	{Dir: "/etc", Mode: 0o755},
	{Dir: BootMount, Mode: 0o755},
	{Dir: PermMount, Mode: 0o755},
	{Dir: DataMount, Mode: 0o755},
}

func mountBase(_ context.Context, s *System) error {
	old := unix.Umask(0)
	defer unix.Umask(old)
	for _, m := range baseNamespace {
		if err := os.Mkdir(m.Dir, m.Mode); err != nil && !os.IsExist(err) {
			return fmt.Errorf("mkdir %s: %w", m.Dir, err)
		}
		if m.FSType == "" {
			continue
		}
		if err := unix.Mount(m.Source, m.Dir, m.FSType, m.Flags, m.Opts); err != nil && err != unix.EBUSY {
			return fmt.Errorf("mount %s on %s: %w", m.FSType, m.Dir, err)
		}
	}
	if err := os.Symlink("/proc/self/fd", "/dev/fd"); err != nil && !os.IsExist(err) {
		return fmt.Errorf("symlink /dev/fd: %w", err)
	}
	os.WriteFile("/etc/hosts", []byte("127.0.0.1 localhost\n::1 localhost\n"), 0o644) // dropped: localhost resolves without it, in Go's resolver
	os.Setenv("PATH", "/")
	return nil
}

// identify finds the board by the device tree's compatible strings. An
// unknown board still boots, without board-specific LEDs.
func identify(_ context.Context, s *System) error {
	b, err := os.ReadFile("/proc/device-tree/compatible")
	if err != nil {
		s.Board = &board.Board{Name: "unknown"}
		s.LEDs = newLEDs(nil, s.Log)
		return fmt.Errorf("no device tree: %w", err)
	}
	compat := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	s.Board = board.Match(compat)
	if s.Board == nil {
		s.Board = &board.Board{Name: "unknown"}
		s.LEDs = newLEDs(nil, s.Log)
		return fmt.Errorf("unknown board %v; going on without board data", compat)
	}
	s.LEDs = newLEDs(s.Board.LEDs, s.Log)
	s.LEDs.Set(LEDBooting)
	s.Log.Info("board identified", "board", s.Board.Model)
	return nil
}
