package users

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Passkeys (WebAuthn credentials) log an account in to the web pages
// without its password, or after it in place of a one-time code. The
// ceremonies and their checks are the login door's (package auth, with
// go-webauthn); this file keeps what they leave: each passkey's record,
// opaque here, and when it was made and last used.

// Passkey is one passkey of an account.
type Passkey struct {
	// ID is the credential's ID, base64url (the browser's rawId).
	ID   string `json:"id"`
	Name string `json:"name"`
	// RPID is the host name it was made for (bonesync.local): a passkey
	// works only at the name it was made at.
	RPID     string    `json:"rp_id"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitzero"`
	// Credential is the credential as the login door keeps it (its
	// public key, signature count, flags), JSON it makes and reads.
	Credential []byte `json:"credential"`
}

// Passkeys are the accounts' passkeys, kept in users.json with the rest of
// each account (a type of their own: DB holds the accounts' other parts).
type Passkeys struct{ db *DB }

// PasskeysOf is db's passkeys.
func PasskeysOf(db *DB) Passkeys { return Passkeys{db} }

// MaxPasskeys bounds an account's passkeys.
const MaxPasskeys = 20

// ErrNoPasskey is returned for a passkey the account does not have.
var ErrNoPasskey = errors.New("no such passkey")

// HandleFor is name's WebAuthn user handle: the one kept, or a new
// random one if the account has no passkey yet (kept with the first,
// Add).
func (ps Passkeys) HandleFor(name string) (handle []byte, err error) {
	u, ok, err := ps.db.lookup(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no user %s", name)
	}
	if len(u.PasskeyHandle) > 0 {
		return u.PasskeyHandle, nil
	}
	handle = make([]byte, 32)
	rand.Read(handle)
	return handle, nil
}

// Of is name's passkeys, and its user handle (nil when it has none).
func (ps Passkeys) Of(name string) ([]Passkey, []byte, error) {
	u, ok, err := ps.db.lookup(name)
	if err != nil || !ok {
		return nil, nil, err
	}
	return u.Passkeys, u.PasskeyHandle, nil
}

// Owner is the account whose user handle is handle.
func (ps Passkeys) Owner(handle []byte) (name string, ok bool, err error) {
	if len(handle) == 0 {
		return "", false, nil
	}
	db := ps.db
	if err := db.reload(); err != nil {
		return "", false, fmt.Errorf("cannot check logins: %w", err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, u := range db.users {
		if len(u.PasskeyHandle) > 0 && subtle.ConstantTimeCompare(u.PasskeyHandle, handle) == 1 {
			return u.Name, true, nil
		}
	}
	return "", false, nil
}

// Add keeps a new passkey of name's, made with handle (what HandleFor
// gave: the account's first passkey keeps it).
func (ps Passkeys) Add(name string, handle []byte, p Passkey) error {
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" || len(p.Name) > 100 || strings.ContainsFunc(p.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return errors.New("name the passkey: 1 to 100 printable characters")
	}
	if p.ID == "" || len(p.Credential) == 0 || len(handle) == 0 {
		return errors.New("no passkey to keep")
	}
	return ps.db.update(func(m map[string]*User) error {
		u, ok := m[name]
		switch {
		case !ok:
			return fmt.Errorf("no user %s", name)
		case len(u.PasskeyHandle) > 0 && !bytes.Equal(u.PasskeyHandle, handle):
			return errors.New("the account's passkeys changed meanwhile: add it again")
		case len(u.Passkeys) >= MaxPasskeys:
			return fmt.Errorf("user %s has %d passkeys already: remove one first", name, len(u.Passkeys))
		}
		for _, o := range u.Passkeys {
			if o.ID == p.ID {
				return errors.New("that passkey is kept already")
			}
		}
		u.PasskeyHandle = handle
		u.Passkeys = append(u.Passkeys, p)
		return nil
	})
}

// Used records that name logged in with passkey id at at, and keeps its
// credential as the check left it (its new signature count).
func (ps Passkeys) Used(name, id string, credential []byte, at time.Time) error {
	return ps.db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		for i := range u.Passkeys {
			if u.Passkeys[i].ID == id {
				u.Passkeys[i].Credential, u.Passkeys[i].LastUsed = credential, at.UTC()
				return nil
			}
		}
		return ErrNoPasskey
	})
}

// Remove deletes name's passkey id. The user handle stays: the passkey
// may still be on a phone, and names this account if offered.
func (ps Passkeys) Remove(name, id string) error {
	return ps.db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		for i, p := range u.Passkeys {
			if p.ID == id {
				u.Passkeys = append(u.Passkeys[:i:i], u.Passkeys[i+1:]...)
				return nil
			}
		}
		return ErrNoPasskey
	})
}
