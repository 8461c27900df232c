// Package passkeys is the box as a WebAuthn relying party, for the web
// login: it makes the options of a ceremony (a sign-in, or the making of
// a passkey), keeps its challenge until the browser answers, and checks
// the answer, with go-webauthn (origin, host name, challenge, signature,
// signature count). It logs no one in: a sign-in's answer is checked as
// a login by the login door (package auth: bans, the account's delay, the
// audit log), which calls Verify. Package users keeps the passkeys.
//
// A passkey belongs to a host name, its relying party ID: the name the
// browser used when it was made (bonesync.local, or the box's name on the
// USB link), and it works at that name only. The relying party is the
// request's host, never configured, since the box is reached by several
// names; browsers refuse passkeys at an IP address, and so does Host.
package passkeys

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/users"
)

// errAtAddress says the box was reached by an IP address, where browsers
// allow no passkey.
var errAtAddress = errors.New("passkeys work only when the box is reached by its name (https://bonesync.local), not by an IP address: browsers refuse them there")

// Host is the relying party ID of a request to host (r.Host: a name, and
// perhaps a port); an error that says why for an IP address or a name no
// passkey can have.
func Host(host string) (string, error) {
	name := strings.ToLower(strings.TrimSuffix(strings.Trim(guard.Host(host), "[]"), "."))
	if net.ParseIP(name) != nil {
		return "", errAtAddress
	}
	if err := protocol.ValidateRPID(name); err != nil {
		return "", fmt.Errorf("passkeys cannot work at %q: %w", name, err)
	}
	return name, nil
}

// RelyingParty makes and checks the box's passkey ceremonies.
type RelyingParty struct {
	keys       users.Passkeys
	ceremonies ceremonies
}

// New is the relying party of the accounts in db.
func New(db *users.DB) *RelyingParty { return &RelyingParty{keys: users.PasskeysOf(db)} }

// at is go-webauthn's relying party at host.
func at(host string) (w *webauthn.WebAuthn, rpID string, err error) {
	if rpID, err = Host(host); err != nil {
		return nil, "", err
	}
	w, err = webauthn.New(&webauthn.Config{
		RPID:          rpID,
		RPDisplayName: "bonesync",
		RPOrigins:     []string{"https://" + strings.ToLower(host)},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementRequired,
			UserVerification: protocol.VerificationPreferred,
		},
	})
	if err != nil {
		return nil, "", fmt.Errorf("passkeys at %s: %w", rpID, err)
	}
	return w, rpID, nil
}

// account is an account as go-webauthn asks it: its user handle and its
// passkeys made at one host name.
type account struct {
	name   string
	handle []byte
	creds  []webauthn.Credential
}

func (a *account) WebAuthnID() []byte                         { return a.handle }
func (a *account) WebAuthnName() string                       { return a.name }
func (a *account) WebAuthnDisplayName() string                { return a.name }
func (a *account) WebAuthnCredentials() []webauthn.Credential { return a.creds }

// account reads name's passkeys made at rpID.
func (rp *RelyingParty) account(name, rpID string) (*account, error) {
	keys, handle, err := rp.keys.Of(name)
	if err != nil {
		return nil, err
	}
	a := &account{name: name, handle: handle}
	for _, k := range keys {
		if k.RPID != rpID {
			continue
		}
		var c webauthn.Credential
		if err := json.Unmarshal(k.Credential, &c); err != nil {
			return nil, fmt.Errorf("passkey %s of %s: %w", k.ID, name, err)
		}
		a.creds = append(a.creds, c)
	}
	return a, nil
}

// Has says whether user has a passkey made at host (the request's Host),
// which a sign-in there can offer.
func (rp *RelyingParty) Has(host, user string) bool {
	rpID, err := Host(host)
	if err != nil {
		return false
	}
	a, err := rp.account(user, rpID)
	return err == nil && len(a.creds) > 0
}

// keep keeps c and returns the browser's options with its token.
func (rp *RelyingParty) keep(c *ceremony, opts any) ([]byte, string, error) {
	b, err := json.Marshal(opts)
	if err != nil {
		return nil, "", fmt.Errorf("passkey options: %w", err)
	}
	tok := rp.ceremonies.add(c, time.Now())
	if tok == "" {
		return nil, "", errors.New("too many passkey sign-ins at once: try again in a few minutes")
	}
	return b, tok, nil
}

// credentialID is a credential's ID as users keeps it.
func credentialID(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }
