package webui

import (
	"errors"
	"net/http"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/users"
)

type accountData struct {
	Email     string
	Apps      []users.AppPassword
	New       string // an app password just made, shown this once
	NewName   string
	Server    string // the box's address as the browser reached it, for the client
	TwoFactor twoFactorData
	Passkeys  passkeysData
}

func (u *Account) accountPage(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.showAccount(w, r, sess, http.StatusOK, "", "", accountData{})
}

func (u *Account) showAccount(w http.ResponseWriter, r *http.Request, sess auth.Caller, code int, flash, problem string, d accountData) {
	p := u.base(sess, "Account", "account")
	p.Flash, p.Problem = flash, problem
	apps, err := u.Users.AppPasswords(sess.User)
	if err != nil && p.Problem == "" {
		p.Problem = err.Error()
	}
	d.Apps = apps
	d.Email = u.Users.Email(sess.User)
	d.TwoFactor.On, d.TwoFactor.RecoveryLeft = u.Users.TOTP(sess.User)
	if d.Passkeys, err = u.passkeysOf(r.Host, sess.User); err != nil && p.Problem == "" {
		p.Problem = err.Error()
	}
	p.Data = d
	u.render(w, code, "account", p)
}

func (u *Account) accountPost(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	switch action := r.PostFormValue("action"); action {
	case "totp-new", "totp-enable", "totp-off":
		code, flash, problem, d := u.twoFactorPost(r, sess, action)
		u.showAccount(w, r, sess, code, flash, problem, d)
	case "passkey-remove":
		u.passkeyRemove(w, r, sess)
	case "email":
		if err := u.Users.SetEmail(sess.User, r.PostFormValue("email")); err != nil {
			u.showAccount(w, r, sess, http.StatusBadRequest, "", "E-mail address not changed: "+err.Error(), accountData{})
			return
		}
		u.Log.Info("web: e-mail address changed", "user", sess.User)
		u.showAccount(w, r, sess, http.StatusOK, "E-mail address saved: calendar invitations name it.", "", accountData{})
	case "password":
		cur, pw, again := r.PostFormValue("current"), r.PostFormValue("new"), r.PostFormValue("again")
		if u.WaysIn.Password(guard.Host(r.RemoteAddr), auth.Retyped, sess.User, cur) != auth.OK {
			u.showAccount(w, r, sess, http.StatusForbidden, "", "The current password is not right.", accountData{})
			return
		}
		if pw != again {
			u.showAccount(w, r, sess, http.StatusBadRequest, "", "The new password and its repetition differ.", accountData{})
			return
		}
		if err := u.Users.SetPassword(sess.User, pw); err != nil {
			u.showAccount(w, r, sess, http.StatusBadRequest, "", "Password not changed: "+err.Error(), accountData{})
			return
		}
		u.WaysIn.Sessions().Renew(r, sess.User)
		u.Log.Info("web: password changed", "user", sess.User)
		u.showAccount(w, r, sess, http.StatusOK, "Password changed. Your other browsers are logged out; app passwords keep working.", "", accountData{})
	case "app-new":
		label := r.PostFormValue("label")
		pw, ap, err := u.Users.NewAppPassword(sess.User, label)
		if err != nil {
			u.showAccount(w, r, sess, http.StatusBadRequest, "", err.Error(), accountData{})
			return
		}
		u.showAccount(w, r, sess, http.StatusOK, "", "", accountData{New: pw, NewName: ap.Label, Server: "https://" + front.HTTPSHost(r)})
	case "app-revoke":
		err := u.Users.RevokeAppPassword(sess.User, r.PostFormValue("id"))
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, users.ErrNoAppPassword) {
				code = http.StatusNotFound
			}
			u.showAccount(w, r, sess, code, "", err.Error(), accountData{})
			return
		}
		u.showAccount(w, r, sess, http.StatusOK, "App password revoked: it opens nothing any more.", "", accountData{})
	default:
		http.Error(w, "unknown action", http.StatusBadRequest)
	}
}
