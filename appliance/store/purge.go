package store

import (
	"context"
	"errors"
	"os"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/clock"
)

// The trash is kept for a time (keep), and only while the disk has room:
// it never holds on to the last reserve bytes of free space. When a write
// needs room, the oldest items, of all users, give way first.

// SetTrashPolicy keeps deleted files and old versions for keep, and never
// lets the trash hold on to the last reserve bytes of the disk. keep 0
// turns the trash off: deletes are final and no versions are kept (what
// is in the trash goes at the next purge). Off until it is called.
func (s *Store) SetTrashPolicy(keep time.Duration, reserve int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep, s.reserve = max(keep, 0), max(reserve, 0)
}

func (s *Store) policy() (keep time.Duration, reserve int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keep, s.reserve
}

// TrashKeep is how long the trash keeps what it holds (0: it is off).
func (s *Store) TrashKeep() time.Duration {
	keep, _ := s.policy()
	return keep
}

func (s *Store) trashOn() bool {
	keep, _ := s.policy()
	return keep > 0
}

// diskSpace is the size and the free space, for unprivileged writers, of
// the file system that holds dir.
func diskSpace(dir string) (total, free int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Blocks) * int64(st.Bsize), int64(st.Bavail) * int64(st.Bsize), nil
}

// DiskSpace is the size and the free space of the disk that holds the
// store (the trash's part not counted as free: see Tree.Free).
func (s *Store) DiskSpace() (total, free int64, err error) { return diskSpace(s.dir) }

// countTrashEvery is how often Free counts the trash again: a figure a
// minute old does to tell a client whether a file fits, and a count reads
// every record.
const countTrashEvery = time.Minute

// trashHeld is the bytes all users' trash holds, counted at most once
// every countTrashEvery.
func (s *Store) trashHeld() int64 {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if !s.heldAt.IsZero() && time.Since(s.heldAt) < countTrashEvery {
		return s.held
	}
	return s.countTrash()
}

// trashHeldNow counts the trash now, for a decision that must not rest
// on a figure a minute old.
func (s *Store) trashHeldNow() int64 {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	return s.countTrash()
}

// countTrash counts, under heldMu.
func (s *Store) countTrash() int64 {
	s.held, s.heldAt = 0, time.Now()
	users, _ := os.ReadDir(s.trashPath(""))
	for _, u := range users {
		ids, items, records, _ := s.trashIDs(u.Name())
		for _, id := range ids {
			if items[id] {
				s.held += s.recordedSize(u.Name(), id, records[id])
			}
		}
	}
	return s.held
}

// trashed is one item in some user's trash.
type trashed struct{ user, id string }

// allTrash lists every user's trash items, oldest first.
func (s *Store) allTrash() ([]trashed, error) {
	users, err := os.ReadDir(s.trashPath(""))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []trashed
	var errs []error
	for _, u := range users {
		if !u.IsDir() {
			continue
		}
		ids, _, _, err := s.trashIDs(u.Name())
		errs = append(errs, err)
		for _, id := range ids {
			all = append(all, trashed{u.Name(), id})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].id != all[j].id {
			return all[i].id < all[j].id
		}
		return all[i].user < all[j].user
	})
	return all, errors.Join(errs...)
}

func (s *Store) remove(it trashed) (int64, error) {
	l := s.trashLock(it.user)
	l.Lock()
	defer l.Unlock()
	return s.removeItem(it.user, it.id)
}

// purgeTrash removes the trash items older than the policy's keep (all of
// them if the trash is off), then, while the disk has less free space than
// the reserve, the oldest of what is left, of all users. It goes on past
// an item it cannot remove, and returns what it removed, the bytes those
// held, and the errors it met.
func (s *Store) purgeTrash(now time.Time) (removed int, freed int64, err error) {
	s.purgeMu.Lock()
	defer s.purgeMu.Unlock()
	keep, reserve := s.policy()
	all, err := s.allTrash()
	errs := []error{err}
	cutoff := now.Add(-keep)
	left := all[:0]
	for _, it := range all {
		if keep > 0 && !trashIDTime(it.id).Before(cutoff) {
			left = append(left, it)
			continue
		}
		n, err := s.remove(it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed, freed = removed+1, freed+n
	}
	r, f, err := s.giveWay(left, reserve)
	return removed + r, freed + f, errors.Join(append(errs, err)...)
}

// giveWay removes items, oldest first, until the disk has want bytes free
// or none is left. The caller holds purgeMu.
func (s *Store) giveWay(items []trashed, want int64) (removed int, freed int64, err error) {
	var errs []error
	for _, it := range items {
		free, err := s.free()
		if err != nil {
			return removed, freed, errors.Join(append(errs, err)...)
		}
		if free >= want {
			break
		}
		n, err := s.remove(it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed, freed = removed+1, freed+n
	}
	return removed, freed, errors.Join(errs...)
}

// makeRoom makes the trash give way, oldest items first, until the disk
// has n bytes beyond the reserve free, or the trash is empty. It reports
// whether it removed anything (a write that failed for want of space is
// then worth trying again).
func (s *Store) makeRoom(n int64) bool {
	_, reserve := s.policy()
	if free, err := s.free(); err != nil || free-n >= reserve {
		return false
	}
	s.purgeMu.Lock()
	defer s.purgeMu.Unlock()
	all, _ := s.allTrash() // what could be listed gives way; the rest waits for the next purge
	removed, _, _ := s.giveWay(all, reserve+n)
	return removed > 0
}

// keepReserve is the quick check after a change that may have taken the
// disk's free space below the reserve: one statfs, and only if the trash
// is on and the space is short, a purge of its oldest items.
func (s *Store) keepReserve() {
	if s.trashOn() {
		s.makeRoom(0)
	}
}

// PurgeTrashEvery runs purgeTrash now and then every interval until ctx
// ends, calling report after each run that removed something or failed.
func (s *Store) PurgeTrashEvery(ctx context.Context, every time.Duration, report func(removed int, freed int64, err error)) {
	clock.Every(ctx, 0, every, func() {
		if n, freed, err := s.purgeTrash(time.Now()); n > 0 || err != nil {
			report(n, freed, err)
		}
	})
}
