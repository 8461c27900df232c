package webui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/web"
)

// Session cookie: the __Host- prefix makes browsers refuse it unless it is
// Secure, for the whole box (Path=/) and for this host only (no Domain).
const (
	sessionCookie = "__Host-bonesync"
	loginCookie   = "__Host-bonesync-login" // the login form's CSRF token, before there is a session
)

// Session lifetimes: a session ends after IdleFor without a request, and
// after MaxFor in any case; a password change or the account's deletion
// ends it at once (users.DB.Stamp). Sessions live in memory: a restart
// logs everyone out, and logging in writes nothing to the card.
const (
	IdleFor = 24 * time.Hour
	MaxFor  = 14 * 24 * time.Hour
	// maxSessions bounds the table; the least recently used goes first.
	maxSessions = 1000
)

type session struct {
	user    string
	csrf    string
	stamp   string // the account's users.DB.Stamp at login
	created time.Time
	seen    time.Time
}

// Sessions are the browsers logged in, by the SHA-256 of their cookie (a
// memory dump shows no cookie that works).
type Sessions struct {
	// Stamp is the account's users.DB.Stamp; "" ends every session of it.
	Stamp func(user string) string
	// Now is the clock (time.Now if nil); tests move it.
	Now func() time.Time

	mu sync.Mutex
	m  map[[32]byte]*session
}

func (s *Sessions) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func randomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// start makes a session for user and sets its cookie on w.
func (s *Sessions) start(w http.ResponseWriter, user string) *session {
	tok := randomToken()
	now := s.now()
	sess := &session{user: user, csrf: randomToken(), stamp: s.Stamp(user), created: now, seen: now}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[[32]byte]*session{}
	}
	if len(s.m) >= maxSessions {
		s.evictLocked(now)
	}
	s.m[sha256.Sum256([]byte(tok))] = sess
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", MaxAge: int(MaxFor.Seconds()),
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

func (s *Sessions) expired(v *session, now time.Time) bool {
	return now.Sub(v.seen) > IdleFor || now.Sub(v.created) > MaxFor
}

// get returns r's session if its cookie names a live one.
func (s *Sessions) get(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookie)
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
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	if st := s.Stamp(v.user); st == "" || st != v.stamp {
		s.mu.Lock()
		delete(s.m, key)
		s.mu.Unlock()
		return nil, false
	}
	s.mu.Lock()
	v.seen = now
	s.mu.Unlock()
	return v, true
}

// end logs r's session out and clears its cookie.
func (s *Sessions) end(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		delete(s.m, sha256.Sum256([]byte(c.Value)))
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// renew keeps the session of user that r carries with a new password's
// stamp: the one changing it stays logged in, every other session ends.
func (s *Sessions) renew(r *http.Request, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return
	}
	if v, ok := s.m[sha256.Sum256([]byte(c.Value))]; ok && v.user == user {
		v.stamp = s.Stamp(user)
	}
}

// safeMethod says whether a method only reads: it needs no CSRF token.
func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, "PROPFIND":
		return true
	}
	return false
}

// csrfOK checks a changing request's token, from the X-CSRF-Token header
// (scripts) or the csrf form field (forms), against the session's.
func csrfOK(r *http.Request, sess *session) bool {
	if web.CrossSite(r) {
		return false
	}
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		tok = r.PostFormValue("csrf")
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(sess.csrf)) == 1
}

// SessionUser is web.Browser's: the user of r's session; a changing
// request must carry the CSRF token as well.
func (u *UI) SessionUser(r *http.Request) (string, bool) {
	sess, ok := u.sessions.get(r)
	if !ok {
		return "", false
	}
	if !safeMethod(r.Method) && !csrfOK(r, sess) {
		return "", false
	}
	return sess.user, true
}

// LoginURL is web.Browser's: the login page, coming back to next.
func (u *UI) LoginURL(next string) string {
	return "/login?next=" + url.QueryEscape(next)
}

// localNext keeps a "next" that stays on the box: a path, not a URL or a
// scheme-relative "//host". Browsers drop tabs and newlines from a URL
// and read "\" as "/", so "/\t/evil.example" would be "//evil.example":
// any control character or backslash is refused, and what is kept is
// rebuilt from the parsed path and query alone.
func localNext(next string) string {
	const home = web.FilesPrefix + "/"
	if strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return home
	}
	p, err := url.Parse(next)
	if err != nil || p.Scheme != "" || p.Host != "" || p.User != nil || p.Opaque != "" ||
		!strings.HasPrefix(p.Path, "/") || strings.HasPrefix(p.Path, "//") {
		return home
	}
	kept := url.URL{Path: p.Path, RawPath: p.RawPath, RawQuery: p.RawQuery}
	return kept.String()
}
