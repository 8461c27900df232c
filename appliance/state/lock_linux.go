package state

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive lock on the directory (a .lock file, flock), for
// work that writes several files that belong together. It returns the unlock
// function.
func (d *Dir) Lock() (func(), error) {
	f, err := os.OpenFile(d.Join(".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock state dir: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock state dir %s: %w", d.Path, err)
	}
	return func() { f.Close() }, nil
}
