package boot

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/sysd"
)

// Supervisor runs the server (this same binary, `serve`) as a child and
// follows it as systemd would: the server notifies READY, its phase, STATUS
// and WATCHDOG heartbeats over NOTIFY_SOCKET (package sysd, both ends). The
// LEDs show those states; a server that stops sending heartbeats (wedged,
// or stopped with SIGSTOP), or is not ready in time, is killed and started
// again; one that dies is started again. The hardware watchdog is fed only
// while Healthy, so if even the kill does not free the server, the board
// resets.
type Supervisor struct {
	s *System
	// command makes the server's process; newSupervisor's runs this binary.
	command func(args []string) *exec.Cmd
	// notifyPath is the notify socket; watchdog the longest silence of a
	// ready server; startLimit how long it may take to be ready (a first
	// boot's benchmark included); killGrace how long a killed server may
	// take to go before Healthy says no; restartDelay the first wait
	// before a restart (doubling to 30 s).
	notifyPath                                    string
	watchdog, startLimit, killGrace, restartDelay time.Duration
	kill                                          func(pid int, sig syscall.Signal) error

	mu       sync.Mutex
	pid      int
	restarts int
	since    time.Time
	lastExit string
	stopping bool
	ready    bool
	served   bool          // a server of this boot was ready once
	failed   int           // server exits before it was ever ready
	status   string        // the server's last STATUS
	beat     time.Time     // its last heartbeat (or READY)
	killed   time.Time     // when it was killed as wedged; zero if not
	checked  time.Time     // the monitor's last look; zero before Run
	follows  bool          // notifications are read (the socket opened)
	between  []func()      // Restart's: to run, in order, before the next start
	exited   chan struct{} // closed when Run returns
	stop     chan struct{} // closed by Stop
}

func newSupervisor(s *System) *Supervisor {
	return &Supervisor{
		s:            s,
		command:      func(args []string) *exec.Cmd { return exec.Command("/proc/self/exe", args...) },
		notifyPath:   "/run/bonesync.notify",
		watchdog:     30 * time.Second, // as the systemd unit's WatchdogSec
		startLimit:   40 * time.Minute, // bench_budget is at most 30 min
		killGrace:    30 * time.Second,
		restartDelay: time.Second,
		kill:         syscall.Kill,
		exited:       make(chan struct{}),
		stop:         make(chan struct{}),
	}
}

// Args are the server's command line on the board.
func (sv *Supervisor) Args() []string {
	a := []string{"serve", "-state", StateDir, "-config", ConfigFile}
	a = append(a, sv.s.filesArgs()...)
	a = append(a, "-hostname", sv.s.Hostname, "-boot", BootMount, "-board", sv.s.Board.Name)
	for _, p := range listen.Ports {
		a = append(a, "-"+p.Name, p.Default)
	}
	if sv.s.Board.QuickBenchmark {
		a = append(a, "-quick")
	}
	return a
}

// Run keeps the server running until Stop. Restarts back off from 1 s to 30 s.
func (sv *Supervisor) Run(ctx context.Context) {
	defer close(sv.exited)
	mgr, err := sysd.Manage(sv.notifyPath)
	if err != nil {
		// Without notifications the server is only restarted when it
		// exits, and the LEDs stay at booting until then.
		sv.s.Log.Error("the server's heartbeats will not be followed", "err", err)
	} else {
		defer mgr.Close()
		sv.mu.Lock()
		sv.follows = true
		sv.mu.Unlock()
		go sv.listen(mgr)
	}
	monitorCtx, stopMonitor := context.WithCancel(ctx)
	defer stopMonitor()
	go sv.monitor(monitorCtx)
	backoff := sv.firstBackoff()
	for {
		sv.mu.Lock()
		if sv.stopping {
			sv.mu.Unlock()
			return
		}
		pending := sv.between
		sv.between = nil
		sv.mu.Unlock()
		for _, between := range pending {
			between()
		}
		start := time.Now()
		ws, err := sv.once(mgr)
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
		if len(sv.between) > 0 {
			// A restart asked for (Restart): no backoff, not an error;
			// what it asks to run runs at the top of the loop.
			sv.mu.Unlock()
			continue
		}
		sv.restarts++
		msg := sv.lastExit
		if !sv.served {
			sv.failed++
		}
		failed, served := sv.failed, sv.served
		sv.mu.Unlock()
		if !served && failed >= trialFailures && sv.s.onTrial() {
			// A new version whose server never serves: back to the old.
			go sv.s.giveUpTrial(fmt.Sprintf("its server %s (%d times)", msg, failed))
		}
		sv.s.LEDs.Set(LEDError)
		if time.Since(start) > 5*time.Minute {
			backoff = sv.firstBackoff()
		}
		sv.s.Log.Warn("the server stopped: starting it again", "why", msg, "in", backoff)
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

func (sv *Supervisor) once(mgr *sysd.Manager) (unix.WaitStatus, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	cmd := sv.command(sv.Args())
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Stdin = nil // the console's input is the admin prompt's
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if mgr != nil {
		cmd.Env = append(cmd.Env, mgr.Env(sv.watchdog)...)
	}
	// Held across the start: a server quick to say READY must not find
	// no pid to match (notified drops messages of any other pid).
	sv.mu.Lock()
	done, err := reap.start(cmd)
	w.Close()
	if err != nil {
		sv.mu.Unlock()
		r.Close()
		return 0, err
	}
	sv.pid, sv.since = cmd.Process.Pid, time.Now()
	sv.ready, sv.status, sv.beat, sv.killed = false, "", sv.since, time.Time{}
	if sv.stopping || len(sv.between) > 0 {
		// Stop or Restart came while it was being started: they found
		// no pid to signal.
		syscall.Kill(sv.pid, syscall.SIGTERM)
	}
	sv.mu.Unlock()
	go sv.watch(r)
	ws := <-done
	sv.mu.Lock()
	sv.pid = 0
	sv.mu.Unlock()
	return ws, nil
}

// watch copies the server's output to the console. Its state comes from
// its notifications (listen), not from its words.
func (sv *Supervisor) watch(r *os.File) {
	defer r.Close()
	io.Copy(sv.s.Console, r)
}

// listen follows the server's notifications.
func (sv *Supervisor) listen(mgr *sysd.Manager) {
	for {
		msg, err := mgr.Read()
		if err != nil {
			return
		}
		sv.notified(msg, time.Now())
	}
}

func (sv *Supervisor) notified(msg sysd.Message, now time.Time) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.pid == 0 || msg.Pid != sv.pid {
		return // from a server already replaced
	}
	if msg.Status != "" {
		sv.status = msg.Status
	}
	if msg.Phase == "benchmarking" && !sv.ready {
		sv.s.LEDs.Set(LEDBenchmarking)
	}
	if msg.Ready {
		sv.ready, sv.served, sv.beat = true, true, now
		sv.s.LEDs.Set(LEDServing)
		go sv.s.commitTrial()
	}
	if msg.Reboot != "" {
		sv.s.Log.Info("the server asks for a reboot", "why", msg.Reboot)
		go sv.s.shutdown(false)
	}
	if msg.EMMC == "flash" {
		sv.s.Log.Info("the server asks for the system to be copied to the eMMC")
		go sv.s.flashAsked()
	}
	if msg.Watchdog {
		sv.beat = now
	}
}

// monitor looks at the server every second until ctx ends.
func (sv *Supervisor) monitor(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		sv.check(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check kills a server that is wedged: ready but silent for longer than
// the watchdog interval, or not ready within startLimit. Run then starts it
// again, as after any exit.
func (sv *Supervisor) check(now time.Time) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.checked = now
	if sv.pid == 0 || sv.stopping || !sv.killed.IsZero() || !sv.follows {
		return // without notifications it is only restarted when it exits
	}
	var why string
	switch {
	// A quarter of slack: a ping may come late when the clock was just
	// stepped, or on a busy core.
	case sv.ready && now.Sub(sv.beat) > sv.watchdog+sv.watchdog/4:
		why = fmt.Sprintf("sent no heartbeat for %v", now.Sub(sv.beat).Round(time.Second))
	case !sv.ready && now.Sub(sv.since) > sv.startLimit:
		why = fmt.Sprintf("was not ready after %v", now.Sub(sv.since).Round(time.Second))
		if !sv.served {
			// On a trial, one start that never ends is enough to go
			// back (Run gives up at trialFailures).
			sv.failed = trialFailures - 1
		}
	default:
		return
	}
	sv.s.Log.Error("the server is wedged: killing it", "why", why)
	sv.s.LEDs.Set(LEDError)
	sv.killed = now
	sv.kill(sv.pid, syscall.SIGKILL)
}

// Healthy says whether the hardware watchdog may be fed: no if a wedged
// server was killed and is still there after killGrace, or if the monitor
// itself stopped looking.
func (sv *Supervisor) Healthy(now time.Time) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.pid != 0 && !sv.killed.IsZero() && now.Sub(sv.killed) > sv.killGrace {
		return false
	}
	return sv.checked.IsZero() || sv.stopping || now.Sub(sv.checked) < monitorStale
}

// monitorStale is how long the monitor (which looks every second) may go
// without looking before Healthy says no: PID 1 itself is stuck.
const monitorStale = 15 * time.Second

func (sv *Supervisor) firstBackoff() time.Duration { return sv.restartDelay }

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
	state := "starting"
	if sv.ready {
		state = fmt.Sprintf("ready, last heartbeat %v ago", time.Since(sv.beat).Round(time.Second))
	}
	line := fmt.Sprintf("server running, pid %d, up %v, %d restarts, %s", sv.pid, time.Since(sv.since).Round(time.Second), sv.restarts, state)
	if sv.status != "" {
		line += "\nserver status: " + sv.status
	}
	return line
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

// Restart stops the server (SIGTERM, as for a shutdown) and runs between
// after it has exited and before it starts again. Restarts asked for
// together run each between, in order, before the one next start. A
// server not running now (waiting to be started again) gets them before
// its next start all the same: nothing starts in between.
func (sv *Supervisor) Restart(between func()) {
	sv.mu.Lock()
	pid := sv.pid
	sv.between = append(sv.between, between)
	sv.mu.Unlock()
	if pid != 0 {
		syscall.Kill(pid, syscall.SIGTERM)
	}
}

// Signal sends sig to the server, if it runs.
func (sv *Supervisor) Signal(sig syscall.Signal) error {
	sv.mu.Lock()
	pid := sv.pid
	sv.mu.Unlock()
	if pid == 0 {
		return fmt.Errorf("the server is not running")
	}
	return syscall.Kill(pid, sig)
}
