package webui

import (
	"crypto/subtle"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/boombuler/barcode/qr"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/guard"
)

// Two-factor login on the web pages (users/totp.go keeps the secret): the
// login form takes the password, then asks for the code on a second step;
// the account page enrols a phone with a QR code and shows the recovery
// codes once.

// codeCookie names the login whose password was right, while its code is
// asked (the form carries the same value: a post from another site's page
// has neither).
const codeCookie = "__Host-bonesync-code"

// A login waits for its code at most codeFor, and takes at most codeTries
// wrong codes (the bans count them too).
const (
	codeFor      = 5 * time.Minute
	codeTries    = 5
	maxPendings  = 256
	codesPerUser = 4 // a user's logins waiting at once
	enrolFor     = 10 * time.Minute
)

// enrolments are the secrets being enrolled, by user and session (its
// CSRF token; "" over Basic), kept here rather than sent back by the
// page: a page cannot choose its own.
type enrolments struct {
	mu sync.Mutex
	m  map[string]enrolment
}

type enrolment struct {
	user, secret string
	until        time.Time
}

func enrolKey(c auth.Caller) string { return c.User + "\x00" + c.CSRF() }

func (e *enrolments) put(sess auth.Caller, secret string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil || len(e.m) > 1000 {
		e.m = map[string]enrolment{}
	}
	e.m[enrolKey(sess)] = enrolment{sess.User, secret, time.Now().Add(enrolFor)}
}

func (e *enrolments) get(sess auth.Caller) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.m[enrolKey(sess)]
	if !ok || v.user != sess.User || time.Now().After(v.until) {
		return "", false
	}
	return v.secret, true
}

func (e *enrolments) drop(sess auth.Caller) {
	e.mu.Lock()
	delete(e.m, enrolKey(sess))
	e.mu.Unlock()
}

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
func (p *pendings) get(tok string) (pendingLogin, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[tok]
	if !ok || time.Now().After(v.until) || v.tries >= codeTries {
		delete(p.m, tok)
		return pendingLogin{}, false
	}
	v.tries++
	return *v, true
}

func (p *pendings) done(tok string) {
	p.mu.Lock()
	delete(p.m, tok)
	p.mu.Unlock()
}

// askCode shows the login form's second step.
func (u *Login) askCode(w http.ResponseWriter, code int, tok, next, user, problem string) {
	http.SetCookie(w, &http.Cookie{Name: codeCookie, Value: tok, Path: "/", MaxAge: int(codeFor.Seconds()), Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	u.render(w, code, "login", page{Title: "Log in", Problem: problem, Data: loginData{Next: next, Username: user, Token: tok, Code: true}})
}

// codePost is the second step's form: the code, or a recovery code.
func (u *Login) codePost(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		http.Error(w, "log in over HTTPS", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	c, err := r.Cookie(codeCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		u.loginForm(w, http.StatusForbidden, localNext(r.PostFormValue("next")), "", "The form had expired or came from another page: log in again.")
		return
	}
	p, ok := u.codes.get(c.Value)
	if !ok {
		u.loginForm(w, http.StatusForbidden, localNext(r.PostFormValue("next")), "", "The login took too long or had too many wrong codes: log in again.")
		return
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := u.Door.Code(addr, p.user, r.PostFormValue("code")); res {
	case auth.OK:
	case auth.Wrong:
		u.askCode(w, http.StatusUnauthorized, c.Value, p.next, p.user, "That code is not right: type the newest one the app shows, or a recovery code.")
		return
	default:
		u.codes.done(c.Value)
		if res.Status() == http.StatusTooManyRequests {
			auth.SetRetryAfter(w, u.Door.RetryAfter(addr, p.user))
		}
		u.loginForm(w, res.Status(), p.next, p.user, res.Message())
		return
	}
	u.codes.done(c.Value)
	for _, name := range []string{codeCookie, loginCookie} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	u.Door.Sessions().Start(w, p.user)
	u.Log.Info("web: logged in with a code", "user", p.user, "addr", r.RemoteAddr)
	http.Redirect(w, r, p.next, http.StatusSeeOther)
}

// twoFactorData is the account page's two-factor section.
type twoFactorData struct {
	On           bool
	RecoveryLeft int
	// Enrolling: a new secret, its QR code and its text, until a code
	// from the phone turns it on.
	Secret string
	QR     template.HTML
	// Recovery are the codes just made, shown this once.
	Recovery []string
}

// twoFactorPost handles the account page's two-factor actions.
func (u *Account) twoFactorPost(r *http.Request, sess auth.Caller, action string) (int, string, string, accountData) {
	user := sess.User
	switch action {
	case "totp-new":
		key, err := u.Users.NewTOTP(user)
		if err != nil {
			return http.StatusInternalServerError, "", err.Error(), accountData{}
		}
		svg, err := qrSVG(key.URL())
		if err != nil {
			return http.StatusInternalServerError, "", err.Error(), accountData{}
		}
		u.enrolling.put(sess, key.Secret())
		return http.StatusOK, "", "", accountData{TwoFactor: twoFactorData{Secret: key.Secret(), QR: svg}}
	case "totp-enable":
		secret, ok := u.enrolling.get(sess)
		if !ok {
			return http.StatusBadRequest, "", "The set-up had expired: start again.", accountData{}
		}
		again := func(code int, problem string) (int, string, string, accountData) {
			d := accountData{}
			if svg, e := qrSVG(totpURL(user, secret)); e == nil {
				d.TwoFactor = twoFactorData{Secret: secret, QR: svg}
			}
			return code, "", problem, d
		}
		// A session left open is not enough to tie the account to a phone.
		if u.Door.Password(guard.Host(r.RemoteAddr), auth.Retyped, user, r.PostFormValue("current")) != auth.OK {
			return again(http.StatusForbidden, "Two-factor login not turned on: the password is not right.")
		}
		codes, err := u.Users.EnableTOTP(user, secret, r.PostFormValue("code"))
		if err != nil {
			return again(http.StatusBadRequest, "Two-factor login not turned on: "+err.Error())
		}
		u.enrolling.drop(sess)
		u.Log.Info("web: two-factor login turned on", "user", user)
		u.audited(r, user, "turned two-factor login on")
		return http.StatusOK, "Two-factor login is on: the login form asks for a code after the password. Clients keep their app passwords.", "",
			accountData{TwoFactor: twoFactorData{Recovery: codes}}
	case "totp-off":
		addr := guard.Host(r.RemoteAddr)
		if u.Door.Password(addr, auth.Retyped, user, r.PostFormValue("current")) != auth.OK || u.Door.Code(addr, user, r.PostFormValue("code")) != auth.OK {
			return http.StatusForbidden, "", "Two-factor login is still on: the password or the code was not right.", accountData{}
		}
		if err := u.Users.DisableTOTP(user); err != nil {
			return http.StatusInternalServerError, "", err.Error(), accountData{}
		}
		u.Log.Info("web: two-factor login turned off", "user", user)
		u.audited(r, user, "turned two-factor login off")
		return http.StatusOK, "Two-factor login is off.", "", accountData{}
	}
	return http.StatusBadRequest, "", "unknown action", accountData{}
}

// totpURL is the otpauth:// address of secret, as users.NewTOTP makes it.
func totpURL(user, secret string) string {
	return fmt.Sprintf("otpauth://totp/bonesync:%s?algorithm=SHA1&digits=6&issuer=bonesync&period=30&secret=%s", url.PathEscape(user), url.QueryEscape(secret))
}

// qrSVG is text as a QR code, an SVG drawn in the page (the pages' content
// policy takes no image from elsewhere, and this needs none).
func qrSVG(text string) (template.HTML, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", err
	}
	b := code.Bounds()
	const quiet = 4
	var path strings.Builder
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, _, _, _ := code.At(x, y).RGBA(); r < 0x8000 {
				fmt.Fprintf(&path, "M%d %dh1v1h-1z", x+quiet, y+quiet)
			}
		}
	}
	n := b.Dx() + 2*quiet
	return template.HTML(fmt.Sprintf(`<svg class="qr" role="img" aria-label="QR code for your authenticator app" viewBox="0 0 %d %d" width="%d" height="%d"><rect width="100%%" height="100%%" fill="#fff"/><path d="%s" fill="#000"/></svg>`,
		n, n, n*5, n*5, path.String())), nil
}
