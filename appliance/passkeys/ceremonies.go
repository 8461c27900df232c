package passkeys

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/bonesync/bonesync/appliance/guard"
)

// Passkey ceremonies begun and not yet finished: the challenge the
// browser must sign, kept here (a page cannot choose its own), for
// ceremonyFor, once. Beginning a sign-in needs no login, so the table is
// bounded as the login flows' is (package webui): a client (guard.Source)
// holds at most ceremoniesPerSource, its next replaces its own oldest,
// and a full table makes room at the client holding the most
// (guard.Crowding), so that a flood of begin-requests from a few
// addresses neither grows it nor pushes the owner's out.
const (
	ceremonyFor         = 5 * time.Minute
	maxCeremonies       = 256 // about 1 KB each
	ceremoniesPerSource = 4
)

// ceremonyKind tells a sign-in from a registration, so that one begun
// for either is never finished as the other.
type ceremonyKind int

const (
	signIn ceremonyKind = iota + 1
	registration
)

type ceremony struct {
	kind    ceremonyKind
	session webauthn.SessionData
	// user is the account it was begun for; "" for a sign-in whose
	// account the passkey names (usernameless).
	user   string
	handle []byte // the account's user handle, for a registration
	host   string // the request's Host it was begun at (its origin)
	rpID   string // the host name of host
	source string
	until  time.Time
}

type ceremonies struct {
	mu sync.Mutex
	m  map[string]*ceremony
}

// add keeps c under a new token, making room as the table's rule says;
// "" when there is none (the table is full of others' ceremonies, none
// holding two more than c's client).
func (cs *ceremonies) add(c *ceremony, now time.Time) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[string]*ceremony{}
	}
	held := map[string]int{}
	for k, v := range cs.m {
		if now.After(v.until) {
			delete(cs.m, k)
			continue
		}
		held[v.source]++
	}
	switch {
	case held[c.source] >= ceremoniesPerSource:
		cs.dropOldest(c.source)
	case len(cs.m) >= maxCeremonies:
		heavy, ok := guard.Crowding(held, func(n int) int { return n }, held[c.source], false)
		if !ok {
			return ""
		}
		cs.dropOldest(heavy)
	}
	tok := rand.Text() // 128 random bits
	c.until = now.Add(ceremonyFor)
	cs.m[tok] = c
	return tok
}

// dropOldest drops source's oldest ceremony; the caller holds the lock.
func (cs *ceremonies) dropOldest(source string) {
	oldest := ""
	for k, v := range cs.m {
		if v.source == source && (oldest == "" || v.until.Before(cs.m[oldest].until)) {
			oldest = k
		}
	}
	delete(cs.m, oldest)
}

// take returns the ceremony under tok, of kind, and forgets it: each is
// finished once, right or wrong.
func (cs *ceremonies) take(tok string, kind ceremonyKind, now time.Time) (*ceremony, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.m[tok]
	delete(cs.m, tok)
	if !ok || c.kind != kind || now.After(c.until) {
		return nil, false
	}
	return c, true
}
