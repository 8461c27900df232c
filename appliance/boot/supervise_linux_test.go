package boot

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/board"
)

type safeBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *safeBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A server that dies is started again, and the LEDs follow its output.
func TestSupervisorRestarts(t *testing.T) {
	restartDelay = 10 * time.Millisecond
	defer func() { restartDelay = time.Second }()
	log := &safeBuf{}
	s := &System{Log: log, Board: &board.Board{Name: "test"}}
	s.LEDs = newLEDs(nil, log)
	sv := newSupervisor(s)
	runs := 0
	sv.command = func([]string) *exec.Cmd {
		runs++
		if runs < 3 {
			return exec.Command("sh", "-c", "echo '  benchmarking tls ecdsa-p256'; exit 3")
		}
		return exec.Command("sh", "-c", "echo 'serving HTTPS on [::]:443'; exec sleep 60")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sv.Run(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(sv.Status(), "server running") || sv.s.LEDs.State() != LEDServing {
		if time.Now().After(deadline) {
			t.Fatalf("no running server after restarts: %s, LED %q\n%s", sv.Status(), sv.s.LEDs.State(), log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(sv.Status(), "2 restarts") {
		t.Errorf("Status() = %q, want 2 restarts", sv.Status())
	}
	if !strings.Contains(log.String(), "the server exited with status 3; starting it again") {
		t.Errorf("the console does not say the server died:\n%s", log)
	}
	sv.Stop(5 * time.Second)
	if strings.Contains(sv.Status(), "server running") {
		t.Errorf("after Stop: %s", sv.Status())
	}
}

// Stopping during a restart's backoff starts no new server.
func TestSupervisorStopDuringBackoff(t *testing.T) {
	restartDelay = 2 * time.Second
	defer func() { restartDelay = time.Second }()
	log := &safeBuf{}
	s := &System{Log: log, Board: &board.Board{Name: "test"}}
	sv := newSupervisor(s)
	runs := 0
	sv.command = func([]string) *exec.Cmd { runs++; return exec.Command("sh", "-c", "exit 1") }
	go sv.Run(context.Background())
	for i := 0; !strings.Contains(log.String(), "starting it again") && i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	sv.Stop(5 * time.Second)
	time.Sleep(2500 * time.Millisecond)
	if runs != 1 {
		t.Errorf("the server was started %d times, want 1: Stop did not end the restarts", runs)
	}
}
