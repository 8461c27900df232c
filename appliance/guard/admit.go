// Package guard protects the ports from being taken by a few clients:
// connections are admitted per source address (Admission: so many open,
// so many still in their handshake), and the TLS and SSH handshakes in
// flight are capped box-wide (Limiter), a connection holding a slot only
// while the server works on a complete handshake message (Gate). On a
// one-core board a handshake flood is the easiest way to take the box
// down. Failed logins and bans are the login door's (package auth).
package guard

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/logtext"
)

// Limits are one port's caps per client (the config's
// https_connections_per_address, ssh_connections_per_address and
// waiting_per_address). A client is an address, or an IPv6 /64 off the
// home network (Source).
type Limits struct {
	PerAddress int // connections open at once from one client
	Waiting    int // of them, not yet through their handshake (TLS) or login (SSH)
}

// MaxWaiting bounds the connections still in their handshake on one port,
// from all clients together: what a flood from many addresses may hold.
const MaxWaiting = 512

// Admission counts one port's connections per client and refuses those over
// its Limits, so that one device, broken or hostile, cannot take the port
// from the others: its extra connections are closed at once. When the
// port's MaxWaiting handshakes are all taken (a flood from many addresses),
// a newcomer is not refused while another client holds at least two more
// handshakes than it: the longest-waiting handshake of the client holding
// the most is closed to make room. A flood can then take no more than its
// share.
type Admission struct {
	name    string // the port's service, for log lines: "https", "sftp"
	limits  Limits
	notices *Notices

	known  func(addr string) bool                  // addresses that logged in before (Trust)
	banned func(addr string) (bool, time.Duration) // addresses banned for failed logins (Bans)
	heard  map[string]*hearing                     // banned clients' connections let through lately
	probes *Probes                                 // the owner's probes, past the per-address limits (Probes)
	now    func() time.Time                        // the clock of heard; nil: time.Now

	mu      sync.Mutex
	addrs   map[string]*addrConns
	waiting int
}

type addrConns struct {
	open  int
	queue []*Ticket // those in their handshake, oldest first
}

// NewAdmission counts connections to the port of service name; refusals are
// logged once an hour per client and limit.
func NewAdmission(name string, l Limits, log *slog.Logger) *Admission {
	return &Admission{name: name, limits: l, notices: NewNotices(log), addrs: map[string]*addrConns{}}
}

// Ticket is one admitted connection. Call Ready when its handshake (or
// login) is over and Done when it has closed; both may be called more than
// once.
type Ticket struct {
	a              *Admission
	src            string
	conn           io.Closer // closed if the ticket is evicted
	waiting, ended bool
}

// Trust lets the addresses known says logged in before (auth.Door.Known)
// in even when the port's handshakes are all taken and no client holds
// two more than they do: a flood from as many addresses as there are
// places cannot keep the household's devices out.
func (a *Admission) Trust(known func(addr string) bool) *Admission {
	a.known = known
	return a
}

// A banned client's connections go on to be told why (Bans) HearBurst
// at a time, every HearEvery: a browser's few (a page, then a form's
// post), a device's client and its retry.
const (
	HearEvery = 10 * time.Second
	HearBurst = 5
)

// maxHeard bounds the banned clients remembered as heard.
const maxHeard = 4096

// hearing is what a banned client was let through in its window.
type hearing struct {
	since time.Time
	n     int
}

// Bans closes the connections of the clients banned says are banned
// (auth.Door.Banned, for failed logins) before their handshake, but
// HearBurst every HearEvery, which go on to be told why (a 429 naming the
// wait, a refused SSH login): a banned client's flood costs the box a few
// handshakes in that time, not one a connection, and a person at a
// banned device still reads the reason.
func (a *Admission) Bans(banned func(addr string) (bool, time.Duration)) *Admission {
	a.banned = banned
	return a
}

// hear says whether a banned client's connection may go on now, and
// counts it; a.mu is held.
func (a *Admission) hear(src string, now time.Time) bool {
	if h, ok := a.heard[src]; ok && now.Sub(h.since) < HearEvery {
		if h.n >= HearBurst {
			return false
		}
		h.n++
		return true
	}
	if len(a.heard) >= maxHeard {
		for k, h := range a.heard {
			if now.Sub(h.since) >= HearEvery {
				delete(a.heard, k)
			}
		}
		if len(a.heard) >= maxHeard {
			return false
		}
	}
	if a.heard == nil {
		a.heard = map[string]*hearing{}
	}
	a.heard[src] = &hearing{since: now, n: 1}
	return true
}

// Source is what the limits count by: the address; for an IPv6 address
// off the home network, its /64 (one host may hold a whole /64). On the
// home network (link-local, unique-local, or a prefix of the box's own
// interfaces) each device is its own client: the household shares that
// /64 with whoever floods from it, and only the login-based trust tells
// them apart.
func Source(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() || ip.IsLinkLocalUnicast() || ip.IsPrivate() || ip.IsLoopback() || onLink(ip) {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// onLinks are the box's own IPv6 prefixes, read again once a minute.
var onLinks struct {
	sync.Mutex
	read     time.Time
	prefixes []netip.Prefix
}

func onLink(ip netip.Addr) bool {
	onLinks.Lock()
	defer onLinks.Unlock()
	if time.Since(onLinks.read) > time.Minute {
		onLinks.read, onLinks.prefixes = time.Now(), nil
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if p, err := netip.ParsePrefix(n.String()); err == nil && p.Addr().Is6() {
					onLinks.prefixes = append(onLinks.prefixes, p.Masked())
				}
			}
		}
	}
	for _, p := range onLinks.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Admit admits a new connection c from addr (a host, without port), or
// returns nil if addr's client is at one of its limits, or the port's
// handshakes are all taken by clients that hold no more than it does. c is
// closed if the connection is evicted for another while in its handshake.
// A nil Admission admits everything.
func (a *Admission) Admit(addr string, c io.Closer) *Ticket {
	if a == nil {
		return &Ticket{}
	}
	src := Source(addr)
	var victim io.Closer
	defer func() {
		if victim != nil {
			victim.Close() // outside the lock: its Done takes it
		}
	}()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.banned != nil {
		now := time.Now
		if a.now != nil {
			now = a.now
		}
		if banned, _ := a.banned(addr); banned && !a.hear(src, now()) {
			return nil
		}
	}
	cs := a.addrs[src]
	if cs == nil {
		cs = &addrConns{}
	}
	capped := (cs.open >= a.limits.PerAddress || len(cs.queue) >= a.limits.Waiting) && !a.probes.take(src)
	switch {
	case capped && cs.open >= a.limits.PerAddress:
		a.notices.Warn(src+" open", "refusing connections: the limit of open ones per address (logged once an hour)",
			"service", a.name, "addr", src, "open", cs.open)
		return nil
	case capped:
		a.notices.Warn(src+" waiting", "refusing connections: waiting_per_address are in their handshake or login (logged once an hour)",
			"service", a.name, "addr", src, "waiting", len(cs.queue))
		return nil
	case a.waiting >= MaxWaiting:
		held := func(c *addrConns) int { return len(c.queue) }
		trusted := a.known != nil && a.known(addr)
		key, ok := Crowding(a.addrs, held, len(cs.queue), trusted)
		heavy := a.addrs[key]
		if !ok {
			a.notices.Warn("all waiting", "refusing new connections: too many from all addresses are in their handshake (logged once an hour)",
				"service", a.name, "waiting", a.waiting)
			return nil
		}
		old := heavy.queue[0]
		old.ready() // out of the count now; its close ends it
		victim = old.conn
		a.notices.Warn("evicting", "all handshakes are taken: closing the oldest of the client holding the most, for a newcomer (logged once an hour)",
			"service", a.name, "from", old.src, "waiting", len(heavy.queue)+1, "for", src)
	}
	t := &Ticket{a: a, src: src, conn: c, waiting: true}
	cs.open++
	cs.queue = append(cs.queue, t)
	a.waiting++
	a.addrs[src] = cs
	return t
}

// Crowding is whom a newcomer holding mine places of a full pool may make
// room at: the client holding the most, if it holds at least two more
// (one more would let each evicted client evict another on its return,
// and a flood churn), or, for a trusted newcomer, any that holds some.
// The port's handshakes and the web's login flows share this policy.
func Crowding[K comparable, V any](holders map[K]V, held func(V) int, mine int, trusted bool) (heaviest K, ok bool) {
	most := 0
	for k, h := range holders {
		if n := held(h); n > most {
			heaviest, most = k, n
		}
	}
	return heaviest, most > 0 && (trusted || most >= mine+2)
}

// HandshakeTimeout is how long a new connection may take over its
// handshake: base, or a quarter of it (at least 2 s) while more than half
// the port's handshakes are taken, so that a flood's idle connections give
// their places back sooner.
func (a *Admission) HandshakeTimeout(base time.Duration) time.Duration {
	if a == nil {
		return base
	}
	a.mu.Lock()
	busy := a.waiting > MaxWaiting/2
	a.mu.Unlock()
	if busy {
		return max(base/4, 2*time.Second)
	}
	return base
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
	if !t.waiting {
		return
	}
	t.waiting = false
	cs := t.a.addrs[t.src]
	if i := slices.Index(cs.queue, t); i >= 0 {
		cs.queue = slices.Delete(cs.queue, i, i+1)
	}
	t.a.waiting--
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
	cs := t.a.addrs[t.src]
	if cs.open--; cs.open == 0 {
		delete(t.a.addrs, t.src)
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
// within the hour. The key is kept cut to maxNoticeKey bytes: it may
// hold a client's words (a TLS error quotes the protocols a ClientHello
// offered, up to 64 KB), and 4096 of them are remembered.
func (n *Notices) Warn(key, msg string, attrs ...any) {
	key = logtext.Clean(key, maxNoticeKey) // a copy when cut: no slice of a long key is kept
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

// maxNoticeKey bounds a notice's key: an address and the start of an
// error.
const maxNoticeKey = 160

// Host is the address part of a "host:port" remote address: what the
// limits and the login bans count by.
func Host(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}
