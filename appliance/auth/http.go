package auth

import (
	"fmt"
	"net/http"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
)

// Confirm is POST /admin/confirm, a route of the pages: a logged-in
// page sends its user's password again (the form field password), checked
// under the bans as any login; 204 when right (the session counts as
// confirmed for ConfirmFor), 403 when wrong.
func (d *Door) Confirm(w http.ResponseWriter, r *http.Request, c Caller) {
	if c.Session == nil {
		http.Error(w, "log in first", http.StatusForbidden)
		return
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := d.Password(addr, Retyped, c.User, r.PostFormValue("password")); res {
	case OK:
		d.sessions.confirm(c.Session)
		w.WriteHeader(http.StatusNoContent)
	case Wrong:
		http.Error(w, "that is not your password", http.StatusForbidden)
	default:
		answer(w, res, d.RetryAfter(addr, c.User))
	}
}

// answer tells an HTTP client that its login failed, and why; wait is
// how long a refused one (Banned, Delayed) should wait (RetryAfter).
func answer(w http.ResponseWriter, res Result, wait time.Duration) {
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

// LinkBasic checks the password r's Basic credentials give (under any
// user name) for the live public link token, whose password's hash is
// hash, as LinkPassword does: under the bans every login has and the
// link's own delay. A link without a password (hash "") takes any
// credentials, or none. It answers a refused request as Check answers a
// login: 401 with a challenge (no password, or a wrong one; or token ""
// for a request that names no live link, whose user name may be meant
// as a token), 429 with Retry-After (the address banned, the link's
// delay), 503 when the box cannot check.
func (d *Door) LinkBasic(w http.ResponseWriter, r *http.Request, token, hash string) bool {
	if token != "" && hash == "" {
		return true
	}
	_, pw, ok := r.BasicAuth()
	if !ok || token == "" {
		linkChallenge(w)
		return false
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := d.LinkPassword(addr, token, hash, pw); res {
	case OK:
		return true
	case Wrong:
		linkChallenge(w)
	default:
		answer(w, res, d.LinkRetryAfter(addr, token))
	}
	return false
}

// linkChallenge asks a client of a public link's WebDAV for the link's
// token and password: 401 with a Basic challenge.
func linkChallenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", basicRealm)
	http.Error(w, "give the link's token as the user name and its password (empty if it has none)", http.StatusUnauthorized)
}

// basicRealm is the Basic challenge of every password the box asks over
// HTTP.
const basicRealm = `Basic realm="bonesync", charset="UTF-8"`

func challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", basicRealm)
	http.Error(w, "log in with your bonesync user name and password", http.StatusUnauthorized)
}
