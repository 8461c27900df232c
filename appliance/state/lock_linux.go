package state

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive lock on the directory (a .lock file, flock), for
// work that writes several files that belong together. It returns the unlock
// function.
func (d *Dir) Lock() (func(), error) { return d.lock(unix.LOCK_EX) }

// TryLock is Lock without waiting: if another process holds the lock it
// returns an error satisfying errors.Is(err, ErrBusy).
func (d *Dir) TryLock() (func(), error) { return d.lock(unix.LOCK_EX | unix.LOCK_NB) }

// ErrBusy is returned by TryLock when the directory is locked elsewhere.
var ErrBusy = errors.New("state directory busy")

func (d *Dir) lock(how int) (func(), error) {
	f, err := os.OpenFile(d.Join(".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock state dir: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", d.Path, ErrBusy)
		}
		return nil, fmt.Errorf("lock state dir %s: %w", d.Path, err)
	}
	return func() { f.Close() }, nil // dropped: closing ends the lock, the note is a note
}

// Serving marks the directory as served by this process until release:
// a lock (flock on .server) that a second server on the same directory
// cannot take, and the pid and start time in that file, which its error
// names. The lock goes with the process, however it ends.
func (d *Dir) Serving() (release func(), err error) {
	f, err := os.OpenFile(d.Join(".server"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mark the state directory as served: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		who, _ := os.ReadFile(d.Join(".server"))
		f.Close() // dropped: nothing was written to it
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another bonesync serves %s (%s): stop it first, or give this one a state directory of its own (-state DIR): %w",
				d.Path, strings.TrimSpace(string(who)), ErrBusy)
		}
		return nil, fmt.Errorf("mark %s as served: %w", d.Path, err)
	}
	// Who serves, for the message a second server gives: a note for
	// people, not state (the lock is what counts).
	f.Truncate(0) // dropped: a note for people
	fmt.Fprintf(f, "pid %d, since %s", os.Getpid(), time.Now().Format("2006-01-02 15:04:05"))
	return func() { f.Close() }, nil
}
