package webui

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/guard"
)

// Two-factor login on the web pages (users/totp.go keeps the secret): the
// login form takes the password, then asks for the code on a second step;
// the account page enrols a phone with a QR code and shows the recovery
// codes once.

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
		svg, err := qrSVG(key.URL(), "QR code for your authenticator app")
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
			if svg, e := qrSVG(totpURL(user, secret), "QR code for your authenticator app"); e == nil {
				d.TwoFactor = twoFactorData{Secret: secret, QR: svg}
			}
			return code, "", problem, d
		}
		// A session left open is not enough to tie the account to a phone.
		if u.WaysIn.Password(guard.Host(r.RemoteAddr), auth.Retyped, user, r.PostFormValue("current")) != auth.OK {
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
		if u.WaysIn.Password(addr, auth.Retyped, user, r.PostFormValue("current")) != auth.OK || u.WaysIn.Code(addr, user, r.PostFormValue("code")) != auth.OK {
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
