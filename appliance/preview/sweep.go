package preview

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/store"
)

// Sweep removes the previews no file has any more: of files deleted for
// good, of contents replaced and purged from the trash, of users removed.
// It walks each user's tree and trash once.
func (m *Maker) Sweep() (removed int, err error) {
	dir, err := m.Store.OwnDir("previews")
	if err != nil {
		return 0, err
	}
	users, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	owners, err := m.Store.Owners()
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, u := range users {
		n, err := m.sweepUser(dir, u.Name(), slices.Contains(owners, u.Name()))
		removed += n
		if err != nil {
			errs = append(errs, fmt.Errorf("previews of %s: %w", u.Name(), err))
		}
	}
	return removed, errors.Join(errs...)
}

// sweepUser removes user's previews that no file of theirs has any more,
// or all of them if they own nothing in the store (known is false).
func (m *Maker) sweepUser(dir, user string, known bool) (int, error) {
	own := filepath.Join(dir, user)
	if !known {
		n := count(own)
		return n, os.RemoveAll(own) // the user is gone
	}
	m.one.Lock() // no preview written while the live ones are counted
	defer m.one.Unlock()
	live, err := m.liveVersions(user)
	if err != nil {
		return 0, err
	}
	removed := 0
	m.pruneDates(user, live)
	err = filepath.WalkDir(own, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || p == filepath.Join(own, datesFile) {
			return nil
		}
		name := strings.TrimSuffix(e.Name(), ".none")
		name = strings.TrimSuffix(name, ".tmp")
		if i := strings.LastIndexByte(name, '.'); i < 0 || !live[name[:i]] {
			if os.Remove(p) == nil {
				removed++
			}
		}
		return nil
	})
	return removed, err
}

// liveVersions names the contents of user's files and trash as previews
// are named: ID-VERSION.
func (m *Maker) liveVersions(user string) (map[string]bool, error) {
	var tree tree
	tree, err := m.Store.Tree(user)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	live := map[string]bool{}
	err = tree.Walk("/", func(p string, in store.Info) error {
		if !in.IsDir() {
			live[fmt.Sprintf("%016x-%s", in.FileID, in.ETag)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	items, err := tree.Bin().Items()
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		live[fmt.Sprintf("%016x-%s", it.FileID, it.ETag)] = true
	}
	return live, nil
}

func count(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// SweepEvery sweeps every interval until ctx ends, the first time an hour
// after the start (or sooner, if every is shorter): not while the box is
// busy starting.
func (m *Maker) SweepEvery(ctx context.Context, every time.Duration) {
	clock.Every(ctx, min(every, time.Hour), every, func() {
		if n, err := m.Sweep(); err != nil {
			m.Log.Warn("sweeping the previews", "err", err)
		} else if n > 0 {
			m.Log.Info("swept previews no file has", "removed", n)
		}
	})
}
