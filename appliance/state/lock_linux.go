package state

import (
	"errors"
	"fmt"
	"os"

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
	return func() { f.Close() }, nil
}
