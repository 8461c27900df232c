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
	"log/slog"
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
	log *slog.Logger

	mu    sync.Mutex
	addrs map[string]*record
}

// failure is one failed login: when, and as whom.
type failure struct {
	at   time.Time
	user string
}

type record struct {
	failures    []failure
	pending     int           // password checks under way or waiting
	slots       chan struct{} // at most MaxConcurrent checks at once
	bannedUntil time.Time
	bans        int
	last        time.Time
}

// MaxConcurrent is how many password checks one address may have running at
// once; more wait their turn, and find the ban if the ones before earned it.
const MaxConcurrent = 2

// New returns a Guard that logs failures and bans to log (warnings).
func New(log *slog.Logger) *Guard { return newGuard(time.Now, log) }

func newGuard(now func() time.Time, log *slog.Logger) *Guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
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

// Suspect reports whether addr has failed to log in lately or been banned:
// its password checks wait behind everyone else's.
func (g *Guard) Suspect(addr string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.addrs[addr]
	return r != nil && (len(r.failures) > 0 || r.bans > 0)
}

// Outcome is how a login attempt ended.
type Outcome int

const (
	WrongPassword Outcome = iota // a failed login, counted towards a ban (the zero value: a forgotten outcome counts)
	LoggedIn                     // forgives the user's own earlier typos
	ServerFault                  // the server could not check (its users file unreadable): no one's failure
)

// Begin reserves a login attempt from addr before its password is checked,
// so that concurrent guesses count as much as sequential ones: it refuses
// when addr is banned or already has MaxFailures failures and checks under
// way. The caller must call the returned done with the outcome
// (WrongPassword records a failure, as Failed does).
func (g *Guard) Begin(addr, proto, user string) (done func(Outcome), allowed bool) {
	g.mu.Lock()
	r := g.addrs[addr]
	if r == nil {
		r = &record{}
		g.addrs[addr] = r
	}
	if r.slots == nil {
		r.slots = make(chan struct{}, MaxConcurrent)
	}
	r.pending++
	g.mu.Unlock()
	refuse := func() (func(Outcome), bool) {
		g.mu.Lock()
		r.pending--
		g.mu.Unlock()
		return func(Outcome) {}, false
	}
	// Wait for a turn (a legitimate client sending several requests at once
	// just waits a little), then look again: the checks before may have
	// earned a ban.
	select {
	case r.slots <- struct{}{}:
	case <-time.After(30 * time.Second):
		return refuse()
	}
	g.mu.Lock()
	banned := g.now().Before(r.bannedUntil)
	g.mu.Unlock()
	if banned {
		<-r.slots
		return refuse()
	}
	var once sync.Once
	return func(o Outcome) {
		once.Do(func() {
			switch o {
			case LoggedIn:
				g.forgive(r, user)
			case WrongPassword:
				g.Failed(addr, proto, user)
			}
			<-r.slots
			g.mu.Lock()
			r.pending--
			g.mu.Unlock()
		})
	}, true
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
	for _, f := range r.failures {
		if now.Sub(f.at) < Window {
			kept = append(kept, f)
		}
	}
	r.failures = append(kept, failure{now, user})
	g.log.Warn(fmt.Sprintf("login failed: %s user %q from %s (%d within %v)", proto, user, addr, len(r.failures), Window))
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
	g.log.Warn(fmt.Sprintf("banned %s for %v after %d failed logins (ban number %d)", addr, ban, MaxFailures, r.bans))
}

// forgive drops an address's failures for user once user logs in: their own
// typos are forgiven, guesses at other users are not.
func (g *Guard) forgive(r *record, user string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	kept := r.failures[:0]
	for _, f := range r.failures {
		if f.user != user {
			kept = append(kept, f)
		}
	}
	r.failures = kept
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
