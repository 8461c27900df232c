package boot

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/beevik/ntp"
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
		s.Log.Warn("clock floor unreadable", "err", err)
	}
	behind, by := floor.Behind()
	if !behind {
		return nil
	}
	t := floor.Now()
	if err := setSystemClock(t); err != nil {
		return err
	}
	s.Log.Info("clock set to the last known time until NTP answers", "was_behind", by.Round(time.Second), "now", t.Format(time.RFC3339))
	return nil
}

// keepTime asks the configured time servers until one round of answers is
// believed (clock.Floor.Judge: one server within a year of the floor, or
// two that agree), sets the clock, and asks again hourly. A failure is
// retried after 30 s, doubling up to 10 minutes: after a power cut the
// router often comes up after the box. A floor that two servers prove
// wrong is corrected, and the server restarted so that it issues and
// judges certificates with the right time.
func (s *System) keepTime(ctx context.Context) {
	floor, err := clock.New(clock.BuildTime(), state.TimeFile{Dir: &state.Dir{Path: StateDir}})
	if err != nil {
		s.Log.Warn("clock floor unreadable", "err", err)
	}
	const firstRetry, maxRetry, every = 30 * time.Second, 10 * time.Minute, time.Hour
	retry, lastErr := firstRetry, ""
	for {
		wait := every
		v, err := floor.Judge(askTimeServers(ctx, s.Config.NTP))
		if err == nil {
			err = setSystemClock(v.Time)
		}
		if err != nil {
			if msg := err.Error(); msg != lastErr {
				s.Log.Warn("NTP: keeping the clock floor, trying again", "err", err)
				lastErr = msg
			}
			wait, retry = retry, min(2*retry, maxRetry)
		} else {
			save := func() {
				if _, err := floor.Synced(v); err != nil {
					s.Log.Error("clock: the floor not saved", "err", err)
				}
			}
			if back := floor.WouldMoveBack(v); back > time.Minute {
				// The server holds the wrong floor too, and saves it when it
				// stops: the corrected one is saved between its stop and the
				// next start.
				s.Log.Warn("the clock floor was ahead (two time servers agree); restarting the server with the right time", "ahead", back.Round(time.Second))
				s.Server.Restart(save)
			} else {
				save()
			}
			if lastErr != "" || !s.timeSet {
				s.Log.Info("clock set by NTP", "server", v.Server)
			}
			s.timeSet, lastErr, retry = true, "", firstRetry
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// askTimeServers asks up to three time servers: each configured name's
// first two addresses (pool.ntp.org gives a different server for each),
// each address once.
func askTimeServers(ctx context.Context, names []string) []clock.Sample {
	var out []clock.Sample
	asked := map[string]bool{}
	for _, name := range names {
		addrs, err := net.DefaultResolver.LookupHost(ctx, name)
		if err != nil {
			continue
		}
		n := 0
		for _, a := range addrs {
			if asked[a] || n == 2 {
				continue
			}
			asked[a] = true
			n++
			r, err := ntp.QueryWithOptions(a, ntp.QueryOptions{Timeout: 5 * time.Second})
			if err == nil {
				err = r.Validate()
			}
			if err == nil {
				out = append(out, clock.Sample{Server: fmt.Sprintf("%s (%s)", name, a), Addr: a, Offset: r.ClockOffset})
			}
			if len(out) == 3 {
				return out
			}
		}
	}
	return out
}

func setSystemClock(t time.Time) error {
	tv := unix.NsecToTimeval(t.UnixNano())
	if err := unix.Settimeofday(&tv); err != nil {
		return fmt.Errorf("set the clock to %s: %w", t.Format(time.RFC3339), err)
	}
	return nil
}
