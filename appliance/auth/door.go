// Package auth is the box's one login door. Every way in asks a Door: HTTP
// Basic (WebDAV, CalDAV, CardDAV, the Nextcloud protocol, the admin routes),
// the web pages' session and login form, app passwords, and SSH passwords
// and keys. The door checks the account (package users) under one policy:
//
//   - failed logins are counted per source address across every protocol,
//     and an address that fails MaxFailures times within window is banned,
//     for a time that doubles with each ban (bans.go);
//   - wrong guesses are also counted per target, an account or a public
//     link, from every address together: past FreeGuesses each further
//     guess waits a delay that doubles, and one that comes sooner is
//     refused at once, before any hash (throttle.go); the owner's own
//     devices and addresses skip the wait (trusted);
//   - one Argon2id hash runs at a time, the hashes of addresses with
//     failures last (hashslots.go);
//   - a server that cannot check (its users file unreadable) is a Fault,
//     logged and told apart from a wrong password: it is no one's failure.
//
// Protocol packages take the door as a small interface of their own and
// know nothing of each other.
package auth

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/logtext"
	"github.com/bonesync/bonesync/appliance/passkeys"
	"github.com/bonesync/bonesync/appliance/users"
)

// Result is what a login came to.
type Result int

const (
	OK      Result = iota
	Wrong          // a wrong name, password or key
	Banned         // too many failures from the address: try later
	Fault          // the server could not check (its log says why)
	Delayed        // too many wrong guesses at the account or link: try later
	// NeedsCode: the password was right, but the account logs in with a
	// code as well (the web login form, Form): half a login, not yet in.
	// The form asks for the code (Door.Code); nothing else is let in.
	NeedsCode
)

// Message is a result's words for a person at a login form.
func (res Result) Message() string {
	switch res {
	case Wrong:
		return "Wrong user name or password."
	case Banned:
		return "Too many failed logins from your address: try again in a few minutes."
	case Fault:
		return "The box cannot check passwords now; its log says why."
	case Delayed:
		return "Too many wrong guesses at this account or link lately: try again in a little while."
	}
	return ""
}

// Status is a result's HTTP status: 401 when wrong (or a code is still to
// come), 429 when the address is banned or the account or link delayed,
// 503 when the box cannot check.
func (res Result) Status() int {
	switch res {
	case OK:
		return http.StatusOK
	case Wrong, NeedsCode:
		return http.StatusUnauthorized
	case Banned, Delayed:
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

// Door checks every login of the box.
type Door struct {
	// LoginPage is the web pages' login form, where a GET or HEAD of a
	// page's route (Page, Account, Admin) with neither credentials nor a
	// session is sent; "" answers it 401.
	LoginPage string
	// HomePage is the web pages' first page, where the page of a refusal
	// (Refusal) links back to.
	HomePage string

	accounts *users.DB
	bans     *bans
	targets  throttle
	trusted  knownAddrs // "user\x00addr": an account's own addresses
	slots    hashSlots
	sessions Sessions
	passkeys *passkeys.RelyingParty
	log      *slog.Logger
	known    knownAddrs
	audit    *audit.Log
}

// Audit records every login, failed login and ban in l from now on.
func (d *Door) Audit(l *audit.Log) {
	d.audit = l
	d.bans.audit = l
	if l != nil {
		l.Failed = func(err error) { d.log.Warn("not recorded in the audit log", "err", err) }
	}
}

// logged records a login in the audit log.
func (d *Door) logged(user, addr, proto string) {
	if err := d.audit.LoggedIn(user, addr, proto); err != nil {
		d.log.Warn("login not recorded in the audit log", "user", user, "addr", addr, "err", err)
	}
}

// knownAddrs are the addresses an account logged in from (its password,
// an app password or a key; not a public link's password), for 30 days,
// in memory: the ports let them in when a flood holds every handshake
// place (guard.Admission.Trust). The door keeps a second table of them
// by account (trusted), which skips the account's delay.
type knownAddrs struct {
	mu sync.Mutex
	m  map[string]time.Time
}

const knownFor = 30 * 24 * time.Hour

func (k *knownAddrs) add(addr string, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]time.Time{}
	}
	if len(k.m) >= 4096 { // forget the oldest half: a household has far fewer
		cut := now.Add(-knownFor / 2)
		for a, t := range k.m {
			if t.Before(cut) {
				delete(k.m, a)
			}
		}
		if len(k.m) >= 4096 {
			clear(k.m)
		}
	}
	k.m[addr] = now
}

func (k *knownAddrs) has(addr string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.m[addr]
	return ok && now.Sub(t) < knownFor
}

// Known says whether an account logged in from addr in the last 30 days
// (since this server started).
func (d *Door) Known(addr string) bool { return d.known.has(addr, d.bans.now()) }

// trust notes that user logged in from addr (or came back with a live
// session): from there, user's guesses skip the account's delay.
func (d *Door) trust(user, addr string) { d.trusted.add(user+"\x00"+addr, d.bans.now()) }

// trusts says whether user logged in from addr in the last 30 days, with
// a password, a code, a key or a live session.
func (d *Door) trusts(user, addr string) bool { return d.trusted.has(user+"\x00"+addr, d.bans.now()) }

// New returns the door to accounts, logging failures, bans and faults to
// log. It makes accounts hash through the door's slots (users.Turns), so
// that a password change and a flood of guesses never hash at once.
func New(accounts *users.DB, log *slog.Logger) *Door {
	d := &Door{accounts: accounts, bans: newBans(time.Now, log), log: log, passkeys: passkeys.New(accounts)}
	d.targets.now = time.Now
	d.sessions.stamp = accounts.Stamp
	d.sessions.seen = d.trust
	accounts.HashWith(&d.slots)
	return d
}

// Sessions are the web pages' sessions.
func (d *Door) Sessions() *Sessions { return &d.sessions }

// DrawFrom makes the Argon2id hashes draw their memory from the box's
// budget, beside the other work that takes much (a picture decoded whole,
// a calendar expanded), so that they never run together past the ceiling.
// Call it before serving.
func (d *Door) DrawFrom(b *budget.Budget) { d.slots.memory = b }

// Banned reports whether addr (a host, no port) may not try to log in now,
// and for how long.
func (d *Door) Banned(addr string) (bool, time.Duration) { return d.bans.Banned(addr) }

// Password checks user's password, tried from addr the way way says
// (ways: whether an app password counts, and what a two-factor account's
// own password comes to: on the web form, Form, a right one is NeedsCode,
// and the login waits for Code). While the account's delay runs, only a
// right app password, or an address user logged in from, gets through:
// their check costs no hash.
func (d *Door) Password(addr string, way Way, user, pw string) Result {
	g := d.account(addr, way, user)
	rule := ways[way]
	if rule.apps {
		g.bypass = func() bool { return g.trusted() || d.accounts.IsAppPassword(user, pw) }
	}
	takes := users.Takes{AppPasswords: rule.apps, TwoFactor: rule.twoFactor != refused}
	return d.check(g, func(suspect bool) (bool, error) {
		return d.accounts.CheckPassword(user, pw, suspect, takes)
	})
}

// Code checks user's second factor on the web pages' login form (a
// one-time password from their authenticator app, or a recovery code),
// tried from addr, under the same bans and the same delay of the account
// as a password: a wrong code is a failed login.
func (d *Door) Code(addr, user, code string) Result {
	return d.check(d.account(addr, formCode, user), func(bool) (bool, error) {
		return d.accounts.CheckCode(user, code)
	})
}

// twoFactorOn says whether user logs in to the web pages with a code
// after the password (and to clients with app passwords and keys only).
func (d *Door) twoFactorOn(user string) bool {
	on, _ := d.accounts.TOTP(user)
	return on
}

// linkPassword checks a public link's password (hash: its PHC string),
// tried from addr, under the same bans as every login, and with a delay
// of the link's own: a link's password is guessed like an account's. An
// address some account logged in from skips the link's delay.
func (d *Door) LinkPassword(addr, token, hash, pw string) Result {
	g := guess{addr: addr, way: linkPassword, user: "link:" + token, target: linkTarget(token)}
	g.trusted = func() bool { return d.Known(addr) }
	g.bypass = g.trusted
	return d.check(g, func(suspect bool) (bool, error) {
		return d.accounts.Verify(hash, pw, suspect), nil
	})
}

// accountName is a name a client gave as it is kept: whole if it may be
// an account's, else its first users.MaxName bytes, escaped, and a note
// of the length.
func accountName(user string) string { return logtext.Clean(user, users.MaxName) }

// RetryAfter is how long a guess at user's password from addr must wait
// now (the address's ban, or the account's delay): 0 when it may try.
func (d *Door) RetryAfter(addr, user string) time.Duration {
	if len(user) > users.MaxName {
		user = accountName(user) // as account() keys it
	}
	_, ban := d.bans.Banned(addr)
	if d.trusts(user, addr) {
		return ban
	}
	return max(ban, d.targets.wait(accountTarget(user)))
}

// LinkRetryAfter is RetryAfter for a public link's password.
func (d *Door) LinkRetryAfter(addr, token string) time.Duration {
	_, ban := d.bans.Banned(addr)
	if d.Known(addr) {
		return ban
	}
	return max(ban, d.targets.wait(linkTarget(token)))
}

// guess is one login attempt as check takes it.
type guess struct {
	addr   string
	way    Way
	user   string // the account, or "link:TOKEN" (for the logs)
	target target
	// trusted says the guess comes from the owner's own address: its
	// failures count, but it is never refused for the target's delay.
	trusted func() bool
	// bypass lets a guess through the target's delay when it costs no
	// hash (an app password) or is trusted.
	bypass func() bool
	// long is a name longer than any account's: a failed login before
	// any work (no hash)
	long bool
}

// account is a guess at user's account.
//
// A name longer than any account's (users.MaxName) is a failed login
// before any work, and what the door keeps of it (the bans' failures, the
// log, the audit record, the delay's key) is cut to users.MaxName: 200
// failed logins with 500 KB names held 100 MB of them.
func (d *Door) account(addr string, way Way, user string) guess {
	long := len(user) > users.MaxName
	if long {
		user = accountName(user)
	}
	g := guess{addr: addr, way: way, user: user, target: accountTarget(user), long: long}
	g.trusted = func() bool { return d.trusts(user, addr) }
	g.bypass = g.trusted
	return g
}

// check is the one path every password, code and link password takes:
// the address's ban, the target's delay (both refused at once, before
// any hash), the address's turn, then verify.
func (d *Door) check(g guess, verify func(suspect bool) (bool, error)) Result {
	proto := g.way.proto()
	if g.long {
		verify = func(bool) (bool, error) { return false, nil }
	}
	if banned, _ := d.bans.Banned(g.addr); banned {
		return Banned
	}
	end, wait := d.targets.begin(g.target)
	if end == nil {
		if !g.bypass() {
			// A failure of the address too: a flood of guesses at a
			// waiting account is banned at the address as a flood of
			// wrong ones is, instead of asking again as fast as TLS goes.
			d.bans.Failed(g.addr, proto, g.user)
			d.log.Info("guess refused: its account or link waits", "proto", proto, "user", g.user, "addr", g.addr, "wait", wait)
			return Delayed
		}
		end = func(wrong bool) {
			if wrong {
				d.targets.failed(g.target)
			}
		}
	}
	done, allowed := d.bans.Begin(g.addr, proto, g.user)
	if !allowed {
		end(false)
		return Banned
	}
	ok, err := verify(d.bans.Suspect(g.addr))
	switch {
	case err != nil:
		end(false)
		done(serverFault)
		d.log.Error("login not checked", "proto", proto, "user", g.user, "addr", g.addr, "err", err)
		return Fault
	case !ok:
		end(true)
		done(wrongPassword)
		return Wrong
	}
	end(false)
	// A password on the web form is half a login when a code follows:
	// it forgives no failure (else a thief of the password could guess
	// codes for ever, a right password between every four wrong codes),
	// and the address is not known until the code is right.
	if ways[g.way].twoFactor == half && d.twoFactorOn(g.user) {
		done(halfLogin)
		return NeedsCode
	}
	done(loggedIn)
	if g.way != linkPassword {
		d.known.add(g.addr, d.bans.now())
		d.trust(g.user, g.addr)
		d.logged(g.user, g.addr, proto)
	}
	return OK
}

// PublicKey checks one key an SSH client offers for user. A refused key is
// no failure by itself (a client offers the keys it has, one after
// another): KeysRefused counts a connection that ends with none taken.
func (d *Door) PublicKey(addr, user string, key ssh.PublicKey) Result {
	ok, err := d.accounts.CheckKey(user, key)
	switch {
	case err != nil:
		d.log.Error("key not checked", "proto", sshKey.proto(), "user", user, "addr", addr, "err", err)
		return Fault
	case !ok:
		return Wrong
	}
	d.known.add(addr, d.bans.now())
	d.trust(user, addr)
	d.logged(user, addr, sshKey.proto())
	return OK
}

// KeysRefused counts, as one failed login, an SSH connection from addr
// that offered only keys user does not have.
func (d *Door) KeysRefused(addr, user string) {
	d.bans.Failed(addr, sshKey.proto(), accountName(user)+" (no key accepted)")
}
