// Package clock gives the box a time it can trust enough to issue and judge
// certificates. The BeagleBone Black has no battery-backed clock: after a power
// cut it may boot believing it is 1970 (or 2000). A certificate issued then
// would be born expired, and one judged then would look valid forever.
//
// The floor is the latest of the system clock, the time this binary was built
// and the last time saved in the state directory. Time never goes backwards
// across a restart, and never reads earlier than the build.
package clock

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BuildUnix is the build time in Unix seconds, set by the Makefile with
// -ldflags "-X github.com/bonesync/bonesync/appliance/clock.BuildUnix=...".
// When empty, the commit time that the go command stamps into the binary
// (vcs.time) is used.
var BuildUnix string

// BuildTime returns the time this binary was built, or the zero time if
// nothing recorded it.
func BuildTime() time.Time {
	if s := strings.TrimSpace(BuildUnix); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					return t.UTC()
				}
			}
		}
	}
	return time.Time{}
}

// Store keeps the last known time; the state directory implements it.
type Store interface {
	Load() (time.Time, error)
	Save(time.Time) error
}

// Floor is a clock that never reads earlier than its floor.
type Floor struct {
	now   func() time.Time
	store Store

	mu    sync.Mutex
	floor time.Time
}

// New returns a Floor over the system clock, floored at build and at the time
// in store (if any). A store that cannot be read is reported but is not fatal:
// the build time still holds.
func New(build time.Time, store Store) (*Floor, error) {
	return newFloor(time.Now, build, store)
}

func newFloor(now func() time.Time, build time.Time, store Store) (*Floor, error) {
	f := &Floor{now: now, store: store, floor: build}
	var err error
	if store != nil {
		var last time.Time
		last, err = store.Load()
		if err != nil {
			err = fmt.Errorf("clock floor: %w (using the build time %s)", err, build.Format(time.RFC3339))
		} else if last.After(f.floor) {
			f.floor = last
		}
	}
	return f, err
}

// Now returns the later of the system clock and the floor.
func (f *Floor) Now() time.Time {
	t := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.Before(f.floor) {
		return f.floor
	}
	return t
}

// Behind reports whether the system clock reads earlier than the floor, and
// by how much: a sign that the box lost its time and NTP has not run yet.
func (f *Floor) Behind() (bool, time.Duration) {
	t := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.Before(f.floor) {
		return true, f.floor.Sub(t)
	}
	return false, 0
}

// Save records Now() in the store, so a restart after a power cut resumes at
// least from here. It raises the floor too: the clock never steps back.
func (f *Floor) Save() error {
	t := f.Now()
	f.mu.Lock()
	if t.After(f.floor) {
		f.floor = t
	}
	f.mu.Unlock()
	if f.store == nil {
		return nil
	}
	return f.store.Save(t)
}
