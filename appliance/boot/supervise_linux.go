package boot

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supervisor runs the server (this same binary, `serve`) as a child, shows
// its state on the LEDs, and starts it again if it dies.
type Supervisor struct {
	s *System
	// command makes the server's process; newSupervisor's runs this binary.
	command func(args []string) *exec.Cmd

	mu       sync.Mutex
	pid      int
	restarts int
	since    time.Time
	lastExit string
	stopping bool
	exited   chan struct{} // closed when Run returns
	stop     chan struct{} // closed by Stop
}

func newSupervisor(s *System) *Supervisor {
	return &Supervisor{
		s:       s,
		command: func(args []string) *exec.Cmd { return exec.Command("/proc/self/exe", args...) },
		exited:  make(chan struct{}),
		stop:    make(chan struct{}),
	}
}

// Args are the server's command line on the board.
func (sv *Supervisor) Args() []string {
	a := []string{"serve", "-state", StateDir, "-config", ConfigFile, "-files", FilesDir,
		"-https", ":443", "-http", ":80", "-ssh", ":22"}
	if sv.s.Board.BenchBudget == "quick" {
		a = append(a, "-quick")
	}
	return a
}

// Run keeps the server running until Stop. Restarts back off from 1 s to 30 s.
func (sv *Supervisor) Run(ctx context.Context) {
	defer close(sv.exited)
	backoff := sv.firstBackoff()
	for {
		sv.mu.Lock()
		if sv.stopping {
			sv.mu.Unlock()
			return
		}
		sv.mu.Unlock()
		start := time.Now()
		ws, err := sv.once()
		sv.mu.Lock()
		stopping := sv.stopping
		if err != nil {
			sv.lastExit = err.Error()
		} else {
			sv.lastExit = describe(ws)
		}
		if stopping {
			sv.mu.Unlock()
			return
		}
		sv.restarts++
		msg := sv.lastExit
		sv.mu.Unlock()
		sv.s.LEDs.Set(LEDError)
		if time.Since(start) > 5*time.Minute {
			backoff = sv.firstBackoff()
		}
		fmt.Fprintf(sv.s.Log, "bonesync: the server %s; starting it again in %v\n", msg, backoff)
		select {
		case <-time.After(backoff):
		case <-sv.stop:
			return
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (sv *Supervisor) once() (unix.WaitStatus, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	cmd := sv.command(sv.Args())
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Stdin = nil // the console's input is the admin prompt's
	cmd.Env = append(os.Environ(), "BONESYNC_BOARD="+sv.s.Board.Name)
	done, err := reap.start(cmd)
	w.Close()
	if err != nil {
		r.Close()
		return 0, err
	}
	sv.mu.Lock()
	sv.pid, sv.since = cmd.Process.Pid, time.Now()
	sv.mu.Unlock()
	go sv.watch(r)
	ws := <-done
	sv.mu.Lock()
	sv.pid = 0
	sv.mu.Unlock()
	return ws, nil
}

// watch copies the server's output to the console and follows its state.
func (sv *Supervisor) watch(r *os.File) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(sv.s.Log, line)
		switch {
		case strings.Contains(line, "benchmarking"):
			sv.s.LEDs.Set(LEDBenchmarking)
		case strings.HasPrefix(line, "serving HTTPS"):
			sv.s.LEDs.Set(LEDServing)
		}
	}
}

// restartDelay is the first wait before a restart; tests shorten it.
var restartDelay = time.Second

func (sv *Supervisor) firstBackoff() time.Duration { return restartDelay }

// Stop asks the server to stop (SIGTERM: it saves the clock and closes its
// listeners) and waits up to timeout before killing it.
// It also ends a restart backoff, so no new server starts while the box
// shuts down.
func (sv *Supervisor) Stop(timeout time.Duration) {
	sv.mu.Lock()
	if !sv.stopping {
		sv.stopping = true
		close(sv.stop)
	}
	pid := sv.pid
	sv.mu.Unlock()
	if pid != 0 {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	select {
	case <-sv.exited:
	case <-time.After(timeout):
		sv.mu.Lock()
		pid = sv.pid
		sv.mu.Unlock()
		if pid != 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-sv.exited:
		case <-time.After(2 * time.Second):
		}
	}
}

// Status is one line for the console's status command.
func (sv *Supervisor) Status() string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.pid == 0 {
		return fmt.Sprintf("server not running (last: %s, %d restarts)", sv.lastExit, sv.restarts)
	}
	return fmt.Sprintf("server running, pid %d, up %v, %d restarts", sv.pid, time.Since(sv.since).Round(time.Second), sv.restarts)
}

func describe(ws unix.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exited with status %d", ws.ExitStatus())
	case ws.Signaled():
		return fmt.Sprintf("was killed by %v", ws.Signal())
	}
	return fmt.Sprintf("stopped (%#x)", int(ws))
}
