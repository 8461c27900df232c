package boot

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/health"
)

const promptHelp = `commands:
  report                 the benchmark report
  status                 addresses, server, uptime
  user add|passwd|del NAME, user list, user key add NAME FILE
  bench                  measure again (the server picks up the new choice)
  copy run|key           the encrypted copy off the box, now; the box's SSH key for it
  copy accept-key        pin the SFTP target's new host key, after checking it (docs/copies.md)
  disk                   the data disk, and the USB disks plugged in
  disk adopt DEVICE      erase a USB disk (e.g. sda) and move the files onto it
  emmc                   the board's eMMC: its size, what is on it, the last flash
  emmc flash             copy this system, its state and files to the eMMC (docs/emmc.md)
  emmc card-boot         let the card boot its own system again after a flash
  update FILE            write an update bundle to the other slot and boot it on trial
  update keys|trust KEY  the keys bundles must be signed with; add one (ed25519 BASE64)
  update allow-downgrade let the next bundle be older than the highest version run (once, for an hour)
  kill -SIGNAL           signal the server: STOP to try the watchdog, TERM to restart it
  reboot, poweroff
`

// command runs one line typed at the console in (whose input an
// interactive command reads); what it prints goes to every console.
func (s *System) command(ctx context.Context, f []string, in *os.File) {
	self := func(args ...string) {
		if err := s.runSelf(in, args...); err != nil {
			fmt.Fprintf(s.Console, "%v\n", err)
		}
	}
	if f[0] == "bonesync" && len(f) > 1 {
		f = f[1:] // as the README writes it: bonesync update FILE
	}
	switch f[0] {
	case "help", "?":
		fmt.Fprint(s.Console, promptHelp)
	case "disk":
		s.diskCommand(ctx, f[1:])
	case "emmc":
		s.emmcCommand(ctx, f[1:])
	case "report":
		self("report", "-state", StateDir)
	case "status":
		s.status()
	case "copy":
		if why := s.filesGone(); why != "" && len(f) > 1 && (f[1] == "run" || f[1] == "restore") {
			fmt.Fprintf(s.Console, "copy: the files are not here: %s\n", why)
			return
		}
		self(append([]string{"copy", "-state", StateDir, "-config", ConfigFile, "-files", s.filesDir()}, f[1:]...)...)
		if len(f) > 1 && f[1] == "restore" && s.Server != nil {
			// The server counts each user's usage once: it starts again to
			// count the files restored beside it.
			fmt.Fprintf(s.Console, "restarting the server to count the restored files\n")
			s.signalServer([]string{"-TERM"})
		}
	case "user":
		self(append([]string{"user", "-state", StateDir, "-files", s.filesDir()}, f[1:]...)...)
	case "bench":
		args := []string{"bench", "-state", StateDir, "-config", ConfigFile}
		if s.Board != nil && s.Board.QuickBenchmark {
			args = append(args, "-quick")
		}
		self(args...)
	case "kill":
		s.signalServer(f[1:])
	case "update":
		s.applyUpdate(f[1:])
	case "reboot", "poweroff", "halt":
		// A flash copies from /perm, which the shutdown unmounts: it is
		// waited for (a power cut meanwhile leaves the card as it was).
		if s.flashing.Load() {
			fmt.Fprintln(s.Console, "an eMMC flash is under way (`emmc` shows it): wait for it to end, then "+f[0])
			return
		}
		s.shutdown(f[0] != "reboot")
	default:
		fmt.Fprintf(s.Console, "unknown command %q\n%s", f[0], promptHelp)
	}
}

// runSelf runs this binary with args (a subcommand), its input the
// console in, its output every console's.
func (s *System) runSelf(in *os.File, args ...string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, w, w
	copied := make(chan struct{})
	go func() {
		io.Copy(s.Console, r)
		r.Close()
		close(copied)
	}()
	_, err = reap.run(cmd)
	w.Close()
	<-copied // its last words before the next prompt
	return err
}

// status works whatever step the boot stopped at: the prompt is offered
// when a step fails, maybe before the board was identified.
func (s *System) status() {
	if s.Board != nil {
		fmt.Fprintf(s.Console, "board:   %s\n", s.Board.Model)
	} else {
		fmt.Fprintf(s.Console, "board:   not identified (the boot stopped before)\n")
	}
	fmt.Fprintf(s.Console, "system:  %s\n", s.slotStatus())
	fmt.Fprintf(s.Console, "uptime:  %v\n", time.Since(s.started).Round(time.Second))
	if st := s.net.State(); st != nil {
		for _, a := range st.Addrs {
			fmt.Fprintf(s.Console, "address: %s on %s (%s)\n", a.String(), st.Interface, st.Method)
		}
	}
	fmt.Fprintf(s.Console, "name:    %s.local\n", s.Hostname)
	fmt.Fprintf(s.Console, "usb:     %s\n", s.usb)
	if s.Server != nil {
		fmt.Fprintf(s.Console, "%s\n", s.Server.Status())
	}
	fmt.Fprintf(s.Console, "files:   %s\n", s.diskStatus())
	if st, ok := copies.ReadStatus(copies.Dir(StateDir)); ok {
		fmt.Fprintf(s.Console, "copy:    %s\n", st)
	}
	fmt.Fprintf(s.Console, "LEDs:    %s%s\n", s.LEDs.State(), s.LEDs.Sysfs())
	fmt.Fprintf(s.Console, "watchdog: %s%s\n", s.dog.String(), watchdogSysfs())
	if s.disk != nil {
		card := health.NamedDisk(filepath.Base(s.disk.DataPart), s.disk.Name)
		if c, err := card.Counters(); err == nil { // an idle box leaves them flat
			fmt.Fprintf(s.Console, "card:    %d writes, %d sectors written since boot\n", c.Writes, c.WrittenSectors)
		}
	}
	for _, r := range (&health.Log{Dir: health.Dir(StateDir)}).ReadAll() { // the server's hourly look
		fmt.Fprintf(s.Console, "disk:    %s\n", r)
	}
}

// signalServer sends a signal to the server: `kill -STOP` wedges it, which
// the supervisor must notice by its missing heartbeats.
func (s *System) signalServer(args []string) {
	sigs := map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}
	if len(args) != 1 || sigs[strings.TrimPrefix(strings.TrimPrefix(args[0], "-"), "SIG")] == 0 {
		fmt.Fprintf(s.Console, "usage: kill -STOP|-CONT|-TERM|-KILL\n")
		return
	}
	if err := s.Server.Signal(sigs[strings.TrimPrefix(strings.TrimPrefix(args[0], "-"), "SIG")]); err != nil {
		fmt.Fprintf(s.Console, "kill: %v\n", err)
	}
}
