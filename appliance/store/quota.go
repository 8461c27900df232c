package store

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
)

// ErrQuota is returned (wrapped) when a write would take a user past their
// quota.
var ErrQuota = errors.New("over your quota")

// usage is the bytes a user's files take: counted once by walking the
// tree, then kept by every change through the store; and the user's locks.
type usage struct {
	commit sync.Mutex // a commit's quota check and its rename, one at a time
	trash  sync.Mutex // changes to the user's trash folder (trashLock)
	sizes  sync.Mutex // the folders' records (sizes.go)
	// changing is how many changes of the files' bytes are between their
	// first touch of the disk and their folders' records; changed counts
	// those done (sizeChange).
	changing, changed atomic.Int64
	mu                sync.Mutex
	known             bool
	bytes             int64
}

func (s *Store) usageOf(user string) *usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.usage == nil {
		s.usage = map[string]*usage{}
	}
	u := s.usage[user]
	if u == nil {
		u = &usage{}
		s.usage[user] = u
	}
	return u
}

// SetQuota limits what this tree's writes may take in all (0: only the disk
// limits them). WebDAV and SFTP set it from the account at login.
func (t *Tree) SetQuota(limit int64) { t.quota = limit }

// Quota is the limit SetQuota set.
func (t *Tree) Quota() int64 { return t.quota }

// Usage is the bytes the user's files take.
func (t *Tree) Usage() (int64, error) {
	if t.home != nil { // a share's: its owner's
		return t.home.Usage()
	}
	u := t.s.usageOf(t.user)
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.known {
		n, err := t.folderSize(".")
		if err != nil {
			return 0, fmt.Errorf("count %s's files: %w", t.user, err)
		}
		u.bytes, u.known = n, true
	}
	return u.bytes, nil
}

// Free is what the disk under the tree has left for it: its free space
// and what the trash holds, since the trash gives way to writes (the
// trash's part counted at most once a minute).
func (t *Tree) Free() (int64, error) {
	free, err := t.s.free()
	if err != nil {
		return 0, err
	}
	return free + t.s.trashHeld(), nil
}

// FilesSize adds up the regular files at or below name in fsys, not
// following symlinks. It goes on past what it cannot read, and returns the
// first such error with the sum of the rest.
func FilesSize(fsys fs.FS, name string) (int64, error) {
	var n int64
	var first error
	fs.WalkDir(fsys, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			first = cmp.Or(first, err)
			return nil
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				first = cmp.Or(first, err)
				return nil
			}
			n += fi.Size()
		}
		return nil
	})
	return n, first
}

// usageStep serialises a change's measuring, doing and counting with the
// user's other changes, so the usage count does not drift. The caller
// calls the function it returns when done.
func (t *Tree) usageStep() (done func()) {
	us := t.s.usageOf(t.user)
	us.commit.Lock()
	return us.commit.Unlock
}

// account adds delta to the user's usage, if it is known.
func (t *Tree) account(delta int64) {
	u := t.s.usageOf(t.user)
	u.mu.Lock()
	if u.known {
		u.bytes += delta
	}
	u.mu.Unlock()
}

// overQuota reports whether growing the user's files by delta would pass
// the quota.
func (t *Tree) overQuota(delta int64) error {
	if t.quota <= 0 || delta <= 0 {
		return nil
	}
	used, err := t.Usage()
	if err != nil {
		return err
	}
	if used+delta > t.quota {
		return fmt.Errorf("%w: %d of %d bytes used, %d more asked for", ErrQuota, used, t.quota, delta)
	}
	return nil
}

// Fits reports, with ErrQuota, whether n more bytes fit in the quota: a
// client that announces its size is refused before it sends, and so is
// one the disk cannot hold even with the trash emptied (ErrNoSpace),
// without touching the trash. Otherwise, with the trash on, the oldest
// trash items give way until the disk has n bytes beyond the trash's
// reserve free (or the trash is empty).
func (t *Tree) Fits(n int64) error {
	if err := t.overQuota(n); err != nil {
		return err
	}
	// Refused before a byte is sent rather than when the disk fills
	// mid-upload (with Expect: 100-continue the client sends nothing);
	// and an upload that cannot fit must not empty everyone's trash.
	if free, err := t.s.free(); err == nil && n > free {
		if held := t.s.trashHeldNow(); n > free+held {
			return fmt.Errorf("%d more bytes, %d free and %d in the trash: %w", n, free, held, ErrNoSpace)
		}
	}
	if t.s.trashOn() {
		t.s.makeRoom(n)
	}
	if free, err := t.s.free(); err == nil && n > free {
		return fmt.Errorf("%d more bytes, %d free: %w", n, free, ErrNoSpace)
	}
	return nil
}
