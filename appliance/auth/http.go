package auth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
)

// Authenticate checks an HTTP request's credentials and returns its user;
// when they fail it answers the request itself and returns false:
//
//   - over plain HTTP, 401 without a challenge: a password is never taken
//     in clear, nor invited;
//   - from a banned address, 429 with Retry-After;
//   - Basic credentials (a password or an app password), checked under
//     the bans and the account's delay: 401 with a challenge when wrong,
//     429 with Retry-After while the account waits, 503 when the box
//     cannot check;
//   - without them, the web pages' session cookie, which must also carry
//     its CSRF token on a request that may change something (any method
//     but GET, HEAD, OPTIONS and PROPFIND);
//   - a browser asking for a page with neither is sent to LoginPage (a
//     Basic dialog could never be logged out of); any other client gets a
//     Basic challenge.
func (d *Door) Authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	user, _, ok := d.authenticate(w, r, d.Password)
	return user, ok
}

// AuthenticateAccount is Authenticate for what only the account itself
// may do (the box's administration, /admin/*): Basic credentials must be
// the account's password, never an app password, as the web form asks.
// An app password handed to a phone or a sync client, if it leaks, then
// reaches the files, not the box's firmware.
func (d *Door) AuthenticateAccount(w http.ResponseWriter, r *http.Request) (string, bool) {
	user, _, ok := d.authenticate(w, r, d.AccountPassword)
	return user, ok
}

// AuthenticateConfirmed is AuthenticateAccount for what changes the box's
// firmware (/admin/update): a web session's password must also have been
// typed within ConfirmFor (Confirm), so that a browser left logged in is
// not enough. Without that it answers 403 with the header
// X-Bonesync-Confirm: password.
func (d *Door) AuthenticateConfirmed(w http.ResponseWriter, r *http.Request) (string, bool) {
	// An account with two-factor login is refused over Basic before its
	// password is checked: a right one would count as a login.
	if name, _, basic := r.BasicAuth(); basic && d.TwoFactor(name) {
		http.Error(w, "this account logs in with a code as well: apply the update from the admin page, or at the console", http.StatusForbidden)
		return "", false
	}
	user, sess, ok := d.authenticate(w, r, d.AccountPassword)
	if !ok || sess == nil || d.sessions.Confirmed(sess) {
		return user, ok
	}
	w.Header().Set("X-Bonesync-Confirm", "password")
	http.Error(w, "type your password again: it is asked for again when the last time was more than 5 minutes ago", http.StatusForbidden)
	return "", false
}

// Confirm is POST /admin/confirm: a logged-in page sends its user's
// password again (the form field password), checked under the bans as
// any login; 204 when right (the session counts as confirmed for
// ConfirmFor), 403 when wrong.
func (d *Door) Confirm(w http.ResponseWriter, r *http.Request) {
	sess, ok := d.sessions.Get(r)
	if r.TLS == nil || !ok || !sess.Allows(r) {
		http.Error(w, "log in first", http.StatusForbidden)
		return
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := d.AccountPassword(addr, "https", sess.User, r.PostFormValue("password")); res {
	case OK:
		d.sessions.Confirm(sess)
		w.WriteHeader(http.StatusNoContent)
	case Wrong:
		http.Error(w, "that is not your password", http.StatusForbidden)
	default:
		Answer(w, res, d.RetryAfter(addr, sess.User))
	}
}

func (d *Door) authenticate(w http.ResponseWriter, r *http.Request, check func(addr, proto, user, pw string) Result) (string, *Session, bool) {
	if r.TLS == nil {
		http.Error(w, "WebDAV is served over HTTPS only", http.StatusUnauthorized)
		return "", nil, false
	}
	addr := guard.Host(r.RemoteAddr)
	if banned, left := d.bans.Banned(addr); banned {
		Answer(w, Banned, left)
		return "", nil, false
	}
	user, pw, ok := r.BasicAuth()
	if !ok {
		if sess, ok := d.sessions.Get(r); ok && (SafeMethod(r.Method) || sess.Allows(r)) {
			return sess.User, sess, true
		}
		if d.LoginPage != "" && wantsPage(r) {
			http.Redirect(w, r, d.LoginPage+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return "", nil, false
		}
		challenge(w)
		return "", nil, false
	}
	res := check(addr, "https", user, pw)
	if res == OK {
		return user, nil, true
	}
	Answer(w, res, d.RetryAfter(addr, user))
	return "", nil, false
}

// Answer tells an HTTP client that its login failed, and why; wait is
// how long a refused one (Banned, Delayed) should wait (RetryAfter).
func Answer(w http.ResponseWriter, res Result, wait time.Duration) {
	switch res {
	case Wrong:
		challenge(w)
	case Banned:
		SetRetryAfter(w, wait)
		http.Error(w, "too many failed logins from your address; try again later", res.Status())
	case Delayed:
		SetRetryAfter(w, wait)
		http.Error(w, "too many wrong guesses at this account lately; try again later", res.Status())
	case Fault:
		http.Error(w, "the server cannot check passwords now; its log says why", res.Status())
	}
}

// SetRetryAfter sets the Retry-After header of a refused login to wait,
// in whole seconds rounded up, at least 1.
func SetRetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", fmt.Sprint(max(int64((wait+time.Second-1)/time.Second), 1)))
}

func challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="bonesync", charset="UTF-8"`)
	http.Error(w, "log in with your bonesync user name and password", http.StatusUnauthorized)
}

// wantsPage says whether r is a browser navigating (rather than a WebDAV
// or sync client): a GET or HEAD that accepts HTML.
func wantsPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.Contains(r.Header.Get("Accept"), "text/html")
}
