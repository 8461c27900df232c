package users

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// Two-factor login: a time-based one-time password (TOTP, RFC 6238: 6
// digits, 30-second steps, HMAC-SHA-1, as every authenticator app makes
// them) asked by the web pages' login form after the password, and 10
// single-use recovery codes for a lost phone. An account that has it
// takes its own password only on that form: sync clients, WebDAV and
// SFTP need an app password or an SSH key, which the account page makes.
//
// pquerna/otp makes the secret and its otpauth:// address and checks the
// codes; a code is taken once (the step last used is stored), and one
// step either side of now is allowed for a phone's clock.

// RecoveryCodes is how many recovery codes an enrolment makes.
const RecoveryCodes = 10

// totpOpts are the parameters every authenticator app takes.
var totpOpts = totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// ErrNoTOTP says an account has no two-factor login.
var ErrNoTOTP = errors.New("two-factor login is not on for this account")

// NewTOTP makes a secret for name to enrol with (nothing is stored until
// EnableTOTP): its Secret() for typing and URL() for the QR code.
func (db *DB) NewTOTP(name string) (*otp.Key, error) {
	return totp.Generate(totp.GenerateOpts{Issuer: "bonesync", AccountName: name, Period: totpOpts.Period,
		Digits: totpOpts.Digits, Algorithm: totpOpts.Algorithm})
}

// EnableTOTP turns two-factor login on for name with secret, once code
// shows the phone has it, and returns the recovery codes, in clear this
// once (stored as SHA-256 digests: they are random, no dictionary reaches
// them).
func (db *DB) EnableTOTP(name, secret, code string) ([]string, error) {
	if len(secret) < 26 { // 16 bytes in base32: what NewTOTP makes is 32 characters
		return nil, errors.New("no secret to enrol: start again")
	}
	used, ok := codeStep(secret, normalCode(code), db.now(), 0)
	if !ok {
		return nil, errors.New("that code is not the one the app shows now: check the phone's clock, and type the newest code")
	}
	var codes, digests []string
	for range RecoveryCodes {
		c := readable(2, 5)
		codes = append(codes, c)
		digests = append(digests, appDigest(strings.ReplaceAll(c, "-", "")))
	}
	err := db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		u.TOTP, u.TOTPStep, u.Recovery = secret, used, digests
		return nil
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// DisableTOTP turns two-factor login off for name.
func (db *DB) DisableTOTP(name string) error {
	return db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		u.TOTP, u.TOTPStep, u.Recovery = "", 0, nil
		return nil
	})
}

// TOTP says whether name has two-factor login, and how many recovery
// codes are left.
func (db *DB) TOTP(name string) (on bool, recoveryLeft int) {
	u, ok, err := db.lookup(name)
	if err != nil || !ok {
		return false, 0
	}
	return u.TOTP != "", len(u.Recovery)
}

// CheckCode reports whether code is name's current one-time password or
// one of its recovery codes, and uses it up: a code seen once is refused
// after (a code read over a shoulder, or replayed), and a recovery code
// is deleted.
func (db *DB) CheckCode(name, code string) (bool, error) {
	code = normalCode(code)
	now := db.now()
	taken := false
	err := db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok || u.TOTP == "" {
			return ErrNoTOTP
		}
		if s, ok := codeStep(u.TOTP, code, now, u.TOTPStep); ok {
			u.TOTPStep, taken = s, true
			return nil
		}
		d := appDigest(code)
		for i, r := range u.Recovery {
			if subtle.ConstantTimeCompare([]byte(r), []byte(d)) == 1 {
				u.Recovery = append(u.Recovery[:i:i], u.Recovery[i+1:]...)
				taken = true
				return nil
			}
		}
		return errNotTaken
	})
	switch {
	case errors.Is(err, errNotTaken):
		return false, nil
	case errors.Is(err, ErrNoTOTP):
		return false, nil
	}
	return taken, err
}

// normalCode is a code as typed without its spaces and dashes, in lower
// case (recovery codes are shown in groups).
func normalCode(code string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(code))
}

func (db *DB) now() time.Time {
	if db.Now != nil {
		return db.Now()
	}
	return time.Now()
}

// errNotTaken leaves the users file as it was: the code was wrong.
var errNotTaken = errors.New("not taken")

// codeStep finds code among secret's codes of the steps either side of
// now and now's, past after (each step's code is taken once), and says
// which step it is.
func codeStep(secret, code string, now time.Time, after int64) (int64, bool) {
	for _, at := range []time.Time{now.Add(-30 * time.Second), now, now.Add(30 * time.Second)} {
		s := step(at)
		if s <= after {
			continue
		}
		want, err := totp.GenerateCodeCustom(secret, at, totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// step is the TOTP time step at t.
func step(t time.Time) int64 { return t.Unix() / int64(totpOpts.Period) }
