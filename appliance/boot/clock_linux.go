package boot

import (
	"context"
	"fmt"
	"time"

	"github.com/u-root/u-root/pkg/ntpdate"
	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/state"
)

var configLoad = config.Load

// setClock sets the system clock to at least the clock floor (the build
// time, or the last time saved on the data partition): the board has no
// battery-backed clock and starts in 2000 or 1970.
func setClock(_ context.Context, s *System) error {
	dir := &state.Dir{Path: StateDir}
	floor, err := clock.New(clock.BuildTime(), state.TimeFile{Dir: dir})
	if err != nil {
		fmt.Fprintf(s.Log, "bonesync: %v\n", err)
	}
	behind, by := floor.Behind()
	if !behind {
		return nil
	}
	t := floor.Now()
	tv := unix.NsecToTimeval(t.UnixNano())
	if err := unix.Settimeofday(&tv); err != nil {
		return fmt.Errorf("set the clock to %s: %w", t.Format(time.RFC3339), err)
	}
	fmt.Fprintf(s.Log, "bonesync: clock was %v behind; set to %s (the last known time) until NTP answers\n", by.Round(time.Second), t.Format(time.RFC3339))
	return nil
}

// tryNTP asks the configured time servers, once, briefly.
func tryNTP(_ context.Context, s *System) error {
	if s.Board.NoNTP != "" {
		return nil
	}
	if len(s.Config.NTP) == 0 {
		return nil
	}
	server, offset, err := ntpdate.SetTime(s.Config.NTP, "", "", false)
	if err != nil {
		return fmt.Errorf("NTP (%v): %w; keeping the clock floor", s.Config.NTP, err)
	}
	fmt.Fprintf(s.Log, "bonesync: clock set from %s (moved %.1f s)\n", server, offset)
	// Record it at once: a power cut now must not lose it.
	if f, err := clock.New(clock.BuildTime(), state.TimeFile{Dir: &state.Dir{Path: StateDir}}); err == nil {
		f.Save()
	}
	return nil
}
