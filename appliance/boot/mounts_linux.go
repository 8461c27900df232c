package boot

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/u-root/u-root/pkg/libinit"
	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/board"
)

// baseNamespace is the userland's skeleton, as a table of u-root libinit
// steps. devtmpfs is not mounted by the kernel for an initramfs; the
// initramfs carries /dev/console itself so that PID 1 has a console before.
var baseNamespace = []libinit.Creator{
	libinit.Dir{Name: "/proc", Mode: 0o555},
	libinit.Mount{Source: "proc", Target: "/proc", FSType: "proc", Flags: unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
	libinit.Dir{Name: "/sys", Mode: 0o555},
	libinit.Mount{Source: "sysfs", Target: "/sys", FSType: "sysfs", Flags: unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
	libinit.Dir{Name: "/dev", Mode: 0o755},
	libinit.Mount{Source: "devtmpfs", Target: "/dev", FSType: "devtmpfs", Flags: unix.MS_NOSUID, Opts: "mode=0755"},
	libinit.Dir{Name: "/dev/pts", Mode: 0o755},
	libinit.Mount{Source: "devpts", Target: "/dev/pts", FSType: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Opts: "ptmxmode=0666,mode=0620"},
	libinit.Dir{Name: "/run", Mode: 0o755},
	libinit.Mount{Source: "tmpfs", Target: "/run", FSType: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_NODEV, Opts: "mode=0755,size=16m"},
	libinit.Dir{Name: "/tmp", Mode: 0o1777},
	libinit.Mount{Source: "tmpfs", Target: "/tmp", FSType: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_NODEV, Opts: "mode=1777,size=32m"},
	libinit.Dir{Name: "/etc", Mode: 0o755},
	libinit.Dir{Name: BootMount, Mode: 0o755},
	libinit.Dir{Name: PermMount, Mode: 0o755},
	libinit.Symlink{Target: "/proc/self/fd", NewPath: "/dev/fd"},
}

func mountBase(_ context.Context, s *System) error {
	old := unix.Umask(0)
	defer unix.Umask(old)
	for _, c := range baseNamespace {
		if err := c.Create(); err != nil && !os.IsExist(err) {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	os.WriteFile("/etc/hosts", []byte("127.0.0.1 localhost\n::1 localhost\n"), 0o644)
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
	fmt.Fprintf(s.Log, "bonesync: board %s\n", s.Board.Model)
	return nil
}
