package boot

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// reaper is PID 1's duty to collect every exited process: our own children
// and any orphan reparented to us (a benchmark client whose server died).
// Processes started through it get their exit status back from it, since
// exec.Cmd.Wait would race with the reaping.
type reaper struct {
	mu        sync.Mutex
	waiting   map[int]chan unix.WaitStatus
	unclaimed map[int]unix.WaitStatus
}

var reap = startReaper()

func startReaper() *reaper {
	r := &reaper{waiting: map[int]chan unix.WaitStatus{}, unclaimed: map[int]unix.WaitStatus{}}
	if os.Getpid() != 1 {
		return r
	}
	sig := make(chan os.Signal, 16)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		for range sig {
			r.collect()
		}
	}()
	return r
}

func (r *reaper) collect() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
		r.mu.Lock()
		if ch, ok := r.waiting[pid]; ok {
			delete(r.waiting, pid)
			ch <- ws
		} else {
			r.unclaimed[pid] = ws
			if len(r.unclaimed) > 256 { // orphans nobody asks about
				clear(r.unclaimed)
			}
		}
		r.mu.Unlock()
	}
}

// start starts cmd and returns a channel that receives its exit status.
func (r *reaper) start(cmd *exec.Cmd) (<-chan unix.WaitStatus, error) {
	ch := make(chan unix.WaitStatus, 1)
	if os.Getpid() != 1 {
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() {
			cmd.Wait()
			ch <- unix.WaitStatus(cmd.ProcessState.Sys().(syscall.WaitStatus))
		}()
		return ch, nil
	}
	// Held across the start, so the child cannot be reaped before it is
	// registered; an old status left for the same (reused) pid is stale.
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	delete(r.unclaimed, cmd.Process.Pid)
	r.waiting[cmd.Process.Pid] = ch
	return ch, nil
}

// run starts cmd and waits for it.
func (r *reaper) run(cmd *exec.Cmd) (unix.WaitStatus, error) {
	ch, err := r.start(cmd)
	if err != nil {
		return 0, err
	}
	return <-ch, nil
}
