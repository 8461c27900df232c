package passkeys

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/users"
)

// BeginSignIn begins a sign-in from addr at host (the request's Host):
// for user's passkeys made there (the second factor, after the
// password), or, user "", for whichever passkey of the box's the browser
// holds, which must then check its user (a PIN, a fingerprint): it is
// the whole login. It returns the options for the browser's
// navigator.credentials.get, as JSON, and the token Verify takes.
func (rp *RelyingParty) BeginSignIn(addr, host, user string) (options []byte, token string, err error) {
	w, rpID, err := at(host)
	if err != nil {
		return nil, "", err
	}
	var (
		opts    *protocol.CredentialAssertion
		session *webauthn.SessionData
	)
	if user == "" {
		opts, session, err = w.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	} else {
		var a *account
		if a, err = rp.account(user, rpID); err != nil {
			return nil, "", err
		}
		if len(a.creds) == 0 {
			return nil, "", errors.New("no passkey of this account was made at this address of the box")
		}
		opts, session, err = w.BeginLogin(a)
	}
	if err != nil {
		return nil, "", fmt.Errorf("begin a passkey sign-in at %s: %w", rpID, err)
	}
	return rp.keep(&ceremony{kind: signIn, session: *session, user: user, rpID: rpID, host: host, source: guard.Source(addr)}, opts)
}

// Owner is the account the passkey of a sign-in's answer names: its
// user handle's. "" when it names none (or is no answer).
func (rp *RelyingParty) Owner(answer []byte) (string, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return "", nil
	}
	name, _, err := rp.keys.Owner(parsed.Response.UserHandle)
	return name, err
}

// Verify checks the browser's answer to the sign-in begun under token at
// host for user ("" for any passkey, BeginSignIn) as one of name's
// passkeys, and keeps the passkey's new signature count and last use. A
// token is taken once, right or wrong. A passkey whose signature count
// went back (a copied authenticator, as go-webauthn warns) is refused.
// A refused answer's error wraps ErrRefused and says why; another error
// is the box's fault (its users file).
func (rp *RelyingParty) Verify(host, token, user, name string, answer []byte) error {
	c, ok := rp.ceremonies.take(token, signIn, time.Now())
	if !ok || c.user != user || c.host != host {
		return fmt.Errorf("%w: the sign-in had expired, or was begun for another", ErrRefused)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return fmt.Errorf("%w: not a passkey's answer: %w", ErrRefused, err)
	}
	a, err := rp.account(name, c.rpID)
	if err != nil {
		return err
	}
	w, _, err := at(c.host)
	if err != nil {
		return err
	}
	var cred *webauthn.Credential
	if c.user == "" {
		_, cred, err = w.ValidatePasskeyLogin(func(_, _ []byte) (webauthn.User, error) { return a, nil }, c.session, parsed)
	} else {
		cred, err = w.ValidateLogin(a, c.session, parsed)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if cred.Authenticator.CloneWarning {
		return fmt.Errorf("%w: its signature count went back to %d, as a copied one's would", ErrRefused, parsed.Response.AuthenticatorData.Counter)
	}
	return rp.used(name, cred)
}

// ErrRefused is wrapped by the error of an answer that does not sign in.
var ErrRefused = errors.New("passkey refused")

// used keeps cred, just used by name.
func (rp *RelyingParty) used(name string, cred *webauthn.Credential) error {
	b, err := json.Marshal(cred)
	if err != nil {
		return fmt.Errorf("passkey of %s: %w", name, err)
	}
	err = rp.keys.Used(name, credentialID(cred.ID), b, time.Now())
	if errors.Is(err, users.ErrNoPasskey) {
		return fmt.Errorf("%w: removed meanwhile", ErrRefused)
	}
	return err
}
