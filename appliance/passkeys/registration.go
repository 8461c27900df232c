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

// BeginRegistration begins making a passkey for user at host (the
// request's Host: the passkey works at that name only), asked from addr.
// The caller has had user's password typed again. It returns the options
// for the browser's navigator.credentials.create, as JSON, and the token
// FinishRegistration takes.
func (rp *RelyingParty) BeginRegistration(addr, host, user string) (options []byte, token string, err error) {
	w, rpID, err := at(host)
	if err != nil {
		return nil, "", err
	}
	a, err := rp.account(user, rpID)
	if err != nil {
		return nil, "", err
	}
	if a.handle, err = rp.keys.HandleFor(user); err != nil {
		return nil, "", err
	}
	opts, session, err := w.BeginRegistration(a, webauthn.WithExclusions(webauthn.Credentials(a.creds).CredentialDescriptors()),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		return nil, "", fmt.Errorf("begin a passkey for %s at %s: %w", user, rpID, err)
	}
	return rp.keep(&ceremony{kind: registration, session: *session, user: user, handle: a.handle, rpID: rpID, host: host, source: guard.Source(addr)}, opts)
}

// FinishRegistration checks the passkey the browser made for the
// registration begun under token (BeginRegistration) and keeps it as
// user's, named name.
func (rp *RelyingParty) FinishRegistration(host, user, token, name string, answer []byte) error {
	c, ok := rp.ceremonies.take(token, registration, time.Now())
	if !ok || c.user != user || c.host != host {
		return errors.New("the passkey's set-up had expired: start again")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(answer)
	if err != nil {
		return fmt.Errorf("the browser's answer is not a passkey: %w", err)
	}
	a, err := rp.account(user, c.rpID)
	if err != nil {
		return err
	}
	a.handle = c.handle
	w, _, err := at(c.host)
	if err != nil {
		return err
	}
	cred, err := w.CreateCredential(a, c.session, parsed)
	if err != nil {
		return fmt.Errorf("the passkey was not made: %w", err)
	}
	// The attestation (the browser's statement of the making, a few KB)
	// is checked now and not again: users.json keeps the key and counts.
	cred.Attestation = webauthn.CredentialAttestation{}
	b, err := json.Marshal(cred)
	if err != nil {
		return fmt.Errorf("the passkey of %s: %w", user, err)
	}
	return rp.keys.Add(user, c.handle, users.Passkey{ID: credentialID(cred.ID), Name: name, RPID: c.rpID, Created: time.Now().UTC(), Credential: b})
}
