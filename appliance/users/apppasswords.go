package users

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// AppPassword is a password made for one sync client (a phone, a laptop's
// Nextcloud app, rclone): it works wherever the account's password does and
// is revoked on its own. It is generated with about 148 bits of
// randomness, so it is stored as a SHA-256 digest, not an Argon2id hash: no
// dictionary reaches it, and checking it costs the board microseconds
// instead of a hash on every WebDAV request.
type AppPassword struct {
	ID      string    `json:"id"`
	Label   string    `json:"label"`
	Digest  string    `json:"sha256"`
	Created time.Time `json:"created"`
}

// MaxAppPasswords bounds an account's app passwords.
const MaxAppPasswords = 50

// ErrNoAppPassword is returned for an app password that does not exist.
var ErrNoAppPassword = errors.New("no such app password")

// NewAppPassword makes an account an app password labelled label and
// returns it in clear, the only time it is seen, with its record.
func (db *DB) NewAppPassword(name, label string) (string, AppPassword, error) {
	label = strings.TrimSpace(label)
	if label == "" || len(label) > 100 || strings.ContainsFunc(label, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", AppPassword{}, errors.New("name the app password: 1 to 100 printable characters")
	}
	pw := newAppSecret()
	var id [6]byte
	rand.Read(id[:])
	ap := AppPassword{ID: hex.EncodeToString(id[:]), Label: label, Digest: appDigest(pw), Created: time.Now().UTC()}
	err := db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		if len(u.Apps) >= MaxAppPasswords {
			return fmt.Errorf("user %s has %d app passwords already: revoke one first", name, len(u.Apps))
		}
		u.Apps = append(u.Apps, ap)
		return nil
	})
	if err != nil {
		return "", AppPassword{}, err
	}
	return pw, ap, nil
}

// AppPasswords lists an account's app passwords (digests included: they
// are not secrets that open anything).
func (db *DB) AppPasswords(name string) ([]AppPassword, error) {
	u, ok, err := db.lookup(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no user %s", name)
	}
	return append([]AppPassword(nil), u.Apps...), nil
}

// RevokeAppPassword deletes one of an account's app passwords; from then on
// it opens nothing.
func (db *DB) RevokeAppPassword(name, id string) error {
	return db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		for i, a := range u.Apps {
			if a.ID == id {
				u.Apps = append(u.Apps[:i], u.Apps[i+1:]...)
				return nil
			}
		}
		return ErrNoAppPassword
	})
}

// IsAppPassword reports whether password is one of name's app passwords:
// a check that costs no hash, which the login door lets through while the
// account's guesses wait.
func (db *DB) IsAppPassword(name, password string) bool {
	u, ok, err := db.lookup(name)
	return err == nil && ok && u.isAppPassword(password)
}

// isAppPassword reports whether password is one of u's app passwords. Every
// digest is compared, in constant time.
func (u *User) isAppPassword(password string) bool {
	if !looksLikeAppSecret(password) {
		return false
	}
	d := appDigest(password)
	found := 0
	for _, a := range u.Apps {
		found |= subtle.ConstantTimeCompare([]byte(a.Digest), []byte(d))
	}
	return found == 1
}

func appDigest(pw string) string {
	sum := sha256.Sum256([]byte(pw))
	return hex.EncodeToString(sum[:])
}

// newAppSecret is 5 groups of 6 characters (about 148 bits), in the style
// of NewPassword but longer.
func newAppSecret() string { return readable(5, 6) }

func looksLikeAppSecret(pw string) bool { return len(pw) == 34 && strings.Count(pw, "-") == 4 }
