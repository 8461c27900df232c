// Package auth is the box's one login door. Every way in asks a Door: HTTP
// Basic (WebDAV, CalDAV, CardDAV, the Nextcloud protocol, the admin routes),
// the web pages' session and login form, app passwords, and SSH passwords
// and keys. The door checks the account (package users) under one policy:
//
//   - failed logins are counted per source address across every protocol,
//     and an address that fails MaxFailures times within Window is banned,
//     for a time that doubles with each ban (bans.go);
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
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/logtext"
	"github.com/bonesync/bonesync/appliance/users"
)

// Result is what a login came to.
type Result int

const (
	OK     Result = iota
	Wrong         // a wrong name, password or key
	Banned        // too many failures from the address: try later
	Fault         // the server could not check (its log says why)
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
	}
	return ""
}

// Door checks every login of the box.
type Door struct {
	// LoginPage is the web pages' login form, where a browser that asks
	// for a page with neither credentials nor a session is sent; "" gives
	// it a Basic challenge like any client.
	LoginPage string

	accounts *users.DB
	bans     *bans
	slots    hashSlots
	sessions Sessions
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
// place (guard.Admission.Trust).
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

// Known says whether an account logged in from addr in the last 30 days
// (since this server started).
func (d *Door) Known(addr string) bool {
	d.known.mu.Lock()
	defer d.known.mu.Unlock()
	t, ok := d.known.m[addr]
	return ok && time.Since(t) < knownFor
}

// New returns the door to accounts, logging failures, bans and faults to
// log. It makes accounts hash through the door's slots (users.Turns), so
// that a password change and a flood of guesses never hash at once.
func New(accounts *users.DB, log *slog.Logger) *Door {
	d := &Door{accounts: accounts, bans: newBans(time.Now, log), log: log}
	d.sessions.stamp = accounts.Stamp
	accounts.HashWith(&d.slots)
	return d
}

// Sessions are the web pages' sessions.
func (d *Door) Sessions() *Sessions { return &d.sessions }

// Heavy is the slot the Argon2id hashes run in, one at a time: other work
// that takes as much memory (a picture decoded whole for its preview)
// takes it too, so the two never run together within the box's ceiling.
func (d *Door) Heavy() users.Turns { return &d.slots }

// Banned reports whether addr (a host, no port) may not try to log in now,
// and for how long.
func (d *Door) Banned(addr string) (bool, time.Duration) { return d.bans.Banned(addr) }

// Password checks user's password or one of its app passwords, tried from
// addr over proto ("webdav", "sftp"...).
func (d *Door) Password(addr, proto, user, pw string) Result {
	return d.checkAccount(addr, proto, user, func(suspect bool) (bool, error) {
		return d.accounts.CheckPassword(user, pw, suspect)
	})
}

// AccountPassword is Password for the account's own password only, never
// an app password: the web pages' login form and the account page take
// it, so that an app password (given to a sync client, perhaps on a phone
// that is lost) cannot make more of them or change the password.
func (d *Door) AccountPassword(addr, proto, user, pw string) Result {
	return d.checkAccount(addr, proto, user, func(suspect bool) (bool, error) {
		return d.accounts.CheckAccountPassword(user, pw, suspect)
	})
}

// Code checks user's second factor on the web pages' login form (a
// one-time password from their authenticator app, or a recovery code),
// tried from addr, under the same bans as a password: a wrong code is a
// failed login.
func (d *Door) Code(addr, user, code string) Result {
	return d.checkAccount(addr, "web+code", user, func(bool) (bool, error) {
		return d.accounts.CheckCode(user, code)
	})
}

// TwoFactor says whether user logs in to the web pages with a code after
// the password (and to clients with app passwords and keys only).
func (d *Door) TwoFactor(user string) bool {
	on, _ := d.accounts.TOTP(user)
	return on
}

// LinkPassword checks a public link's password (hash: its PHC string),
// tried from addr, under the same bans as every login: a link's password
// is guessed like an account's.
func (d *Door) LinkPassword(addr, token, hash, pw string) Result {
	return d.check(addr, "link", "link:"+token, func(suspect bool) (bool, error) {
		return d.accounts.Verify(hash, pw, suspect), nil
	})
}

// checkAccount is check for a login to an account, named by the client:
// a name longer than any account's (users.MaxName) is a failed login
// before any work (no hash), and what the door keeps of it (the bans'
// failures, the log, the audit record) is cut to users.MaxName: 200
// failed logins with 500 KB names held 100 MB of them.
func (d *Door) checkAccount(addr, proto, user string, verify func(suspect bool) (bool, error)) Result {
	if len(user) > users.MaxName {
		user = accountName(user)
		verify = func(bool) (bool, error) { return false, nil }
	}
	return d.check(addr, proto, user, verify)
}

// accountName is a name a client gave as it is kept: whole if it may be
// an account's, else its first users.MaxName bytes, escaped, and a note
// of the length.
func accountName(user string) string { return logtext.Clean(user, users.MaxName) }

func (d *Door) check(addr, proto, user string, verify func(suspect bool) (bool, error)) Result {
	if banned, _ := d.bans.Banned(addr); banned {
		return Banned
	}
	done, allowed := d.bans.Begin(addr, proto, user)
	if !allowed {
		return Banned
	}
	ok, err := verify(d.bans.Suspect(addr))
	switch {
	case err != nil:
		done(serverFault)
		d.log.Error("login not checked", "proto", proto, "user", user, "addr", addr, "err", err)
		return Fault
	case !ok:
		done(wrongPassword)
		return Wrong
	}
	// A password on the web form is half a login when a code follows:
	// it forgives no failure (else a thief of the password could guess
	// codes for ever, a right password between every four wrong codes),
	// and the address is not known until the code is right.
	if proto == "web" && d.TwoFactor(user) {
		done(halfLogin)
		return OK
	}
	done(loggedIn)
	if proto != "link" {
		d.known.add(addr, time.Now())
		d.logged(user, addr, proto)
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
		d.log.Error("key not checked", "proto", "sftp", "user", user, "addr", addr, "err", err)
		return Fault
	case !ok:
		return Wrong
	}
	d.known.add(addr, time.Now())
	d.logged(user, addr, "sftp key")
	return OK
}

// KeysRefused counts, as one failed login, an SSH connection from addr
// that offered only keys user does not have.
func (d *Door) KeysRefused(addr, user string) {
	d.bans.Failed(addr, "sftp", accountName(user)+" (no key accepted)")
}
