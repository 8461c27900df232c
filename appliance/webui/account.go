package webui

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/users"
)

// loginCookie holds the login form's CSRF token, before there is a
// session (a login posted from another site's page has none).
const loginCookie = "__Host-bonesync-login"

type loginData struct {
	Next     string
	Username string
	Token    string
	Code     bool // the second step: the code after the password
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
	if r.TLS == nil {
		http.Error(w, "log in over HTTPS", http.StatusForbidden)
		return
	}
	next := localNext(r.URL.Query().Get("next"))
	if who.User != "" { // logged in already
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	u.loginForm(w, http.StatusOK, next, "", "")
}

// loginForm shows the form with a fresh token in a cookie and a field:
// a login posted from another site's page has neither (login CSRF).
func (u *Login) loginForm(w http.ResponseWriter, code int, next, name, problem string) {
	tok := auth.RandomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	u.render(w, code, "login", page{Title: "Log in", Problem: problem, Data: loginData{Next: next, Username: name, Token: tok, FirstPassword: u.firstPassword()}})
}

func (u *Login) loginPost(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		http.Error(w, "log in over HTTPS", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	next := localNext(r.PostFormValue("next"))
	name := strings.TrimSpace(r.PostFormValue("username"))
	c, err := r.Cookie(loginCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		u.loginForm(w, http.StatusForbidden, next, name, "The form had expired or came from another page: log in again.")
		return
	}
	addr := guard.Host(r.RemoteAddr)
	res := u.Door.Password(addr, auth.Form, name, r.PostFormValue("password"))
	if res != auth.OK {
		if res.Status() == http.StatusTooManyRequests {
			auth.SetRetryAfter(w, u.Door.RetryAfter(addr, name))
		}
		u.loginForm(w, res.Status(), next, name, res.Message())
		return
	}
	if u.Door.TwoFactor(name) {
		u.askCode(w, http.StatusOK, u.codes.add(name, next), next, name, "")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	u.Door.Sessions().Start(w, name)
	u.Log.Info("web: logged in", "user", name, "addr", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (u *Login) logout(w http.ResponseWriter, r *http.Request, _ auth.Caller) {
	u.Door.Sessions().End(w, r)
	http.Redirect(w, r, LoginPage, http.StatusSeeOther)
}

type accountData struct {
	Email     string
	Apps      []users.AppPassword
	New       string // an app password just made, shown this once
	NewName   string
	Server    string // the box's address as the browser reached it, for the client
	TwoFactor twoFactorData
}

func (u *Account) accountPage(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.showAccount(w, sess, http.StatusOK, "", "", accountData{})
}

func (u *Account) showAccount(w http.ResponseWriter, sess auth.Caller, code int, flash, problem string, d accountData) {
	p := u.base(sess, "Account", "account")
	p.Flash, p.Problem = flash, problem
	apps, err := u.Users.AppPasswords(sess.User)
	if err != nil && p.Problem == "" {
		p.Problem = err.Error()
	}
	d.Apps = apps
	d.Email = u.Users.Email(sess.User)
	d.TwoFactor.On, d.TwoFactor.RecoveryLeft = u.Users.TOTP(sess.User)
	p.Data = d
	u.render(w, code, "account", p)
}

func (u *Account) accountPost(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	switch action := r.PostFormValue("action"); action {
	case "totp-new", "totp-enable", "totp-off":
		code, flash, problem, d := u.twoFactorPost(r, sess, action)
		u.showAccount(w, sess, code, flash, problem, d)
	case "email":
		if err := u.Users.SetEmail(sess.User, r.PostFormValue("email")); err != nil {
			u.showAccount(w, sess, http.StatusBadRequest, "", "E-mail address not changed: "+err.Error(), accountData{})
			return
		}
		u.Log.Info("web: e-mail address changed", "user", sess.User)
		u.showAccount(w, sess, http.StatusOK, "E-mail address saved: calendar invitations name it.", "", accountData{})
	case "password":
		cur, pw, again := r.PostFormValue("current"), r.PostFormValue("new"), r.PostFormValue("again")
		if u.Door.Password(guard.Host(r.RemoteAddr), auth.Retyped, sess.User, cur) != auth.OK {
			u.showAccount(w, sess, http.StatusForbidden, "", "The current password is not right.", accountData{})
			return
		}
		if pw != again {
			u.showAccount(w, sess, http.StatusBadRequest, "", "The new password and its repetition differ.", accountData{})
			return
		}
		if err := u.Users.SetPassword(sess.User, pw); err != nil {
			u.showAccount(w, sess, http.StatusBadRequest, "", "Password not changed: "+err.Error(), accountData{})
			return
		}
		u.Door.Sessions().Renew(r, sess.User)
		u.Log.Info("web: password changed", "user", sess.User)
		u.showAccount(w, sess, http.StatusOK, "Password changed. Your other browsers are logged out; app passwords keep working.", "", accountData{})
	case "app-new":
		label := r.PostFormValue("label")
		pw, ap, err := u.Users.NewAppPassword(sess.User, label)
		if err != nil {
			u.showAccount(w, sess, http.StatusBadRequest, "", err.Error(), accountData{})
			return
		}
		u.showAccount(w, sess, http.StatusOK, "", "", accountData{New: pw, NewName: ap.Label, Server: "https://" + front.HTTPSHost(r)})
	case "app-revoke":
		err := u.Users.RevokeAppPassword(sess.User, r.PostFormValue("id"))
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, users.ErrNoAppPassword) {
				code = http.StatusNotFound
			}
			u.showAccount(w, sess, code, "", err.Error(), accountData{})
			return
		}
		u.showAccount(w, sess, http.StatusOK, "App password revoked: it opens nothing any more.", "", accountData{})
	default:
		http.Error(w, "unknown action", http.StatusBadRequest)
	}
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
