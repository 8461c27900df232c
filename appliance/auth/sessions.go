package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
)

// SessionCookie names the web pages' session. The __Host- prefix makes
// browsers refuse it unless it is Secure, for the whole box (Path=/) and for
// this host only (no Domain).
const SessionCookie = "__Host-bonesync"

// Session lifetimes: a session ends after IdleFor without a request, and
// after MaxFor in any case; a password change or the account's deletion
// ends it at once (the account's stamp, users.DB.Stamp). Sessions live in
// memory: a restart logs everyone out, and logging in writes nothing to
// the card.
const (
	IdleFor = 24 * time.Hour
	MaxFor  = 14 * 24 * time.Hour
	// maxSessions bounds the table; the least recently used goes first.
	maxSessions = 1000
	// ConfirmFor is how long a session's password counts as just typed:
	// changing the box's firmware from the web needs it typed within this
	// (at login, or again on the admin page).
	ConfirmFor = 5 * time.Minute
)

// Session is one browser logged in.
type Session struct {
	User string
	// CSRF is the token every changing request of the session must carry
	// (Allows).
	CSRF      string
	stamp     string // the account's stamp at login
	created   time.Time
	seen      time.Time
	confirmed time.Time // the password last typed (at login, or Confirm)
}

// Sessions are the browsers logged in, by the SHA-256 of their cookie (a
// memory dump shows no cookie that works).
type Sessions struct {
	// Now is the clock (time.Now if nil).
	Now func() time.Time

	stamp func(user string) string // "" ends every session of the user
	seen  func(user, addr string)  // a live session came from addr
	mu    sync.Mutex
	m     map[[32]byte]*Session
}

func (s *Sessions) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// RandomToken is 256 random bits, as a cookie or form token.
func RandomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Start makes a session for user and sets its cookie on w.
func (s *Sessions) Start(w http.ResponseWriter, user string) *Session {
	tok := RandomToken()
	now := s.now()
	sess := &Session{User: user, CSRF: RandomToken(), stamp: s.stamp(user), created: now, seen: now, confirmed: now}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[[32]byte]*Session{}
	}
	if len(s.m) >= maxSessions {
		s.evictLocked(now)
	}
	s.m[sha256.Sum256([]byte(tok))] = sess
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: tok, Path: "/", MaxAge: int(MaxFor.Seconds()),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return sess
}

// evictLocked drops expired sessions and, if the table is still full, the
// least recently used tenth.
func (s *Sessions) evictLocked(now time.Time) {
	type kv struct {
		k    [32]byte
		seen time.Time
	}
	var all []kv
	for k, v := range s.m {
		if s.expired(v, now) {
			delete(s.m, k)
			continue
		}
		all = append(all, kv{k, v.seen})
	}
	if len(s.m) < maxSessions {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seen.Before(all[j].seen) })
	for _, e := range all[:len(all)/10+1] {
		delete(s.m, e.k)
	}
}

func (s *Sessions) expired(v *Session, now time.Time) bool {
	return now.Sub(v.seen) > IdleFor || now.Sub(v.created) > MaxFor
}

// get returns r's session if its cookie names a live one.
func (s *Sessions) get(r *http.Request) (*Session, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return nil, false
	}
	key := sha256.Sum256([]byte(c.Value))
	now := s.now()
	s.mu.Lock()
	v, ok := s.m[key]
	if ok && s.expired(v, now) {
		delete(s.m, key)
		ok = false
	}
	var user, stamp string
	if ok {
		user, stamp = v.User, v.stamp
	}
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	// The account's stamp is read without the lock: it reads users.json.
	if st := s.stamp(user); st == "" || st != stamp {
		s.mu.Lock()
		delete(s.m, key)
		s.mu.Unlock()
		return nil, false
	}
	s.mu.Lock()
	v.seen = now
	s.mu.Unlock()
	if s.seen != nil {
		s.seen(user, guard.Host(r.RemoteAddr))
	}
	return v, true
}

// End logs r's session out and clears its cookie.
func (s *Sessions) End(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(SessionCookie); err == nil {
		s.mu.Lock()
		delete(s.m, sha256.Sum256([]byte(c.Value)))
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// Renew keeps the session of user that r carries with a new password's
// stamp: the one changing it stays logged in, every other session ends.
func (s *Sessions) Renew(r *http.Request, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return
	}
	if v, ok := s.m[sha256.Sum256([]byte(c.Value))]; ok && v.User == user {
		v.stamp = s.stamp(user)
	}
}

// confirm notes that sess's user has just typed their password again.
func (s *Sessions) confirm(sess *Session) {
	s.mu.Lock()
	sess.confirmed = s.now()
	s.mu.Unlock()
}

// isConfirmed says whether sess's password was typed within ConfirmFor.
func (s *Sessions) isConfirmed(sess *Session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now().Sub(sess.confirmed) <= ConfirmFor
}

// safeMethod says whether a method only reads: it needs no CSRF token.
func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, "PROPFIND":
		return true
	}
	return false
}

// allows checks a changing request's token, from the X-CSRF-Token header
// (scripts) or the csrf form field (forms), against the session's. (A
// request a browser marks as sent from another site never gets here: the
// front refuses it, net/http's CrossOriginProtection.)
func (s *Session) allows(r *http.Request) bool {
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		tok = r.PostFormValue("csrf")
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.CSRF)) == 1
}
