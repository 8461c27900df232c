package auth

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/users"
)

// Access is what a route asks of a request before its handler runs. A
// route declares it where it is registered (package front), and the
// front runs Door.Check for it: no handler is reached without its check,
// and none asks the door itself.
type Access int

const (
	// Public: anyone (the CA, the login form, status.php...).
	Public Access = iota
	// Optional: anyone; but Basic credentials, when a request has them,
	// must be right, and the handler gets their user (the full report),
	// as it gets a live session's (the login form sends it on).
	Optional
	// Link: anyone with a public link's token. The handler finds the
	// link; its password is a way in of its own (Door.LinkPassword).
	Link
	// User: a password or an app password over Basic, or a web session
	// (which must carry its CSRF token on a request that may change
	// something). Without either, 401 with a Basic challenge, whatever the
	// request accepts: these are the WebDAV, CalDAV and API routes, whose
	// clients (KDE's KIO among them) may well accept HTML and still want
	// the challenge; the web pages, which send a browser to the login
	// form, are Page routes.
	User
	// Page: a web session only (the web pages). Without one, a GET is
	// sent to the login form and any other request gets 401.
	Page
	// Account: what changes the account itself (its password, app
	// passwords, two-factor login, the apps it lets in): a web session,
	// or the account's own password over Basic, never an app password,
	// never a two-factor account's password alone.
	Account
	// Admin: Account, and only the admin.
	Admin
	// Confirmed: Admin, and a web session's password typed within
	// ConfirmFor (what changes the box's firmware).
	Confirmed
)

// access is the rule of each Access: what the door takes and asks.
var access = [...]struct {
	name string
	// check: the door looks at the request at all.
	check bool
	// optional: a request with no Basic credentials is anyone's.
	optional bool
	// basic is how Basic credentials are checked; 0: not taken.
	basic Way
	// session: a web session is taken.
	session bool
	// pages: without credentials, a GET or HEAD is sent to the login
	// form and anything else gets 401 (the pages' way); otherwise a
	// Basic challenge, whatever the request accepts.
	pages bool
	// admin: only the admin.
	admin bool
	// fresh: a session's password typed within ConfirmFor.
	fresh bool
}{
	Public:    {name: "public"},
	Optional:  {name: "optional", check: true, optional: true, basic: basicPassword},
	Link:      {name: "link"},
	User:      {name: "user", check: true, basic: basicPassword, session: true},
	Page:      {name: "page", check: true, session: true, pages: true},
	Account:   {name: "account", check: true, basic: basicOwn, session: true, pages: true},
	Admin:     {name: "admin", check: true, basic: basicOwn, session: true, pages: true, admin: true},
	Confirmed: {name: "confirmed", check: true, basic: basicOwn, session: true, admin: true, fresh: true},
}

// String is the access's name, as a route table writes it.
func (a Access) String() string { return access[a].name }

// Caller is who a request comes from, as the door's check found it: the
// zero Caller on a public route (and an Optional one without
// credentials).
type Caller struct {
	User string
	// Session is the web session the request came with; nil over Basic.
	Session *Session
}

// CSRF is the token the caller's pages put in their forms ("" over
// basic, which needs none).
func (c Caller) CSRF() string {
	if c.Session == nil {
		return ""
	}
	return c.Session.CSRF
}

// Refusal is the door's answer to a caller it found whom the route is
// not for: another user on the admin's routes (Admin, Confirmed), or the
// admin whose password was typed too long ago (Confirmed). The front
// writes it (package front): 403 with Reason, as a page for a browser on
// the pages' routes (Page), in plain text for any other client.
type Refusal struct {
	Reason string
	// Page: the route is one of the web pages' (Access Page, Account,
	// Admin).
	Page bool
	// Confirm: the password is to be typed again; the answer carries the
	// header X-Bonesync-Confirm: password.
	Confirm bool
	// Back is where a page's refusal links back to (Door.HomePage).
	Back string
}

func (no *Refusal) Error() string { return no.Reason }

// ErrAnswered is Check's error when the door answered the request itself.
var ErrAnswered = errors.New("auth: the door answered the request")

// Check checks r as a route declared a does, and returns its caller, or
// an error: a *Refusal for the front to write, or ErrAnswered when the door
// answered the request itself:
//
//   - over plain HTTP, 401 without a challenge: a password is never taken
//     in clear, nor invited;
//   - from a banned address, 429 with Retry-After;
//   - Basic credentials, checked as the access's way says (ways), under
//     the bans and the account's delay: 401 with a challenge when wrong,
//     429 with Retry-After while the account waits, 503 when the box
//     cannot check; a two-factor account's own password is answered as a
//     wrong one (ways: it logs in on the web form alone, with its code),
//     after the same hash and under the same delay, so that no answer
//     tells which accounts have two-factor login;
//   - without them, the web session, which must also carry its CSRF
//     token on a request that may change something (any method but GET,
//     HEAD, OPTIONS and PROPFIND);
//   - with neither, the login form or a challenge, as the route's Access
//     says (never as the request's Accept header does);
//   - a Refusal for a user the route is not for (Admin), or for a session
//     whose password was typed too long ago (Confirmed).
func (d *Door) Check(a Access, w http.ResponseWriter, r *http.Request) (Caller, error) {
	rule := access[a]
	if !rule.check {
		return Caller{}, nil
	}
	_, _, basic := r.BasicAuth()
	if rule.optional && !basic {
		if sess, ok := d.sessions.get(r); ok && r.TLS != nil {
			return Caller{User: sess.User, Session: sess}, nil
		}
		return Caller{}, nil
	}
	if r.TLS == nil {
		http.Error(w, "this is served over HTTPS only", http.StatusUnauthorized)
		return Caller{}, ErrAnswered
	}
	c, ok := d.caller(a, w, r)
	if !ok {
		return Caller{}, ErrAnswered
	}
	if rule.admin && c.User != users.Admin {
		return Caller{}, &Refusal{Reason: "Only the admin may do this.", Page: rule.pages, Back: d.HomePage}
	}
	if rule.fresh && c.Session != nil && !d.sessions.isConfirmed(c.Session) {
		return Caller{}, &Refusal{Reason: "Type your password again: it is asked for again when the last time was more than 5 minutes ago.", Page: rule.pages, Confirm: true, Back: d.HomePage}
	}
	return c, nil
}

// caller finds r's caller by Basic credentials or the session, as a
// says, or answers the request.
func (d *Door) caller(a Access, w http.ResponseWriter, r *http.Request) (Caller, bool) {
	rule := access[a]
	addr := guard.Host(r.RemoteAddr)
	if banned, left := d.bans.Banned(addr); banned {
		answer(w, Banned, left)
		return Caller{}, false
	}
	if rule.pages && !safeMethod(r.Method) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10) // a page's form is small
	}
	user, pw, basic := r.BasicAuth()
	switch {
	case basic && rule.basic != 0:
		res := d.Password(addr, rule.basic, user, pw)
		if res != OK {
			answer(w, res, d.RetryAfter(addr, user))
			return Caller{}, false
		}
		return Caller{User: user}, true
	case !basic && rule.session:
		if sess, ok := d.sessions.get(r); ok {
			if safeMethod(r.Method) || sess.allows(r) {
				return Caller{User: sess.User, Session: sess}, true
			}
			if rule.pages {
				http.Error(w, "refused: the request did not come from this box's page (no valid CSRF token)", http.StatusForbidden)
				return Caller{}, false
			}
		}
	}
	switch {
	case rule.pages && d.LoginPage != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		toLogin(w, r, d.LoginPage)
	case rule.pages:
		http.Error(w, "log in first", http.StatusUnauthorized)
	default:
		challenge(w)
	}
	return Caller{}, false
}

func toLogin(w http.ResponseWriter, r *http.Request, page string) {
	http.Redirect(w, r, page+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}
