package webui

// Passkeys on the pages (the ceremonies are package passkeys', a
// sign-in's answer the login door's, auth.Door.Passkey): the login form's "Sign in with a passkey",
// a passkey in place of the code after a two-factor account's password,
// and the account page's passkeys. assets/passkey.js talks to the
// browser's WebAuthn API: it asks a ceremony's options here (begin), has
// the browser sign them, and posts the answer as a form, which the pages
// answer as any login or account form.

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/passkeys"
	"github.com/bonesync/bonesync/appliance/users"
)

// ceremonyJSON answers a begin: the token to post back, and the options
// for the browser.
func ceremonyJSON(w http.ResponseWriter, options []byte, token string, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, err := json.Marshal(struct {
		Token   string          `json:"token"`
		Options json.RawMessage `json:"options"`
	}{token, options})
	if err != nil {
		http.Error(w, "the passkey's options could not be made", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}

// passkeyStep says which sign-in a passkey's request belongs to, by the
// form's token: the login form's (its cookie, loginCookie), a sign-in
// with a passkey alone, user ""; or the code step's (codeCookie), the
// second factor of the account whose password was right, pending its
// token. ok is false for neither: the form expired or came from another
// site's page.
func (u *Login) passkeyStep(r *http.Request) (user, pending string, ok bool) {
	tok := r.PostFormValue("csrf")
	same := func(cookie string) bool {
		c, err := r.Cookie(cookie)
		return err == nil && tok != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(tok)) == 1
	}
	if same(codeCookie) {
		p, ok := u.codes.peek(tok)
		return p.user, tok, ok
	}
	return "", "", same(loginCookie)
}

// passkeyBegin is POST /login/passkey/begin: the options of a sign-in.
func (u *Login) passkeyBegin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	user, _, ok := u.passkeyStep(r)
	if !ok {
		http.Error(w, "The form had expired or came from another page: reload it.", http.StatusForbidden)
		return
	}
	opts, tok, err := u.Passkeys.BeginSignIn(guard.Host(r.RemoteAddr), r.Host, user)
	ceremonyJSON(w, opts, tok, err)
}

// passkeyPost is POST /login/passkey: the browser's answer (the form's
// answer field), checked by the door as a login.
func (u *Login) passkeyPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	next := localNext(r.PostFormValue("next"))
	user, pending, ok := u.passkeyStep(r)
	if pending != "" {
		var p pendingLogin
		if p, ok = u.codes.get(pending); ok {
			next = p.next
		}
	}
	if !ok {
		u.loginForm(w, r, http.StatusForbidden, next, "", "The form had expired or came from another page: log in again.")
		return
	}
	addr := guard.Host(r.RemoteAddr)
	name, res := u.WaysIn.Passkey(addr, r.Host, r.PostFormValue("token"), user, []byte(r.PostFormValue("answer")))
	switch {
	case res == auth.OK:
		u.codes.done(pending)
		u.loggedIn(w, r, name, next, "passkey")
		return
	case res == auth.Wrong && pending != "":
		u.askCode(w, r, http.StatusUnauthorized, pending, next, user, "That passkey was not taken: try again, or type a code.")
		return
	case res == auth.Wrong:
		u.loginForm(w, r, http.StatusUnauthorized, next, "", "That passkey was not taken: try again, or log in with your password.")
		return
	}
	u.codes.done(pending)
	if res.Status() == http.StatusTooManyRequests {
		auth.SetRetryAfter(w, u.WaysIn.RetryAfter(addr, name))
	}
	u.loginForm(w, r, res.Status(), next, user, res.Message())
}

// passkeyView is a passkey as the account page lists it.
type passkeyView struct {
	users.Passkey
	// Here: it was made at the name the page is reached by, and works
	// here.
	Here bool
}

// passkeysData is the account page's passkeys section.
type passkeysData struct {
	List []passkeyView
	// Hint says why no passkey can be made here (an IP address); "":
	// one can.
	Hint string
}

// passkeysOf is the account page's passkeys section for a page at host.
func (u *Account) passkeysOf(host, user string) (passkeysData, error) {
	var d passkeysData
	rpID, err := passkeys.Host(host)
	if err != nil {
		d.Hint = err.Error()
	}
	keys, _, err := u.Keys.Of(user)
	for _, k := range keys {
		d.List = append(d.List, passkeyView{k, k.RPID == rpID})
	}
	return d, err
}

// passkeyBegin is POST /account/passkey/begin: the options that make a
// passkey, once the password (current) is typed again, as turning
// two-factor login on needs.
func (u *Account) passkeyBegin(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if strings.TrimSpace(r.PostFormValue("name")) == "" {
		http.Error(w, "Name the passkey first (the phone or key it is on).", http.StatusBadRequest)
		return
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := u.WaysIn.Password(addr, auth.Retyped, sess.User, r.PostFormValue("current")); res {
	case auth.OK:
	case auth.Wrong:
		http.Error(w, "No passkey made: the password is not right.", http.StatusForbidden)
		return
	default:
		http.Error(w, res.Message(), res.Status())
		return
	}
	opts, tok, err := u.Passkeys.BeginRegistration(addr, r.Host, sess.User)
	ceremonyJSON(w, opts, tok, err)
}

// passkeyAdd is POST /account/passkey: the passkey the browser made.
func (u *Account) passkeyAdd(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	name := r.PostFormValue("name")
	err := u.Passkeys.FinishRegistration(r.Host, sess.User, r.PostFormValue("token"), name, []byte(r.PostFormValue("answer")))
	if err != nil {
		u.showAccount(w, r, sess, http.StatusBadRequest, "", "No passkey made: "+err.Error(), accountData{})
		return
	}
	u.Log.Info("web: passkey added", "user", sess.User, "name", name)
	u.audited(r, sess.User, "added a passkey")
	u.showAccount(w, r, sess, http.StatusOK, "Passkey added: the login page's \"Sign in with a passkey\" takes it at this address of the box.", "", accountData{})
}

// passkeyRemove is the account page's "remove" of a passkey.
func (u *Account) passkeyRemove(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	if err := u.Keys.Remove(sess.User, r.PostFormValue("id")); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, users.ErrNoPasskey) {
			code = http.StatusNotFound
		}
		u.showAccount(w, r, sess, code, "", "Passkey not removed: "+err.Error(), accountData{})
		return
	}
	u.Log.Info("web: passkey removed", "user", sess.User)
	u.audited(r, sess.User, "removed a passkey")
	u.showAccount(w, r, sess, http.StatusOK, "Passkey removed: it signs in no more.", "", accountData{})
}
