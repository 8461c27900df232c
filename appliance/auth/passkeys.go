package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/users"
)

// Passkeys (WebAuthn) on the web login form: a sign-in with a passkey
// alone (a discoverable credential: the browser offers the box's
// passkeys, the passkey names its account, and asks its own PIN or
// fingerprint), or a passkey in place of the code after a two-factor
// account's password. go-webauthn makes the options and checks the
// answers (origin, host name, challenge, signature, signature count);
// the door keeps the challenges (ceremonies.go) and puts every answer
// through check, as a password or a code: the address's bans, the
// account's delay, the audit log. Package users keeps the passkeys.
//
// A passkey belongs to a host name, its relying party ID: the one the
// browser used when it was made (bonesync.local, or the box's name on
// the USB link), and it works at that name only. The relying party is
// the request's host, never configured: the box is reached by several
// names. Browsers refuse passkeys at an IP address (ErrPasskeyAtAddress).

// ErrPasskeyAtAddress says the box was reached by an IP address, where
// browsers allow no passkey.
var ErrPasskeyAtAddress = errors.New("passkeys work only when the box is reached by its name (https://bonesync.local), not by an IP address: browsers refuse them there")

// errNoPasskeyHere says the account has no passkey made at this name.
var errNoPasskeyHere = errors.New("no passkey of this account was made at this address of the box")

// PasskeyHost is the relying party ID of a request to host (r.Host: a
// name, and perhaps a port), or ErrPasskeyAtAddress.
func PasskeyHost(host string) (string, error) {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if net.ParseIP(name) != nil {
		return "", ErrPasskeyAtAddress
	}
	if err := protocol.ValidateRPID(name); err != nil {
		return "", fmt.Errorf("passkeys cannot work at %q: %w", name, err)
	}
	return name, nil
}

// relyingParty is the box as WebAuthn sees it at host.
func relyingParty(host string) (rp *webauthn.WebAuthn, rpID string, err error) {
	if rpID, err = PasskeyHost(host); err != nil {
		return nil, "", err
	}
	rp, err = webauthn.New(&webauthn.Config{
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
	return rp, rpID, nil
}

// passkeyUser is an account as go-webauthn asks it: its user handle and
// its passkeys made at one host name.
type passkeyUser struct {
	name   string
	handle []byte
	creds  []webauthn.Credential
}

func (u *passkeyUser) WebAuthnID() []byte                         { return u.handle }
func (u *passkeyUser) WebAuthnName() string                       { return u.name }
func (u *passkeyUser) WebAuthnDisplayName() string                { return u.name }
func (u *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// passkeyUser reads name's passkeys made at rpID.
func (d *Door) passkeyUser(name, rpID string) (*passkeyUser, error) {
	keys, handle, err := d.accounts.Passkeys(name)
	if err != nil {
		return nil, err
	}
	u := &passkeyUser{name: name, handle: handle}
	for _, k := range keys {
		if k.RPID != rpID {
			continue
		}
		var c webauthn.Credential
		if err := json.Unmarshal(k.Credential, &c); err != nil {
			return nil, fmt.Errorf("passkey %s of %s: %w", k.ID, name, err)
		}
		u.creds = append(u.creds, c)
	}
	return u, nil
}

// BeginPasskey begins a sign-in with a passkey from addr at host (the
// request's Host): for user's passkeys (the second factor, after the
// password), or, user "", for whichever passkey of the box's the browser
// holds. It returns the options for the browser's
// navigator.credentials.get, as JSON, and the token FinishPasskey takes.
func (d *Door) BeginPasskey(addr, host, user string) (options []byte, token string, err error) {
	rp, rpID, err := relyingParty(host)
	if err != nil {
		return nil, "", err
	}
	var (
		opts    *protocol.CredentialAssertion
		session *webauthn.SessionData
	)
	if user == "" {
		opts, session, err = rp.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	} else {
		var u *passkeyUser
		if u, err = d.passkeyUser(user, rpID); err != nil {
			return nil, "", err
		}
		if len(u.creds) == 0 {
			return nil, "", errNoPasskeyHere
		}
		opts, session, err = rp.BeginLogin(u)
	}
	if err != nil {
		return nil, "", fmt.Errorf("begin a passkey sign-in at %s: %w", rpID, err)
	}
	return d.keepCeremony(&ceremony{kind: signIn, session: *session, user: user, rpID: rpID, host: host, source: guard.Source(addr)}, opts)
}

// keepCeremony keeps c and returns the browser's options with its token.
func (d *Door) keepCeremony(c *ceremony, opts any) ([]byte, string, error) {
	b, err := json.Marshal(opts)
	if err != nil {
		return nil, "", fmt.Errorf("passkey options: %w", err)
	}
	tok := d.ceremonies.add(c, d.bans.now())
	if tok == "" {
		return nil, "", errors.New("too many passkey sign-ins at once: try again in a few minutes")
	}
	return b, tok, nil
}

// FinishPasskey checks the browser's answer to the sign-in begun under
// token, from addr at host, for user ("" for one begun for any passkey,
// BeginPasskey), as a login: the address's bans and the account's delay
// hold, a wrong answer is a failed login, a right one is audited. It
// returns the account the passkey logs in. A passkey whose signature
// count went back (a copied authenticator, as go-webauthn warns) is
// refused and logged.
func (d *Door) FinishPasskey(addr, host, token, user string, answer []byte) (string, Result) {
	c, ok := d.ceremonies.take(token, signIn, d.bans.now())
	parsed, perr := protocol.ParseCredentialRequestResponseBytes(answer)
	name, way := user, passkeyFactor
	if user == "" {
		way = passkeyAlone
		if perr == nil {
			owner, found, err := d.accounts.PasskeyOwner(parsed.Response.UserHandle)
			if err != nil {
				d.log.Error("passkey not checked", "addr", addr, "err", err)
				return "", Fault
			}
			if found {
				name = owner
			}
		}
	}
	if name == "" {
		name = "(unknown passkey)"
	}
	right := ok && perr == nil && c.user == user && c.host == host
	res := d.check(d.account(addr, way, name), func(bool) (bool, error) {
		if !right {
			return false, nil
		}
		return d.verifyPasskey(c, name, parsed)
	})
	return name, res
}

// verifyPasskey checks a sign-in's answer for name's passkeys and keeps
// the passkey's new signature count and last use.
func (d *Door) verifyPasskey(c *ceremony, name string, parsed *protocol.ParsedCredentialAssertionData) (bool, error) {
	u, err := d.passkeyUser(name, c.rpID)
	if err != nil {
		return false, err
	}
	rp, _, err := relyingParty(c.host)
	if err != nil {
		return false, err
	}
	var cred *webauthn.Credential
	if c.user == "" {
		_, cred, err = rp.ValidatePasskeyLogin(func(_, _ []byte) (webauthn.User, error) { return u, nil }, c.session, parsed)
	} else {
		cred, err = rp.ValidateLogin(u, c.session, parsed)
	}
	if err != nil {
		d.log.Info("passkey refused", "user", name, "err", err)
		return false, nil
	}
	if cred.Authenticator.CloneWarning {
		d.log.Warn("passkey refused: its signature count went back, as a copied one's would", "user", name, "count", cred.Authenticator.SignCount)
		return false, nil
	}
	b, err := json.Marshal(cred)
	if err != nil {
		return false, fmt.Errorf("passkey of %s: %w", name, err)
	}
	err = d.accounts.PasskeyUsed(name, base64.RawURLEncoding.EncodeToString(cred.ID), b, d.bans.now())
	if errors.Is(err, users.ErrNoPasskey) { // removed meanwhile
		return false, nil
	}
	return err == nil, err
}

// BeginPasskeyRegistration begins making a passkey for user at host (the
// request's Host: the passkey works at that name only), asked from addr.
// The caller has had user's password typed again. It returns the options
// for the browser's navigator.credentials.create, as JSON, and the token
// FinishPasskeyRegistration takes.
func (d *Door) BeginPasskeyRegistration(addr, host, user string) (options []byte, token string, err error) {
	rp, rpID, err := relyingParty(host)
	if err != nil {
		return nil, "", err
	}
	u, err := d.passkeyUser(user, rpID)
	if err != nil {
		return nil, "", err
	}
	if u.handle, err = d.accounts.PasskeyHandleFor(user); err != nil {
		return nil, "", err
	}
	opts, session, err := rp.BeginRegistration(u, webauthn.WithExclusions(webauthn.Credentials(u.creds).CredentialDescriptors()),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		return nil, "", fmt.Errorf("begin a passkey for %s at %s: %w", user, rpID, err)
	}
	return d.keepCeremony(&ceremony{kind: registration, session: *session, user: user, handle: u.handle, rpID: rpID, host: host, source: guard.Source(addr)}, opts)
}

// FinishPasskeyRegistration checks the passkey the browser made for the
// registration begun under token (BeginPasskeyRegistration) and keeps it
// as user's, named name.
func (d *Door) FinishPasskeyRegistration(host, user, token, name string, answer []byte) error {
	c, ok := d.ceremonies.take(token, registration, d.bans.now())
	if !ok || c.user != user || c.host != host {
		return errors.New("the passkey's set-up had expired: start again")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(answer)
	if err != nil {
		return fmt.Errorf("the browser's answer is not a passkey: %w", err)
	}
	u, err := d.passkeyUser(user, c.rpID)
	if err != nil {
		return err
	}
	u.handle = c.handle
	rp, _, err := relyingParty(c.host)
	if err != nil {
		return err
	}
	cred, err := rp.CreateCredential(u, c.session, parsed)
	if err != nil {
		return fmt.Errorf("the passkey was not made: %w", err)
	}
	b, err := json.Marshal(cred)
	if err != nil {
		return fmt.Errorf("the passkey of %s: %w", user, err)
	}
	return d.accounts.AddPasskey(user, c.handle, users.Passkey{ID: base64.RawURLEncoding.EncodeToString(cred.ID),
		Name: name, RPID: c.rpID, Created: d.bans.now().UTC(), Credential: b})
}
