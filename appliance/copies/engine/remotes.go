package engine

import (
	"context"
	"fmt"

	"github.com/rclone/rclone/fs"
	"github.com/rclone/rclone/fs/cache"

	"github.com/bonesync/bonesync/appliance/budget"
)

// remotes are the crypt remotes a run uses on the target, each with its
// key derived: opened before the run sends anything (memory.go says why).
type remotes struct {
	files  fs.Fs // current/files
	extra  fs.Fs // current/extra
	backup fs.Fs // old/STAMP: what this run replaces or removes
	old    fs.Fs // old/, which the run prunes
	opened []fs.Fs
}

// openRemotes opens the run's remotes under root ("bonesync-copy:"), the
// one for backupDir (the engine's --backup-dir) among them, one key
// derivation at a time, each under a draw of keyMemory from mem.
//
// They are opened through the engine's cache of remotes and pinned in it
// for the run: the sync asks that cache for its backup folder by name,
// and would otherwise make the remote again, deriving its key again,
// with the transfers' memory in use. close unpins them and ends their
// connections.
func openRemotes(ctx context.Context, mem *budget.Budget, root, backupDir string) (*remotes, error) {
	r := &remotes{}
	for _, o := range []struct {
		to   *fs.Fs
		path string
	}{{&r.files, root + "current/files"}, {&r.extra, root + "current/extra"}, {&r.backup, backupDir}, {&r.old, root + "old"}} {
		if err := r.open(ctx, mem, o.to, o.path); err != nil {
			return r, err
		}
	}
	return r, nil
}

// open opens the remote at path into *to (openRemote), for close to end.
func (r *remotes) open(ctx context.Context, mem *budget.Budget, to *fs.Fs, path string) error {
	f, err := openRemote(ctx, mem, path)
	if err != nil {
		return err
	}
	*to = f
	r.opened = append(r.opened, f)
	return nil
}

// openRemote opens one remote, its key derived under a draw of
// keyMemory. The draw takes the whole admission (budget.Wait: a run
// waits for room rather than fail, one run at a time being its queue),
// and its release collects the derivation's 16 MiB before anything else
// can take it.
func openRemote(ctx context.Context, mem *budget.Budget, path string) (fs.Fs, error) {
	release, err := mem.Wait(ctx, "copy", keyMemory)
	if err != nil {
		return nil, err
	}
	f, err := cache.Get(ctx, path)
	release()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cache.Pin(f)
	return f, nil
}

// close unpins the remotes and ends what the engine holds open for them
// (their SFTP connections): between runs the box keeps none.
func (r *remotes) close() {
	for _, f := range r.opened {
		cache.Unpin(f)
	}
	// Dropped from the cache, each is shut down (its finalizer), and so
	// are the target's remotes they wrap. The whole cache: the copies are
	// the engine's only user in a process, one run at a time (Lock).
	cache.Clear()
	r.opened = nil
}
