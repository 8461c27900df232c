package auth

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/audit"
)

// Policy for failed logins.
const (
	MaxFailures = 5                // failures within window before a ban
	window      = 10 * time.Minute // how long a failure is remembered
	firstBan    = time.Minute      // doubled for each further ban
	maxBan      = 24 * time.Hour
	forgetAfter = 24 * time.Hour // an address quiet this long starts afresh
)

// bans counts failed logins per source address, in every protocol
// together, and bans an address that fails too often: a ban that doubles
// each time, from firstBan to maxBan.
type bans struct {
	now   func() time.Time
	log   *slog.Logger
	audit *audit.Log

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
	slots       chan struct{} // at most maxConcurrent checks at once
	bannedUntil time.Time
	count       int // bans so far
	last        time.Time
}

// maxConcurrent is how many password checks one address may have running at
// once; more wait their turn, and find the ban if the ones before earned it.
const maxConcurrent = 2

// newBans logs failures and bans to log (warnings).
func newBans(now func() time.Time, log *slog.Logger) *bans {
	return &bans{now: now, log: log, addrs: map[string]*record{}}
}

// Banned reports whether addr may not try to log in now, and for how long.
func (b *bans) Banned(addr string) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.addrs[addr]
	if r == nil {
		return false, 0
	}
	if left := r.bannedUntil.Sub(b.now()); left > 0 {
		return true, left
	}
	return false, 0
}

// Suspect reports whether addr has failed to log in lately or been banned:
// its password checks wait behind everyone else's.
func (b *bans) Suspect(addr string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.addrs[addr]
	return r != nil && (len(r.failures) > 0 || r.count > 0)
}

// outcome is how a login attempt ended.
type outcome int

const (
	wrongPassword outcome = iota // a failed login, counted towards a ban (the zero value: a forgotten outcome counts)
	loggedIn                     // forgives the user's own earlier typos
	serverFault                  // the server could not check (its users file unreadable): no one's failure
	halfLogin                    // a right password whose code is still to come: forgives nothing
)

// Begin reserves a login attempt from addr before its password is checked,
// so that concurrent guesses count as much as sequential ones: it refuses
// when addr is banned or already has MaxFailures failures and checks under
// way. The caller must call the returned done with the outcome
// (wrongPassword records a failure, as Failed does).
func (b *bans) Begin(addr, proto, user string) (done func(outcome), allowed bool) {
	b.mu.Lock()
	r := b.addrs[addr]
	if r == nil {
		r = &record{}
		b.addrs[addr] = r
	}
	if r.slots == nil {
		r.slots = make(chan struct{}, maxConcurrent)
	}
	r.pending++
	b.mu.Unlock()
	refuse := func() (func(outcome), bool) {
		b.mu.Lock()
		r.pending--
		b.mu.Unlock()
		return func(outcome) {}, false
	}
	// Wait for a turn (a legitimate client sending several requests at once
	// just waits a little), then look again: the checks before may have
	// earned a ban.
	select {
	case r.slots <- struct{}{}:
	case <-time.After(30 * time.Second):
		return refuse()
	}
	b.mu.Lock()
	banned := b.now().Before(r.bannedUntil)
	b.mu.Unlock()
	if banned {
		<-r.slots
		return refuse()
	}
	var once sync.Once
	return func(o outcome) {
		once.Do(func() {
			switch o {
			case loggedIn:
				b.forgive(r, user)
			case wrongPassword:
				b.Failed(addr, proto, user)
			}
			<-r.slots
			b.mu.Lock()
			r.pending--
			b.mu.Unlock()
		})
	}, true
}

// Failed records a failed login from addr (for user, over proto) and bans
// the address once it has failed MaxFailures times within window.
func (b *bans) Failed(addr, proto, user string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.expire(now)
	r := b.addrs[addr]
	if r == nil {
		r = &record{}
		b.addrs[addr] = r
	}
	r.last = now
	kept := r.failures[:0]
	for _, f := range r.failures {
		if now.Sub(f.at) < window {
			kept = append(kept, f)
		}
	}
	r.failures = append(kept, failure{now, user})
	b.log.Warn("login failed", "proto", proto, "user", user, "addr", addr, "failures", len(r.failures), "within", window)
	b.record(audit.Event{Time: now, Kind: audit.LoginFailed, User: user, Addr: addr, Proto: proto})
	if len(r.failures) < MaxFailures {
		return
	}
	ban := firstBan << min(r.count, 20)
	if ban > maxBan || ban <= 0 {
		ban = maxBan
	}
	r.count++
	r.bannedUntil = now.Add(ban)
	r.failures = nil
	b.log.Warn("banned", "addr", addr, "for", ban, "failures", MaxFailures, "ban", r.count)
	b.record(audit.Event{Time: now, Kind: audit.Banned, Addr: addr, Proto: proto,
		What: fmt.Sprintf("for %v after %d failed logins (ban %d)", ban, MaxFailures, r.count)})
}

// record queues e for the audit log, if there is one: called with b.mu
// held, which every request's Banned needs, it never waits for the disk.
func (b *bans) record(e audit.Event) { b.audit.Note(e) }

// forgive drops an address's failures for user once user logs in: their own
// typos are forgiven, guesses at other users are not.
func (b *bans) forgive(r *record, user string) {
	b.mu.Lock()
	defer b.mu.Unlock()
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
func (b *bans) expire(now time.Time) {
	if len(b.addrs) < 1024 {
		return
	}
	for a, r := range b.addrs {
		if now.Sub(r.last) > forgetAfter && now.After(r.bannedUntil) && r.pending == 0 {
			delete(b.addrs, a)
		}
	}
}
