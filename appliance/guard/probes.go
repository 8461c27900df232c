package guard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"sync"
	"time"
)

// A probe's allowance: how long a pass may be used, and what it lets
// through once used. 100 users at 1, 10, 50 and 100 at once, three
// connections each, over HTTPS and SFTP, is 966 connections.
const (
	passFor        = 15 * time.Minute
	allowFor       = 10 * time.Minute
	allowConns     = 2000
	maxAllowances  = 16
	passTokenBytes = 20
)

// errNoPass is a token that is no pass, or no longer one.
var errNoPass = errors.New("no such probe pass, or it expired")

// Probes let the owner's probe (bonesync probe -token) through the
// per-address caps: the admin page makes a pass, good for passFor; a
// probe that shows it gets, for its address, allowFor and allowConns
// connections on every port that are not counted against the address's
// Limits. The port-wide MaxWaiting, the handshake limiter and the bans
// still hold: a pass lets one laptop act as a household, not a flood.
type Probes struct {
	mu     sync.Mutex
	passes map[string]time.Time // token -> expiry
	allow  map[string]*allowance
	now    func() time.Time // nil: time.Now
}

type allowance struct {
	until time.Time
	left  int
}

// Allowance is what a pass let through.
type Allowance struct {
	Source      string    // the client, as the limits count it (Source)
	Until       time.Time // when the allowance ends
	Connections int       // how many connections it lets past the caps
}

// NewProbes has no passes.
func NewProbes() *Probes {
	return &Probes{passes: map[string]time.Time{}, allow: map[string]*allowance{}}
}

func (p *Probes) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// Pass makes a pass, a token good until expires.
func (p *Probes) Pass() (token string, expires time.Time, err error) {
	b := make([]byte, passTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", time.Time{}, err
	}
	token = base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	p.tidy(now)
	expires = now.Add(passFor)
	p.passes[token] = expires
	return token, expires, nil
}

// Let lets the client at addr (a host) through the caps, if token is a
// pass not yet expired: a pass may be shown again (by each of a probe's
// protocols), each time starting the allowance anew.
func (p *Probes) Let(token, addr string) (Allowance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	p.tidy(now)
	ok := false
	for t := range p.passes { // every pass compared, in constant time each
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			ok = true
		}
	}
	if !ok {
		return Allowance{}, errNoPass
	}
	src := Source(addr)
	if _, again := p.allow[src]; !again && len(p.allow) >= maxAllowances {
		return Allowance{}, errors.New("too many probes are let through at once")
	}
	a := Allowance{Source: src, Until: now.Add(allowFor), Connections: allowConns}
	p.allow[a.Source] = &allowance{until: a.Until, left: a.Connections}
	return a, nil
}

// take says whether a connection from src is let past the caps, and
// counts it.
func (p *Probes) take(src string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.allow[src]
	if !ok {
		return false
	}
	if a.left <= 0 || !p.clock().Before(a.until) {
		delete(p.allow, src)
		return false
	}
	a.left--
	return true
}

// tidy forgets the passes and allowances that ended; p.mu is held.
func (p *Probes) tidy(now time.Time) {
	for t, exp := range p.passes {
		if !now.Before(exp) {
			delete(p.passes, t)
		}
	}
	for src, a := range p.allow {
		if a.left <= 0 || !now.Before(a.until) {
			delete(p.allow, src)
		}
	}
}

// Probes lets the clients probes has let through past the port's
// per-address Limits (a connection counted against their allowance).
func (a *Admission) Probes(probes *Probes) *Admission {
	a.probes = probes
	return a
}
