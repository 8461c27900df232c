package clock

import (
	"errors"
	"fmt"
	"time"
)

// Sample is one time server's answer: how far ahead of the system clock it
// says the time is.
type Sample struct {
	Server string // for messages
	Addr   string // its address: two samples agree only from two addresses
	Offset time.Duration
}

// Plausible is how far beyond the floor one server alone is believed: a box
// switched off for a year still takes its time, a forged answer from the
// next century does not. Beyond it, and behind the floor, a second server
// must agree (within Agree): then even a floor that was set wrong is
// corrected.
const (
	Plausible = 400 * 24 * time.Hour
	Agree     = 5 * time.Second
)

// ErrNoAnswer is Judge's error when no server answered.
var ErrNoAnswer = errors.New("no time server answered")

// Verdict is what a round of answers allows.
type Verdict struct {
	Time   time.Time // the time to set the system clock to
	Server string
	// Confirmed: two servers agree, so the floor may move back to Time
	// (it was set wrong: a forged answer, a clock file from elsewhere).
	Confirmed bool
}

// Judge weighs a round of answers against the floor.
func (f *Floor) Judge(samples []Sample) (Verdict, error) {
	if len(samples) == 0 {
		return Verdict{}, ErrNoAnswer
	}
	sys := f.now()
	addr := func(s Sample) string {
		if s.Addr != "" {
			return s.Addr
		}
		return s.Server
	}
	for i, a := range samples {
		for _, b := range samples[i+1:] {
			if addr(a) != addr(b) && (a.Offset-b.Offset).Abs() <= Agree {
				return Verdict{Time: sys.Add(a.Offset), Server: a.Server + " and " + b.Server, Confirmed: true}, nil
			}
		}
	}
	f.mu.Lock()
	floor := f.floor
	f.mu.Unlock()
	var why error
	for _, s := range samples {
		t := sys.Add(s.Offset)
		switch {
		case t.Before(floor.Add(-Agree)):
			why = fmt.Errorf("%s says %s, before the last known time %s; waiting for a second server to agree",
				s.Server, t.Format(time.RFC3339), floor.Format(time.RFC3339))
		case t.After(floor.Add(Plausible)):
			why = fmt.Errorf("%s says %s, more than %d days after the last known time %s; waiting for a second server to agree",
				s.Server, t.Format(time.RFC3339), int(Plausible.Hours()/24), floor.Format(time.RFC3339))
		default:
			return Verdict{Time: t, Server: s.Server}, nil
		}
	}
	return Verdict{}, why
}

// WouldMoveBack is how far Synced(v) would move the floor back (0 if not).
func (f *Floor) WouldMoveBack(v Verdict) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !v.Confirmed || !v.Time.Before(f.floor) {
		return 0
	}
	return f.floor.Sub(v.Time)
}

// Synced records a time the system clock was set to: it raises the floor
// to it, or, if two servers confirmed it, sets the floor to it even if that
// is earlier, and saves it. It returns how far the floor moved back (0 if
// it did not).
func (f *Floor) Synced(v Verdict) (time.Duration, error) {
	f.mu.Lock()
	var back time.Duration
	switch {
	case v.Time.After(f.floor):
		f.floor = v.Time
	case v.Confirmed:
		back = f.floor.Sub(v.Time)
		f.floor = v.Time
	}
	t := f.floor
	f.mu.Unlock()
	if f.store == nil {
		return back, nil
	}
	return back, f.store.Save(t)
}
