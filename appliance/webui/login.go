package webui

// The login room's pages (Login): the login form, the code a two-factor
// account is asked for after its password, and the logout. The login
// flows that connect an app are in flow.go.

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/passkeys"
)

// loginCookie holds the login form's CSRF token, before there is a
// session (a login posted from another site's page has none).
const loginCookie = "__Host-bonesync-login"

type loginData struct {
	Next     string
	Username string
	Token    string
	Code     bool // the second step: the code after the password
	// Passkey: the sign-in offers a passkey (passkey.go); PasskeyHint
	// says why it cannot (the box reached by an IP address).
	Passkey     bool
	PasskeyHint string
	// Where the first password is, worded for where the box runs.
	FirstPassword string
}

// firstPassword says where admin's first password is: on the board, its
// console and the card; elsewhere, where the server was started.
func (u *Login) firstPassword() string {
	if u.OnBoard {
		return "The first password is on the serial console and in FIRST-LOGIN.txt on the card's boot partition."
	}
	return "The first password was printed where the server was started: its terminal (make run), or the journal (journalctl -u bonesync) for the service."
}

func (u *Login) loginPage(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	next := localNext(r.URL.Query().Get("next"))
	if who.User != "" { // logged in already
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	u.loginForm(w, r, http.StatusOK, next, "", "")
}

// loginForm shows the form with a fresh token in a cookie and a field:
// a login posted from another site's page has neither (login CSRF).
func (u *Login) loginForm(w http.ResponseWriter, r *http.Request, code int, next, name, problem string) {
	tok := auth.RandomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	d := loginData{Next: next, Username: name, Token: tok, FirstPassword: u.firstPassword(), Passkey: true}
	if _, err := passkeys.Host(r.Host); err != nil {
		d.Passkey, d.PasskeyHint = false, err.Error()
	}
	u.render(w, code, "login", page{Title: "Log in", Problem: problem, Data: d})
}

func (u *Login) loginPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	next := localNext(r.PostFormValue("next"))
	name := strings.TrimSpace(r.PostFormValue("username"))
	c, err := r.Cookie(loginCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		u.loginForm(w, r, http.StatusForbidden, next, name, "The form had expired or came from another page: log in again.")
		return
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := u.WaysIn.Password(addr, auth.Form, name, r.PostFormValue("password")); res {
	case auth.OK:
	case auth.NeedsCode:
		u.askCode(w, r, http.StatusOK, u.codes.add(name, next), next, name, "")
		return
	default:
		if res.Status() == http.StatusTooManyRequests {
			auth.SetRetryAfter(w, u.WaysIn.RetryAfter(addr, name))
		}
		u.loginForm(w, r, res.Status(), next, name, res.Message())
		return
	}
	u.loggedIn(w, r, name, next, "password")
}

// loggedIn starts user's session, clears the login's cookies and goes
// on to next.
func (u *Login) loggedIn(w http.ResponseWriter, r *http.Request, user, next, with string) {
	for _, name := range []string{codeCookie, loginCookie} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	u.WaysIn.Sessions().Start(w, user)
	u.Log.Info("web: logged in", "user", user, "with", with, "addr", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (u *Login) logout(w http.ResponseWriter, r *http.Request, _ auth.Caller) {
	u.WaysIn.Sessions().End(w, r)
	http.Redirect(w, r, LoginPage, http.StatusSeeOther)
}

// localNext keeps a "next" that stays on the box: a path, not a URL or a
// scheme-relative "//host". Browsers drop tabs and newlines from a URL
// and read "\" as "/", so "/\t/evil.example" would be "//evil.example":
// any control character or backslash is refused, and what is kept is
// rebuilt from the parsed path and query alone.
func localNext(next string) string {
	const home = FilesPrefix + "/"
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

// codeCookie names the login whose password was right, while its code is
// asked (the form carries the same value: a post from another site's page
// has neither).
const codeCookie = "__Host-bonesync-code"

// pendings are the logins waiting for their code.
type pendings struct {
	mu sync.Mutex
	m  map[string]*pendingLogin
}

type pendingLogin struct {
	user, next string
	until      time.Time
	tries      int
}

func (p *pendings) add(user, next string) string {
	tok := auth.RandomToken()
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*pendingLogin{}
	}
	// The expired go; then the user's own oldest beyond codesPerUser; and
	// a table still full (64 users with two-factor login at once, each
	// with a right password) drops its oldest: it refuses nobody.
	var mine []string
	oldest := ""
	for k, v := range p.m {
		switch {
		case now.After(v.until):
			delete(p.m, k)
		case v.user == user:
			mine = append(mine, k)
		}
	}
	slices.SortFunc(mine, func(a, b string) int { return p.m[a].until.Compare(p.m[b].until) })
	for len(mine) >= codesPerUser {
		delete(p.m, mine[0])
		mine = mine[1:]
	}
	if len(p.m) >= maxPendings {
		for k, v := range p.m {
			if oldest == "" || v.until.Before(p.m[oldest].until) {
				oldest = k
			}
		}
		delete(p.m, oldest)
	}
	p.m[tok] = &pendingLogin{user: user, next: next, until: now.Add(codeFor)}
	return tok
}

// get is the login waiting under tok, counting a try.
func (p *pendings) get(tok string) (pendingLogin, bool) { return p.look(tok, true) }

// peek is the login waiting under tok, counting no try (a passkey's
// begin: its answer's post is the try).
func (p *pendings) peek(tok string) (pendingLogin, bool) { return p.look(tok, false) }

func (p *pendings) look(tok string, try bool) (pendingLogin, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[tok]
	if !ok || time.Now().After(v.until) || v.tries >= codeTries {
		delete(p.m, tok)
		return pendingLogin{}, false
	}
	if try {
		v.tries++
	}
	return *v, true
}

func (p *pendings) done(tok string) {
	p.mu.Lock()
	delete(p.m, tok)
	p.mu.Unlock()
}

// askCode shows the login form's second step.
func (u *Login) askCode(w http.ResponseWriter, r *http.Request, code int, tok, next, user, problem string) {
	http.SetCookie(w, &http.Cookie{Name: codeCookie, Value: tok, Path: "/", MaxAge: int(codeFor.Seconds()), Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	d := loginData{Next: next, Username: user, Token: tok, Code: true, Passkey: u.Passkeys.Has(r.Host, user)}
	u.render(w, code, "login", page{Title: "Log in", Problem: problem, Data: d})
}

// codePost is the second step's form: the code, or a recovery code.
func (u *Login) codePost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	c, err := r.Cookie(codeCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		u.loginForm(w, r, http.StatusForbidden, localNext(r.PostFormValue("next")), "", "The form had expired or came from another page: log in again.")
		return
	}
	p, ok := u.codes.get(c.Value)
	if !ok {
		u.loginForm(w, r, http.StatusForbidden, localNext(r.PostFormValue("next")), "", "The login took too long or had too many wrong codes: log in again.")
		return
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := u.WaysIn.Code(addr, p.user, r.PostFormValue("code")); res {
	case auth.OK:
	case auth.Wrong:
		u.askCode(w, r, http.StatusUnauthorized, c.Value, p.next, p.user, "That code is not right: type the newest one the app shows, or a recovery code.")
		return
	default:
		u.codes.done(c.Value)
		if res.Status() == http.StatusTooManyRequests {
			auth.SetRetryAfter(w, u.WaysIn.RetryAfter(addr, p.user))
		}
		u.loginForm(w, r, res.Status(), p.next, p.user, res.Message())
		return
	}
	u.codes.done(c.Value)
	u.loggedIn(w, r, p.user, p.next, "password and code")
}
