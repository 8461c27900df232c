package clock

import (
	"context"
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

// One server's answer is believed within Plausible of the floor; a forged
// answer far in the future, or one behind the floor, needs a second server
// to agree. Two agreeing servers correct a floor that was set wrong.
func TestJudge(t *testing.T) {
	floorTime := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	sys := floorTime.Add(time.Hour) // the clock set from the floor, an hour ago
	f, _ := newFloor(func() time.Time { return sys }, time.Time{}, &memStore{t: floorTime})
	at := func(d time.Duration) time.Duration { return d } // offsets from the system clock
	for _, tc := range []struct {
		name      string
		samples   []Sample
		ok        bool
		confirmed bool
	}{
		{"none", nil, false, false},
		{"one, a minute off", []Sample{{"a", "", at(time.Minute)}}, true, false},
		{"one, after a year off", []Sample{{"a", "", at(300 * 24 * time.Hour)}}, true, false},
		{"one, from the next century", []Sample{{"a", "", at(80 * 365 * 24 * time.Hour)}}, false, false},
		{"two disagreeing, far future first", []Sample{{"a", "", at(80 * 365 * 24 * time.Hour)}, {"b", "", at(time.Minute)}}, true, false},
		{"the same server twice", []Sample{{"a", "", at(80 * 365 * 24 * time.Hour)}, {"a", "", at(80 * 365 * 24 * time.Hour)}}, false, false},
		{"one address under two names", []Sample{{"a", "192.0.2.1", at(80 * 365 * 24 * time.Hour)}, {"b", "192.0.2.1", at(80 * 365 * 24 * time.Hour)}}, false, false},
		{"two agreeing far ahead", []Sample{{"a", "", at(3 * 365 * 24 * time.Hour)}, {"b", "", at(3*365*24*time.Hour + time.Second)}}, true, true},
		{"one behind the floor", []Sample{{"a", "", at(-30 * 24 * time.Hour)}}, false, false},
		{"two agreeing behind the floor", []Sample{{"a", "", at(-30 * 24 * time.Hour)}, {"b", "", at(-30*24*time.Hour - time.Second)}}, true, true},
	} {
		v, err := f.Judge(tc.samples)
		if (err == nil) != tc.ok || v.Confirmed != tc.confirmed {
			t.Errorf("%s: %+v, %v; want ok %v, confirmed %v", tc.name, v, err, tc.ok, tc.confirmed)
		}
	}
}

// A floor set wrong (a forged answer saved before) is corrected by two
// agreeing servers, and the correction is saved; one server only raises it.
func TestSyncedCorrectsAWrongFloor(t *testing.T) {
	wrong := time.Date(2090, 1, 1, 0, 0, 0, 0, time.UTC)
	real := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	store := &memStore{t: wrong}
	f, _ := newFloor(func() time.Time { return real }, time.Time{}, store)
	if _, err := f.Judge([]Sample{{"a", "", 0}}); err == nil {
		t.Fatal("one server was believed against the floor")
	}
	v, err := f.Judge([]Sample{{"a", "", 0}, {"b", "", time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.Synced(v)
	if err != nil || back < 60*365*24*time.Hour {
		t.Fatalf("Synced moved the floor back %v, %v", back, err)
	}
	if !f.Now().Equal(real) || !store.t.Equal(real) {
		t.Errorf("after the correction: Now %v, saved %v, want %v", f.Now(), store.t, real)
	}
}

// Every calls at once for a first of 0, then every interval, and stops
// when its context ends, mid-wait.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan struct{})
	go func() {
		Every(ctx, 0, time.Millisecond, func() {
			if calls++; calls == 3 {
				cancel()
			}
		})
		close(done)
	}()
	<-done
	if calls != 3 {
		t.Errorf("calls = %d, want 3 (then the context ended)", calls)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	Every(ctx, time.Hour, time.Hour, func() { t.Error("called after its context ended") })
}
