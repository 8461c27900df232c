package clock

import (
	"errors"
	"testing"
	"time"
)

type memStore struct {
	t   time.Time
	err error
}

func (m *memStore) Load() (time.Time, error) { return m.t, m.err }
func (m *memStore) Save(t time.Time) error   { m.t = t; return nil }

func TestFloor(t *testing.T) {
	build := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	saved := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	real := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	epoch := time.Unix(0, 0)
	for _, tc := range []struct {
		name  string
		sys   time.Time
		store *memStore
		want  time.Time
	}{
		{"1970 clock, nothing saved", epoch, &memStore{}, build},
		{"1970 clock, saved time", epoch, &memStore{t: saved}, saved},
		{"saved before build", epoch, &memStore{t: build.Add(-time.Hour)}, build},
		{"good clock wins", real, &memStore{t: saved}, real},
		{"unreadable store falls back to build", epoch, &memStore{err: errors.New("bad")}, build},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFloor(func() time.Time { return tc.sys }, build, tc.store)
			if got := f.Now(); !got.Equal(tc.want) {
				t.Errorf("Now() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFloorSaveNeverStepsBack(t *testing.T) {
	build := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	sys := build.Add(48 * time.Hour)
	st := &memStore{}
	f, _ := newFloor(func() time.Time { return sys }, build, st)
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	if !st.t.Equal(sys) {
		t.Fatalf("saved %v, want %v", st.t, sys)
	}
	// Power cut: the clock restarts at 1970. A new Floor over the same store
	// must resume from the saved time.
	g, _ := newFloor(func() time.Time { return time.Unix(0, 0) }, build, st)
	if got := g.Now(); !got.Equal(sys) {
		t.Errorf("after restart Now() = %v, want %v", got, sys)
	}
	if behind, _ := g.Behind(); !behind {
		t.Error("Behind() = false for a 1970 clock, want true")
	}
}

func TestBuildTimeFromLdflags(t *testing.T) {
	old := BuildUnix
	defer func() { BuildUnix = old }()
	BuildUnix = "1790000000"
	if got, want := BuildTime(), time.Unix(1790000000, 0).UTC(); !got.Equal(want) {
		t.Errorf("BuildTime() = %v, want %v", got, want)
	}
}
