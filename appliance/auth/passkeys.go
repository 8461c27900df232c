package auth

import (
	"errors"

	"github.com/bonesync/bonesync/appliance/passkeys"
)

// Passkeys are the web login's passkeys (package passkeys): the pages
// begin their ceremonies and make passkeys there; a sign-in's answer
// comes back to the door (Passkey).
func (d *Door) Passkeys() *passkeys.RelyingParty { return d.passkeys }

// Passkey checks the browser's answer to the passkey sign-in begun under
// token (passkeys.RelyingParty.BeginSignIn) at host, from addr, as a
// login: for user's passkeys, the second factor after the password
// (passkeyFactor), or, user "", any passkey of the box's, a login alone
// (passkeyAlone). The address's bans and the account's delay hold as for
// a password, a refused answer is a failed login, a right one is
// audited. It returns the account logged in.
func (d *Door) Passkey(addr, host, token, user string, answer []byte) (string, Result) {
	if banned, _ := d.bans.Banned(addr); banned { // before the answer is read
		return user, Banned
	}
	name, way := user, passkeyFactor
	if user == "" {
		way = passkeyAlone
		owner, err := d.passkeys.Owner(answer)
		if err != nil {
			d.log.Error("passkey not checked", "proto", way.proto(), "addr", addr, "err", err)
			return "", Fault
		}
		name = owner
	}
	if name == "" {
		name = "(unknown passkey)" // no account's name: its target is no account's
	}
	res := d.check(d.account(addr, way, name), func(bool) (bool, error) {
		err := d.passkeys.Verify(host, token, user, name, answer)
		if errors.Is(err, passkeys.ErrRefused) {
			d.log.Info("passkey refused", "proto", way.proto(), "user", name, "addr", addr, "why", err)
			return false, nil
		}
		return err == nil, err
	})
	return name, res
}
