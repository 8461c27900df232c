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

func challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="bonesync", charset="UTF-8"`)
	http.Error(w, "log in with your bonesync user name and password", http.StatusUnauthorized)
}
