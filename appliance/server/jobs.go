package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/sysd"
)

// saveClockEvery is how often a running server saves the clock floor: it
// need be about right after a power cut, not to the second, and each save
// is a write to the card. It is saved at shutdown too.
const saveClockEvery = time.Hour

// purgeTrashEvery is how often the trash is purged of what is older than
// trash_days (and, should the disk be short, of its oldest). Writes that
// need room do not wait for it: the trash gives way to them at once.
const purgeTrashEvery = time.Hour

// sweepPreviewsEvery is how often the previews no file has any more are
// removed: a walk of every tree, so daily.
const sweepPreviewsEvery = 24 * time.Hour

// stopGrace is how long the parts have to return once stopped: the web
// front's own grace for the requests still running, and a little more.
const stopGrace = front.Grace + time.Second

// runParts runs the parts under one errgroup (golang.org/x/sync) until ctx
// ends or one fails (that one's error is returned; nil when ctx ended);
// every part is then stopped through the group's context and given grace
// (stopGrace when serving) to return. clean is false when a part that serves the users'
// files had to cut work short or did not return in time: a change may
// have been cut between its steps.
func runParts(ctx context.Context, parts []part, grace time.Duration, log *slog.Logger) (clean bool, err error) {
	g, gctx := errgroup.WithContext(ctx)
	var cut atomic.Bool
	ended := make([]atomic.Bool, len(parts))
	for i, p := range parts {
		g.Go(func() error {
			defer ended[i].Store(true)
			err := p.run(gctx)
			if errors.Is(err, front.ErrCut) {
				cut.Store(true)
				if err == front.ErrCut {
					err = nil
				}
			}
			if err != nil && gctx.Err() == nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			return nil
		})
	}
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	select {
	case err = <-done:
		return !cut.Load(), err
	case <-gctx.Done():
	}
	select {
	case err = <-done:
		return !cut.Load(), err
	case <-time.After(grace):
	}
	clean = !cut.Load()
	var late []string
	for i, p := range parts {
		if !ended[i].Load() {
			late = append(late, p.name)
			clean = clean && !p.serves
		}
	}
	log.Warn("parts still running at the stop; stopping without them", "parts", strings.Join(late, " "), "grace", grace)
	if ctx.Err() != nil {
		return clean, nil // the stop was asked for
	}
	return clean, context.Cause(gctx)
}

// every runs f each interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func()) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			f()
		}
	}
}

// keepClock saves the clock floor every saveClockEvery.
func (s *services) keepClock(ctx context.Context) error {
	return every(ctx, saveClockEvery, func() { saveClock(s.prov.Clock, s.log) })
}

// tidyFirstLogin empties FIRST-LOGIN.txt once admin's password changed.
func (s *services) tidyFirstLogin(ctx context.Context) error {
	s.first.Tidy()
	return every(ctx, s.o.Refresh, s.first.Tidy)
}

// trashPurged logs what a purge of the trash removed, or why it could not.
func (s *services) trashPurged(removed int, freed int64, err error) {
	if removed > 0 {
		s.log.Info("files: items left the trash", "removed", removed, "freed_mib", fmt.Sprintf("%.1f", float64(freed)/(1<<20)))
	}
	if err != nil {
		s.log.Error("files: purge the trash", "err", err)
	}
}

// watchdog feeds systemd's (or PID 1's) watchdog for as long as the
// server answers: its plain-HTTP listener at httpAddr answers a request,
// and this part's own heartbeat ticks (every 5 s, in monotonic time, so
// that a clock stepped by NTP cannot make it look dead), which a process
// wedged whole (stopped, or its scheduler stuck) no longer does. At the
// stop it tells the service manager the server is stopping.
func (s *services) watchdog(httpAddr net.Addr) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		started := time.Now()
		var heartbeat atomic.Int64
		stop := sysd.Watchdog(healthy(started, &heartbeat, watchdogAddr(httpAddr)))
		defer stop()
		every(ctx, 5*time.Second, func() { heartbeat.Store(int64(time.Since(started))) })
		sysd.Stopping()
		return nil
	}
}

// healthy is the watchdog's test that the server serves: the heartbeat
// (the time since started at its last tick) is recent and the plain-HTTP
// listener answers.
func healthy(started time.Time, heartbeat *atomic.Int64, addr string) func() bool {
	client := &http.Client{Timeout: 5 * time.Second}
	return func() bool {
		if time.Since(started)-time.Duration(heartbeat.Load()) > 20*time.Second {
			return false
		}
		resp, err := client.Get("http://" + addr + "/ca.crt")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}
