// Package sysd is bonesync's side of systemd: readiness and status
// notifications, the watchdog, socket activation, journal priorities and the
// directories systemd hands a service (github.com/coreos/go-systemd/v22).
// Outside systemd every function is a cheap no-op, so the same binary behaves
// the same under its own PID 1, under systemd and in a terminal.
package sysd

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/coreos/go-systemd/v22/daemon"
)

// notify sends one sd_notify message; false if there is no NOTIFY_SOCKET.
func notify(state string) bool {
	ok, _ := daemon.SdNotify(false, state)
	return ok
}

// Ready tells systemd the service is up: keys loaded, listeners open;
// listening names where each listens (by port name, listen.Ports), for a
// manager that wants to know (bonesync's PID 1, a benchmark; systemd
// ignores the variable).
func Ready(listening map[string]string) {
	var l []string
	for name, addr := range listening {
		l = append(l, name+"="+addr)
	}
	slices.Sort(l)
	notify(daemon.SdNotifyReady + "\nX_BONESYNC_LISTEN=" + strings.Join(l, " "))
}

// Stopping tells systemd the service is shutting down.
func Stopping() { notify(daemon.SdNotifyStopping) }

// Phase tells the service manager what the service is busy with before it
// is ready ("benchmarking"): systemd ignores the variable (its X_ prefix
// marks it as the service's own), bonesync's PID 1 (Manager) shows it on
// the LEDs.
func Phase(p string) { notify("X_BONESYNC_PHASE=" + p) }

// RequestReboot asks bonesync's PID 1 (Manager) to reboot the box, for
// the reason why: an update was written and is to be tried. It reports
// whether a service manager was told; systemd ignores the variable.
func RequestReboot(why string) bool {
	return notify("X_BONESYNC_REBOOT=" + strings.ReplaceAll(why, "\n", " "))
}

// RequestEMMCFlash asks bonesync's PID 1 to copy the system to the
// board's eMMC (the console's `emmc flash`), in the background; how it
// went is PID 1's record in the state directory (package emmc). It
// reports whether a service manager was told; systemd ignores it.
func RequestEMMCFlash() bool { return notify("X_BONESYNC_EMMC=flash") }

// Status sets the one-line status `systemctl status` shows.
func Status(s string) { notify("STATUS=" + strings.ReplaceAll(s, "\n", " ")) }

// Dirs returns the state and configuration directories systemd made for the
// unit (StateDirectory=, ConfigurationDirectory=), or "" when not set.
func Dirs() (state, config string) {
	first := func(v string) string { s, _, _ := strings.Cut(v, ":"); return s }
	return first(os.Getenv("STATE_DIRECTORY")), first(os.Getenv("CONFIGURATION_DIRECTORY"))
}

// Listeners returns the sockets systemd passed (LISTEN_FDS), by role: the
// names a socket unit gives them with FileDescriptorName=, or, if it gives
// them no distinct names, roles in the order of its ListenStream= lines.
// Nil without socket activation.
func Listeners(roles []string) (map[string]net.Listener, error) {
	// activation.Files keeps the descriptors' order; ListenersWithNames
	// returns a map, whose order is random when the sockets are unnamed.
	var passed []namedListener
	for _, f := range activation.Files(true) {
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("socket activation: %s: %w", f.Name(), err)
		}
		passed = append(passed, namedListener{f.Name(), ln})
	}
	if len(passed) == 0 {
		return nil, nil
	}
	return assign(passed, roles)
}

type namedListener struct {
	name string
	ln   net.Listener
}

// assign gives each passed socket its role: by name, else in order.
func assign(passed []namedListener, roles []string) (map[string]net.Listener, error) {
	out := map[string]net.Listener{}
	var unnamed []net.Listener
	for _, p := range passed {
		if !slices.Contains(roles, p.name) {
			unnamed = append(unnamed, p.ln)
			continue
		}
		if out[p.name] != nil {
			return nil, fmt.Errorf("socket activation: more than one socket named %s", p.name)
		}
		out[p.name] = p.ln
	}
	for _, ln := range unnamed {
		for _, role := range roles {
			if out[role] == nil {
				out[role] = ln
				break
			}
		}
	}
	return out, nil
}

// Watchdog pings systemd's watchdog (WatchdogSec=) at half its interval for
// as long as healthy says the server works, and stops when it does not, so
// that systemd restarts a wedged server. It returns at once when the unit has
// no watchdog. stop ends it.
func Watchdog(healthy func() bool) (stop func()) {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil || interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if healthy() {
					notify(daemon.SdNotifyWatchdog)
				}
			}
		}
	}()
	return func() { close(done) }
}
