// Package guard protects the ports from being taken by a few clients:
// connections are admitted per source address (Admission: so many open,
// so many still in their handshake), and the TLS and SSH handshakes in
// flight are capped box-wide (Limiter), a connection holding a slot only
// while the server works on a complete handshake message (Gate). On a
// one-core board a handshake flood is the easiest way to take the box
// down. Failed logins and bans are the login door's (package auth).
package guard

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// Limits are one port's caps per client address (the config's
// https_connections_per_address, ssh_connections_per_address and
// waiting_per_address).
type Limits struct {
	PerAddress int // connections open at once from one address
	Waiting    int // of them, not yet through their handshake (TLS) or login (SSH)
}

// MaxWaiting bounds the connections still in their handshake on one port,
// from all addresses together: what a flood from many addresses may hold.
const MaxWaiting = 512

// Admission counts one port's connections per client address and refuses
// those over its Limits, so that one device, broken or hostile, cannot take
// the port from the others: its extra connections are closed at once.
type Admission struct {
	name    string // the port's service, for log lines: "https", "sftp"
	limits  Limits
	notices *Notices

	mu      sync.Mutex
	addrs   map[string]*addrConns
	waiting int
}

type addrConns struct{ open, waiting int }

// NewAdmission counts connections to the port of service name; refusals are
// logged once an hour per address and limit.
func NewAdmission(name string, l Limits, log *slog.Logger) *Admission {
	return &Admission{name: name, limits: l, notices: NewNotices(log), addrs: map[string]*addrConns{}}
}

// Ticket is one admitted connection. Call Ready when its handshake (or
// login) is over and Done when it has closed; both may be called more than
// once.
type Ticket struct {
	a              *Admission
	addr           string
	waiting, ended bool
}

// Admit admits a new connection from addr (a host, without port), or
// returns nil if addr is at one of its limits or the port at MaxWaiting. A
// nil Admission admits everything.
func (a *Admission) Admit(addr string) *Ticket {
	if a == nil {
		return &Ticket{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.addrs[addr]
	if c == nil {
		c = &addrConns{}
	}
	switch {
	case c.open >= a.limits.PerAddress:
		a.notices.Warn(addr+" open", "refusing connections: the limit of open ones per address (logged once an hour)",
			"service", a.name, "addr", addr, "open", c.open)
		return nil
	case c.waiting >= a.limits.Waiting:
		a.notices.Warn(addr+" waiting", "refusing connections: waiting_per_address are in their handshake or login (logged once an hour)",
			"service", a.name, "addr", addr, "waiting", c.waiting)
		return nil
	case a.waiting >= MaxWaiting:
		a.notices.Warn("all waiting", "refusing new connections: too many from all addresses are in their handshake (logged once an hour)",
			"service", a.name, "waiting", a.waiting)
		return nil
	}
	c.open++
	c.waiting++
	a.waiting++
	a.addrs[addr] = c
	return &Ticket{a: a, addr: addr, waiting: true}
}

// Ready marks the connection as through its handshake or login.
func (t *Ticket) Ready() {
	if t.a == nil {
		return
	}
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	t.ready()
}

func (t *Ticket) ready() {
	if t.waiting {
		t.waiting = false
		t.a.addrs[t.addr].waiting--
		t.a.waiting--
	}
}

// Done marks the connection as closed.
func (t *Ticket) Done() {
	if t.a == nil {
		return
	}
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	if t.ended {
		return
	}
	t.ready()
	t.ended = true
	c := t.a.addrs[t.addr]
	if c.open--; c.open == 0 {
		delete(t.a.addrs, t.addr)
	}
}

// Notices prints a message once per key and hour: a limit that bites a
// thousand times is one line, not a thousand.
type Notices struct {
	log   *slog.Logger
	every time.Duration

	mu   sync.Mutex
	last map[string]time.Time
}

// NewNotices logs warnings to log (nil: nowhere).
func NewNotices(log *slog.Logger) *Notices {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Notices{log: log, every: time.Hour, last: map[string]time.Time{}}
}

// Warn logs msg and its attributes as a warning unless key was logged
// within the hour.
func (n *Notices) Warn(key, msg string, attrs ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	if t, ok := n.last[key]; ok && now.Sub(t) < n.every {
		return
	}
	if len(n.last) >= 4096 { // many addresses: forget the old ones
		for k, t := range n.last {
			if now.Sub(t) >= n.every {
				delete(n.last, k)
			}
		}
		if len(n.last) >= 4096 {
			clear(n.last)
		}
	}
	n.last[key] = now
	n.log.Warn(msg, attrs...)
}

// Host is the address part of a "host:port" remote address: what the
// limits and the login bans count by.
func Host(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}
