package boot

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/board"
)

// TestMain lets this test binary stand in for the server: with
// BONESYNC_TEST_SERVER set it notifies its supervisor through package sysd,
// exactly as `bonesync serve` does, and behaves as the variable says.
func TestMain(m *testing.M) {
	switch os.Getenv("BONESYNC_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "exit":
		sysd.Phase("benchmarking")
		time.Sleep(50 * time.Millisecond)
		os.Exit(3)
	case "serve":
		sysd.Phase("benchmarking")
		time.Sleep(50 * time.Millisecond)
		sysd.Ready(nil)
		sysd.Watchdog(func() bool { return true })
		select {}
	case "wedge": // ready, then stopped as `kill -STOP` would
		sysd.Ready(nil)
		stop := sysd.Watchdog(func() bool { return true })
		time.Sleep(300 * time.Millisecond)
		stop()
		syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		select {}
	}
}

type safeBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *safeBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// supervised is a Supervisor whose server is this test binary, behaving as
// modes says run after run (the last mode for all further runs).
func supervised(t *testing.T, modes ...string) (*Supervisor, *safeBuf) {
	log := &safeBuf{}
	s := &System{Console: log, Log: sysd.NewConsoleLogger(log, "bonesync: "), Board: &board.Board{Name: "test"}}
	s.LEDs = newLEDs(nil, s.Log)
	sv := newSupervisor(s)
	sv.restartDelay = 10 * time.Millisecond
	sv.notifyPath = filepath.Join(t.TempDir(), "notify")
	sv.watchdog = time.Second
	var mu sync.Mutex
	runs := 0
	sv.command = func([]string) *exec.Cmd {
		mu.Lock()
		defer mu.Unlock()
		mode := modes[min(runs, len(modes)-1)]
		runs++
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "BONESYNC_TEST_SERVER="+mode)
		return cmd
	}
	t.Cleanup(func() { sv.Stop(5 * time.Second) })
	return sv, log
}

func waitFor(t *testing.T, what string, log *safeBuf, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 20 s:\n%s", what, log)
		}
	}
}

// A server that dies is started again, and the LEDs follow its
// notifications: benchmarking, then serving once it is ready.
func TestSupervisorRestarts(t *testing.T) {
	sv, log := supervised(t, "exit", "exit", "serve")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sv.Run(ctx)
	waitFor(t, "ready server", log, func() bool {
		return strings.Contains(sv.Status(), "ready") && sv.s.LEDs.State() == LEDServing
	})
	if !strings.Contains(sv.Status(), "2 restarts") {
		t.Errorf("Status() = %q, want 2 restarts", sv.Status())
	}
	if !strings.Contains(log.String(), "the server stopped: starting it again why=exited with status 3 ") {
		t.Errorf("the console does not say the server died:\n%s", log)
	}
	// Heartbeats keep it alive past several watchdog intervals.
	time.Sleep(2500 * time.Millisecond)
	if strings.Contains(log.String(), "killing it") || !sv.Healthy(time.Now()) {
		t.Errorf("a server sending heartbeats was taken for wedged:\n%s", log)
	}
	sv.Stop(5 * time.Second)
	if strings.Contains(sv.Status(), "server running") {
		t.Errorf("after Stop: %s", sv.Status())
	}
}

// A server that stops sending heartbeats (SIGSTOP) is killed and started
// again, and the hardware watchdog stays fed throughout.
func TestSupervisorKillsWedgedServer(t *testing.T) {
	sv, log := supervised(t, "wedge", "serve")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sv.Run(ctx)
	unhealthy := false
	waitFor(t, "restart after the wedge", log, func() bool {
		unhealthy = unhealthy || !sv.Healthy(time.Now())
		return strings.Contains(sv.Status(), "1 restarts") && strings.Contains(sv.Status(), "ready")
	})
	if !strings.Contains(log.String(), "the server is wedged: killing it why=sent no heartbeat for") {
		t.Errorf("the console does not say why the server was killed:\n%s", log)
	}
	if unhealthy {
		t.Error("the watchdog went unfed although the restart worked")
	}
}

// If the kill does not free the server, Healthy says no after killGrace:
// the hardware watchdog then resets the board.
func TestSupervisorUnhealthyWhenKillFails(t *testing.T) {
	sv, log := supervised(t, "wedge")
	sv.killGrace = 500 * time.Millisecond
	var pid atomic.Int64
	sv.kill = func(p int, _ syscall.Signal) error { pid.Store(int64(p)); return nil } // a kill that does nothing
	t.Cleanup(func() {
		if p := pid.Load(); p != 0 {
			syscall.Kill(int(p), syscall.SIGKILL)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sv.Run(ctx)
	waitFor(t, "unhealthy supervisor", log, func() bool { return !sv.Healthy(time.Now()) })
	if pid.Load() == 0 {
		t.Fatal("no kill was attempted")
	}
}

// Stopping during a restart's backoff starts no new server.
func TestSupervisorStopDuringBackoff(t *testing.T) {
	sv, log := supervised(t, "exit")
	sv.restartDelay = 2 * time.Second
	runs := 0
	inner := sv.command
	sv.command = func(a []string) *exec.Cmd { runs++; return inner(a) }
	go sv.Run(context.Background())
	waitFor(t, "restart message", log, func() bool { return strings.Contains(log.String(), "starting it again") })
	sv.Stop(5 * time.Second)
	time.Sleep(2500 * time.Millisecond)
	if runs != 1 {
		t.Errorf("the server was started %d times, want 1: Stop did not end the restarts", runs)
	}
}

// Restart stops the server, runs its function between the stop and the
// next start (the clock floor is saved there), and counts no failure.
func TestSupervisorRestart(t *testing.T) {
	sv, log := supervised(t, "serve")
	go sv.Run(context.Background())
	waitFor(t, "ready server", log, func() bool { return strings.Contains(sv.Status(), "ready") })
	var between atomic.Bool
	first := sv.Status()
	sv.Restart(func() {
		if strings.Contains(sv.Status(), "server running") {
			t.Error("between ran while the old server still ran")
		}
		between.Store(true)
	})
	waitFor(t, "restarted server", log, func() bool {
		return between.Load() && strings.Contains(sv.Status(), "ready") && sv.Status() != first
	})
	if !strings.Contains(sv.Status(), "0 restarts") {
		t.Errorf("a restart asked for counts as a failure: %s", sv.Status())
	}

	// Two restarts asked for together (the clock's and the data disk's):
	// both run, in order, before the one next start; none is lost.
	var order []string
	var mu sync.Mutex
	note := func(s string) func() {
		return func() {
			if strings.Contains(sv.Status(), "server running") {
				t.Errorf("%s ran while a server ran", s)
			}
			mu.Lock()
			order = append(order, s)
			mu.Unlock()
		}
	}
	second := sv.Status()
	sv.Restart(note("first"))
	sv.Restart(note("second"))
	waitFor(t, "restarted again", log, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 2 && strings.Contains(sv.Status(), "ready") && sv.Status() != second
	})
	if order[0] != "first" || order[1] != "second" {
		t.Errorf("ran %v", order)
	}
}

// Without the notify socket the server is only restarted when it exits:
// its missing READY is no reason to kill it.
func TestSupervisorWithoutNotifications(t *testing.T) {
	sv, log := supervised(t, "serve")
	sv.notifyPath = "/nonexistent/notify"
	sv.startLimit = 500 * time.Millisecond
	go sv.Run(context.Background())
	time.Sleep(3 * time.Second)
	if strings.Contains(log.String(), "killing it") || !strings.Contains(sv.Status(), "0 restarts") {
		t.Errorf("a server that cannot notify was killed:\n%s\n%s", sv.Status(), log)
	}
}
