// Package guard protects the box from the two cheapest ways to hurt it:
// guessing passwords, and flooding it with handshakes. Failed logins are
// counted per source address, in both protocols, and answered with a ban
// that grows each time; the number of TLS and SSH handshakes in flight is
// capped so that a burst of new connections cannot starve the sessions
// already established (on a one-core board a handshake flood is the easiest
// way to take the box down).
package guard

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Policy for failed logins.
const (
	MaxFailures = 5                // failures within Window before a ban
	Window      = 10 * time.Minute // how long a failure is remembered
	FirstBan    = time.Minute      // doubled for each further ban
	MaxBan      = 24 * time.Hour
	forgetAfter = 24 * time.Hour // an address quiet this long starts afresh
)

// Guard counts failed logins per address.
type Guard struct {
	now func() time.Time
	log io.Writer

	mu    sync.Mutex
	addrs map[string]*record
}

type record struct {
	failures    []time.Time
	pending     int // password checks under way
	bannedUntil time.Time
	bans        int
	last        time.Time
}

// New returns a Guard that logs bans to log.
func New(log io.Writer) *Guard { return newGuard(time.Now, log) }

func newGuard(now func() time.Time, log io.Writer) *Guard {
	if log == nil {
		log = io.Discard
	}
	return &Guard{now: now, log: log, addrs: map[string]*record{}}
}

// Host is the address part of a "host:port" remote address.
func Host(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// Banned reports whether addr may not try to log in now, and for how long.
func (g *Guard) Banned(addr string) (bool, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.addrs[addr]
	if r == nil {
		return false, 0
	}
	if left := r.bannedUntil.Sub(g.now()); left > 0 {
		return true, left
	}
	return false, 0
}

// Begin reserves a login attempt from addr before its password is checked,
// so that concurrent guesses count as much as sequential ones: it refuses
// when addr is banned or already has MaxFailures failures and checks under
// way. The caller must call the returned done with whether the login
// succeeded (done(false) records a failure, as Failed does).
func (g *Guard) Begin(addr, proto, user string) (done func(ok bool), allowed bool) {
	g.mu.Lock()
	r := g.addrs[addr]
	if r == nil {
		r = &record{}
		g.addrs[addr] = r
	}
	now := g.now()
	if now.Before(r.bannedUntil) || len(recent(r.failures, now))+r.pending >= MaxFailures {
		g.mu.Unlock()
		return func(bool) {}, false
	}
	r.pending++
	g.mu.Unlock()
	var once sync.Once
	return func(ok bool) {
		once.Do(func() {
			g.mu.Lock()
			r.pending--
			g.mu.Unlock()
			if !ok {
				g.Failed(addr, proto, user)
			}
		})
	}, true
}

func recent(failures []time.Time, now time.Time) []time.Time {
	var out []time.Time
	for _, t := range failures {
		if now.Sub(t) < Window {
			out = append(out, t)
		}
	}
	return out
}

// Failed records a failed login from addr (for user, over proto) and bans
// the address once it has failed MaxFailures times within Window.
func (g *Guard) Failed(addr, proto, user string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expire(now)
	r := g.addrs[addr]
	if r == nil {
		r = &record{}
		g.addrs[addr] = r
	}
	r.last = now
	kept := r.failures[:0]
	for _, t := range r.failures {
		if now.Sub(t) < Window {
			kept = append(kept, t)
		}
	}
	r.failures = append(kept, now)
	fmt.Fprintf(g.log, "login failed: %s user %q from %s (%d within %v)\n", proto, user, addr, len(r.failures), Window)
	if len(r.failures) < MaxFailures {
		return
	}
	ban := FirstBan << min(r.bans, 20)
	if ban > MaxBan || ban <= 0 {
		ban = MaxBan
	}
	r.bans++
	r.bannedUntil = now.Add(ban)
	r.failures = nil
	fmt.Fprintf(g.log, "banned %s for %v after %d failed logins (ban number %d)\n", addr, ban, MaxFailures, r.bans)
}

// expire forgets addresses quiet for a day, so the map cannot grow without
// bound under a scan from many addresses.
func (g *Guard) expire(now time.Time) {
	if len(g.addrs) < 1024 {
		return
	}
	for a, r := range g.addrs {
		if now.Sub(r.last) > forgetAfter && now.After(r.bannedUntil) && r.pending == 0 {
			delete(g.addrs, a)
		}
	}
}
