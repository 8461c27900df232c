package boot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/u-root/u-root/pkg/watchdog"
)

// watchdogTimeout is how long the box may go unfed before the hardware
// resets it. PID 1 feeds it at a third of that, while the supervisor says
// the server is healthy (Supervisor.Healthy): a wedged server is killed and
// started again within its 30 s heartbeat interval, and only if that fails
// does the board reset.
const watchdogTimeout = 60 * time.Second

// watchdogState is what the console's status shows.
type watchdogState struct {
	mu      sync.Mutex
	armed   time.Duration // 0: no hardware watchdog
	fed     time.Time
	holding string // why it is not being fed, if it is not
}

func (w *watchdogState) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.armed == 0:
		return "none"
	case w.holding != "":
		return fmt.Sprintf("armed %v, NOT fed since %v ago (%s): the board resets", w.armed, time.Since(w.fed).Round(time.Second), w.holding)
	}
	return fmt.Sprintf("armed %v, fed %v ago", w.armed, time.Since(w.fed).Round(time.Second))
}

func startWatchdog(ctx context.Context, s *System) error {
	w, err := watchdog.Open(watchdog.Dev)
	if err != nil {
		return fmt.Errorf("no hardware watchdog (%v); going on without", err)
	}
	if err := w.SetTimeout(watchdogTimeout); err != nil {
		s.Log.Warn("the watchdog's timeout not set", "err", err)
	}
	timeout, err := w.Timeout()
	if err != nil || timeout <= 0 {
		timeout = watchdogTimeout
	}
	s.dog.mu.Lock()
	s.dog.armed, s.dog.fed = timeout, time.Now()
	s.dog.mu.Unlock()
	w.KeepAlive()
	go func() {
		t := time.NewTicker(timeout / 3)
		defer t.Stop()
		for range t.C {
			now := time.Now()
			healthy := s.Server == nil || s.Server.Healthy(now)
			s.dog.mu.Lock()
			if healthy {
				w.KeepAlive()
				s.dog.fed, s.dog.holding = now, ""
			} else if s.dog.holding == "" {
				s.dog.holding = "the server is wedged and could not be killed"
				s.Log.Error("no longer feeding the watchdog: the board resets", "why", s.dog.holding, "within", timeout)
			}
			s.dog.mu.Unlock()
		}
	}()
	s.Log.Info("watchdog armed", "timeout", timeout)
	return nil
}

// watchdogSysfs reads the watchdog back from the kernel,
// " (sysfs: softdog, active, timeout 60)", or "" without one.
func watchdogSysfs() string {
	dir := "/sys/class/watchdog/watchdog0"
	read := func(f string) string {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		return strings.TrimSpace(string(b))
	}
	id := read("identity")
	if id == "" {
		return ""
	}
	return fmt.Sprintf(" (sysfs: %s, %s, timeout %s)", id, read("state"), read("timeout"))
}
