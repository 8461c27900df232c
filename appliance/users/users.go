// Package users is the box's accounts: names, password hashes (Argon2id) and
// SSH public keys, kept in users.json in the state directory. The running
// server re-reads the file when it changes, so `bonesync user ...` from a
// console takes effect without a restart.
package users

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/mail"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/state"
)

// File is the accounts file in the state directory.
const File = "users.json"

// Admin is the account made on first start.
const Admin = "admin"

// Argon2id parameters: the 12 MiB, 3-pass, 1-lane row of OWASP's password
// storage cheat sheet, which rates its rows (19 MiB and 2 passes, 12 and 3,
// 9 and 4, ...) as equal defences that trade memory for time. A BeagleBone
// Black has 512 MiB and one core, and the whole process keeps under 48 MB
// with a hash running: 19 MiB left too little room beside the binary's
// pages, the connections and the garbage collector's slack, while 12 MiB x
// 3 costs the same time (36 MiB of passes against 38). One hash is
// computed at a time (see hashSlots); a verified password is then cached
// briefly so that WebDAV, which sends the password with every request, does
// not pay for a hash each time.
const (
	argonTime    = 3
	argonMemory  = 12 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	cacheFor     = 5 * time.Minute
)

// A hash taken from the config file (SetPasswordHash) must be within these
// bounds: memory the ceiling has room for, and at most about twice the
// time of the box's own hashes, since checks run one at a time and a
// costlier hash would hold every login behind it. It is checked with its
// own parameters, as is one an earlier version made (19 MiB, 2 passes),
// until the first login replaces it with a hash of the box's (upgrade).
const (
	maxArgonMemory = 19 * 1024 // KiB
	maxArgonTime   = 10
	maxArgonCost   = 2 * argonMemory * argonTime // memory x passes
)

// unknownUserHash is checked against for a name that does not exist, at
// the cost of a real one, so that timing does not tell which names exist.
var unknownUserHash = fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	argon2.Version, argonMemory, argonTime, argonThreads)

// User is one account as stored.
type User struct {
	Name    string    `json:"name"`
	Hash    string    `json:"hash"`
	Keys    []string  `json:"keys,omitempty"` // authorized_keys lines
	Created time.Time `json:"created"`
	// Quota is the most bytes the account's files may take; 0: no limit
	// but the disk.
	Quota int64 `json:"quota,omitempty"`
	// Generated says the password is still the one the first start made
	// (and wrote to FIRST-LOGIN.txt on the card); any change clears it.
	Generated bool `json:"generated_password,omitempty"`
	// Apps are the account's app passwords (apppasswords.go).
	Apps []AppPassword `json:"app_passwords,omitempty"`
	// Email is the account's address, as its owner gave it: the calendar
	// user address (invitations name it) and the apps' account e-mail.
	Email string `json:"email,omitempty"`
	// TOTP is the two-factor login's secret (base32); "": off (totp.go).
	// TOTPStep is the last time step whose code was taken, Recovery the
	// SHA-256 digests of the recovery codes not used yet.
	TOTP     string   `json:"totp,omitempty"`
	TOTPStep int64    `json:"totp_step,omitempty"`
	Recovery []string `json:"recovery_codes,omitempty"`
	// PasskeyHandle is the account's user handle for WebAuthn (random,
	// made with its first passkey), and Passkeys its passkeys
	// (passkeys.go).
	PasskeyHandle []byte    `json:"passkey_handle,omitempty"`
	Passkeys      []Passkey `json:"passkeys,omitempty"`
}

type fileFormat struct {
	Version int     `json:"version"`
	Users   []*User `json:"users"`
}

// DB is the accounts, backed by users.json.
type DB struct {
	// Now is the clock the one-time passwords' steps are read from
	// (time.Now if nil).
	Now func() time.Time

	dir *state.Dir

	mu    sync.Mutex
	users map[string]*User
	stamp string // size and mtime of the file last read

	gone     []func(name string) // told of accounts another process deleted
	turns    Turns               // nil: each hash at once
	cacheKey [32]byte
	cache    map[string]time.Time // name + HMAC(password) + hash -> expiry
}

// Open reads the accounts in dir; a missing file means no accounts yet.
func Open(dir *state.Dir) (*DB, error) {
	db := &DB{dir: dir, cache: map[string]time.Time{}}
	rand.Read(db.cacheKey[:])
	if err := db.reload(); err != nil {
		return nil, err
	}
	return db, nil
}

// reload re-reads the file if it changed since the last read.
func (db *DB) reload() error {
	path := db.dir.Join(File)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		db.mu.Lock()
		db.users, db.stamp = map[string]*User{}, ""
		db.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	stamp := fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	db.mu.Lock()
	same := stamp == db.stamp && db.users != nil
	db.mu.Unlock()
	if same {
		return nil
	}
	b, err := db.dir.Read(File)
	if err != nil {
		return err
	}
	var f fileFormat
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 {
		return &state.Damaged{Path: path, Reason: "not a users file",
			Advice: "restore it from a backup, or delete it: an admin account with a new password is then made at the next start"}
	}
	m := map[string]*User{}
	for _, u := range f.Users {
		m[u.Name] = u
	}
	db.mu.Lock()
	var gone []string
	for name, old := range db.users {
		if u, ok := m[name]; !ok || !u.Created.Equal(old.Created) {
			gone = append(gone, name)
		}
	}
	db.users, db.stamp = m, stamp
	tell := db.gone
	db.mu.Unlock()
	for _, name := range gone {
		for _, f := range tell {
			f(name)
		}
	}
	return nil
}

// OnGone has f told the name of each account found deleted (or deleted
// and made again) when the file is read again: another process changed
// it, `bonesync user del` beside the running server. A deletion this DB
// makes itself is its caller's to tell (package accounts does).
func (db *DB) OnGone(f func(name string)) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.gone = append(db.gone, f)
}

// Since is when name's account was made: with the name, it is the
// account's identity, so that what was keyed by an account deleted (a
// share, a session) is not inherited by another made with its name. ok is
// false when there is no such account.
func (db *DB) Since(name string) (since time.Time, ok bool) {
	u, ok, err := db.lookup(name)
	if err != nil || !ok {
		return time.Time{}, false
	}
	return u.Created, true
}

// update applies change to the accounts and writes the file, holding the
// state directory's lock so that two commands never interleave.
func (db *DB) update(change func(m map[string]*User) error) error {
	unlock, err := db.dir.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	db.mu.Lock()
	db.stamp = "" // force a fresh read under the lock
	db.mu.Unlock()
	if err := db.reload(); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	m := map[string]*User{}
	for k, v := range db.users {
		c := *v
		c.Keys = append([]string(nil), v.Keys...)
		c.Apps = append([]AppPassword(nil), v.Apps...)
		c.Recovery = append([]string(nil), v.Recovery...)
		c.Passkeys = append([]Passkey(nil), v.Passkeys...)
		m[k] = &c
	}
	if err := change(m); err != nil {
		return err
	}
	f := fileFormat{Version: 1}
	for _, u := range m {
		f.Users = append(f.Users, u)
	}
	sort.Slice(f.Users, func(i, j int) bool { return f.Users[i].Name < f.Users[j].Name })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := db.dir.Write(File, append(b, '\n'), 0o600); err != nil {
		return err
	}
	db.users, db.stamp = m, ""
	return nil
}

// MaxName is the longest an account's name may be: a longer name given
// at a login cannot be anyone's.
const MaxName = 32

// ValidName reports whether name can be an account: 1 to MaxName (32)
// lower-case letters, digits, '-' or '_', starting with a letter.
func ValidName(name string) error {
	if len(name) == 0 || len(name) > MaxName {
		return fmt.Errorf("user name %q must be 1 to 32 characters", name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_')
		if !ok {
			return fmt.Errorf("user name %q: use lower-case letters, digits, '-' and '_', starting with a letter", name)
		}
	}
	return nil
}

// MinPassword is the shortest password accepted.
const MinPassword = 8

// Add makes an account.
func (db *DB) Add(name, password string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	hash, err := db.hash(password)
	if err != nil {
		return err
	}
	return db.update(func(m map[string]*User) error {
		if _, ok := m[name]; ok {
			return fmt.Errorf("user %s already exists", name)
		}
		m[name] = &User{Name: name, Hash: hash, Created: time.Now().UTC()}
		return nil
	})
}

// SetPassword changes an account's password.
func (db *DB) SetPassword(name, password string) error {
	hash, err := db.hash(password)
	if err != nil {
		return err
	}
	return db.setHash(name, hash)
}

// SetPasswordHash sets an account's password from an Argon2id hash in PHC
// form ($argon2id$v=19$m=...,t=...,p=...$SALT$HASH), as the argon2 tool
// prints it with -e; the account is made if it does not exist. The cost is
// bounded so that the board can check it (maxArgonMemory, maxArgonTime,
// maxArgonCost).
func (db *DB) SetPasswordHash(name, phc string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if err := checkPHC(phc); err != nil {
		return err
	}
	return db.update(func(m map[string]*User) error {
		if m[name] == nil {
			m[name] = &User{Name: name, Created: time.Now().UTC()}
		}
		m[name].Hash, m[name].Generated = phc, false
		return nil
	})
}

func (db *DB) setHash(name, hash string) error {
	return db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		u.Hash, u.Generated = hash, false
		return nil
	})
}

// checkPHC refuses what verify could not check, or only at a cost the
// board cannot pay.
func checkPHC(phc string) error {
	parts := strings.Split(phc, "$")
	var m, t uint32
	var p uint8
	enc := base64.RawStdEncoding
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return errors.New("not an Argon2id hash in PHC form ($argon2id$v=19$m=...,t=...,p=...$SALT$HASH)")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m < 8 || m > maxArgonMemory ||
		t < 1 || t > maxArgonTime || uint64(m)*uint64(t) > maxArgonCost || p < 1 || p > 4 {
		return fmt.Errorf("Argon2id parameters %q: m must be 8 to %d KiB, t 1 to %d, m x t at most %d, p 1 to 4",
			parts[3], maxArgonMemory, maxArgonTime, maxArgonCost)
	}
	if salt, err := enc.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return errors.New("the hash's salt is not 8 or more bytes of unpadded base64")
	}
	if sum, err := enc.DecodeString(parts[5]); err != nil || len(sum) < 16 || len(sum) > 64 {
		return errors.New("the hash is not 16 to 64 bytes of unpadded base64")
	}
	return nil
}

// SetPasswordAny takes a password or, if it starts with $argon2id$, its
// hash (SetPasswordHash); the account is made if it does not exist.
func (db *DB) SetPasswordAny(name, password string) error {
	if strings.HasPrefix(password, "$argon2id$") {
		return db.SetPasswordHash(name, password)
	}
	if !db.Exists(name) {
		return db.Add(name, password)
	}
	return db.SetPassword(name, password)
}

// Generated reports whether name's password is still the one EnsureAdmin
// made.
func (db *DB) Generated(name string) (bool, error) {
	u, ok, err := db.lookup(name)
	return ok && u.Generated, err
}

// SetQuota limits the bytes an account's files may take; 0 removes the
// limit.
func (db *DB) SetQuota(name string, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("a quota cannot be negative")
	}
	return db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		u.Quota = bytes
		return nil
	})
}

// SetEmail sets an account's e-mail address ("" removes it).
func (db *DB) SetEmail(name, email string) error {
	email = strings.TrimSpace(email)
	if email != "" {
		a, err := mail.ParseAddress(email)
		if err != nil || a.Address != email || a.Name != "" {
			return fmt.Errorf("%q is not an e-mail address", email)
		}
	}
	return db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		u.Email = email
		return nil
	})
}

// Email is an account's e-mail address; "" for none.
func (db *DB) Email(name string) string {
	u, _, _ := db.lookup(name)
	return u.Email
}

// Quota is an account's quota in bytes; 0 for none (or no such account).
func (db *DB) Quota(name string) int64 {
	u, _, _ := db.lookup(name)
	return u.Quota
}

// Delete removes an account (its files stay).
func (db *DB) Delete(name string) error {
	return db.update(func(m map[string]*User) error {
		if _, ok := m[name]; !ok {
			return fmt.Errorf("no user %s", name)
		}
		delete(m, name)
		return nil
	})
}

// AddKeys adds the public keys in authorizedKeys (authorized_keys format) to
// an account and returns how many were new. A line that is not a key is an
// error naming its line number; nothing is added then.
func (db *DB) AddKeys(name string, authorizedKeys []byte) (int, error) {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(authorizedKeys))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(l)); err != nil {
			return 0, fmt.Errorf("line %d is not a public key: %v", n, err)
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return 0, errors.New("no public key found")
	}
	added := 0
	err := db.update(func(m map[string]*User) error {
		u, ok := m[name]
		if !ok {
			return fmt.Errorf("no user %s", name)
		}
		for _, l := range lines {
			if !hasKey(u.Keys, l) {
				u.Keys = append(u.Keys, l)
				added++
			}
		}
		return nil
	})
	return added, err
}

func hasKey(keys []string, line string) bool {
	k, _, _, _, _ := ssh.ParseAuthorizedKey([]byte(line))
	for _, l := range keys {
		if o, _, _, _, err := ssh.ParseAuthorizedKey([]byte(l)); err == nil && bytes.Equal(o.Marshal(), k.Marshal()) {
			return true
		}
	}
	return false
}

// Info is what `user list` shows.
type Info struct {
	Name    string
	Keys    int
	Created time.Time
	Quota   int64
	Apps    int
}

// List returns the accounts by name.
func (db *DB) List() ([]Info, error) {
	if err := db.reload(); err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	var out []Info
	for _, u := range db.users {
		out = append(out, Info{u.Name, len(u.Keys), u.Created, u.Quota, len(u.Apps)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Exists reports whether the account exists.
func (db *DB) Exists(name string) bool {
	db.reload()
	db.mu.Lock()
	defer db.mu.Unlock()
	_, ok := db.users[name]
	return ok
}

func (db *DB) lookup(name string) (User, bool, error) {
	if err := db.reload(); err != nil {
		return User{}, false, fmt.Errorf("cannot check logins: %w", err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	u, ok := db.users[name]
	if !ok {
		return User{}, false, nil
	}
	return *u, true, nil
}

// Takes is what a login takes, as the login door's table of ways in
// says (package auth): whether an app password counts, and whether an
// account with two-factor login may log in with its own password this
// way.
type Takes struct {
	AppPasswords bool
	TwoFactor    bool
}

// Client is what a sync client's login takes: the password or an app
// password, never a two-factor account's own password alone.
var Client = Takes{AppPasswords: true}

// CheckPassword reports whether password logs name in as t says: an app
// password (checked first: they cost no hash) if t takes them, or the
// account's own, unless the account has two-factor login and t does not
// take it (then the same hash is spent, so that timing tells nothing). A
// check from a suspect address (one with failed logins, as the login
// door of package auth knows it) waits behind the others for its turn to
// hash.
//
// An error is the server's fault (its users file cannot be read): the
// login is not a failure of the client's, and the log must say why.
func (db *DB) CheckPassword(name, password string, suspect bool, t Takes) (bool, error) {
	u, ok, err := db.lookup(name)
	if err != nil {
		return false, err
	}
	if !ok {
		// Spend the same effort on unknown names, so that timing does not
		// tell which names exist.
		db.verify(unknownUserHash, password, suspect)
		return false, nil
	}
	if t.AppPasswords && u.isAppPassword(password) {
		return true, nil
	}
	if !t.TwoFactor && u.TOTP != "" {
		db.verify(unknownUserHash, password, suspect)
		return false, nil
	}
	mac := hmac.New(sha256.New, db.cacheKey[:])
	mac.Write([]byte(password))
	sum := string(mac.Sum(nil))
	key := name + "\x00" + u.Hash + "\x00" + sum
	db.mu.Lock()
	exp, hit := db.cache[key]
	db.mu.Unlock()
	if hit && time.Now().Before(exp) {
		return true, nil
	}
	if !db.verify(u.Hash, password, suspect) {
		return false, nil
	}
	key = name + "\x00" + db.upgrade(name, u.Hash, password) + "\x00" + sum
	db.mu.Lock()
	if len(db.cache) > 1000 {
		clear(db.cache)
	}
	db.cache[key] = time.Now().Add(cacheFor)
	db.mu.Unlock()
	return true, nil
}

// currentParams are the Argon2id parameters of the hashes the box makes,
// as a PHC string writes them.
var currentParams = fmt.Sprintf("m=%d,t=%d,p=%d", argonMemory, argonTime, argonThreads)

// upgrade hashes a password just verified again with the current
// parameters, if its stored hash has others (an earlier version's 19 MiB,
// or one set in the config file), so that every account converges on
// them: an unknown name then costs what a known one does, and no stored
// hash needs more memory than the ceiling has room for. It costs that one
// login a second hash and users.json one write, and ends the account's
// web sessions (their stamp is of the hash), once. A failure changes
// nothing: the old hash still serves. It returns the hash now stored.
func (db *DB) upgrade(name, old, password string) string {
	if parts := strings.Split(old, "$"); len(parts) == 6 && parts[3] == currentParams {
		return old
	}
	hash, err := db.hash(password)
	if err != nil {
		return old
	}
	replaced := false
	err = db.update(func(m map[string]*User) error {
		if u := m[name]; u != nil && u.Hash == old { // not changed meanwhile
			u.Hash, replaced = hash, true
		}
		return nil
	})
	if err != nil || !replaced {
		return old
	}
	return hash
}

// Stamp changes whenever name's password does or the account goes: a
// web session records it at login and ends when it differs.
func (db *DB) Stamp(name string) string {
	u, ok, err := db.lookup(name)
	if err != nil || !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(u.Hash + "\x00" + u.Created.String()))
	return string(sum[:8])
}

// CheckKey reports whether key is one of name's public keys; an error is
// the server's fault, as for CheckPassword.
func (db *DB) CheckKey(name string, key ssh.PublicKey) (bool, error) {
	u, ok, err := db.lookup(name)
	if err != nil || !ok {
		return false, err
	}
	want := key.Marshal()
	for _, l := range u.Keys {
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(l))
		if err == nil && subtle.ConstantTimeCompare(k.Marshal(), want) == 1 {
			return true, nil
		}
	}
	return false, nil
}

// Turns schedules the Argon2id hashes the database makes: Take waits for
// a hash's turn (a suspect one, from an address with failed logins, after
// the others) and for memory bytes of the box's memory budget, and returns
// the function that ends it. The login door's hash slots are one (package
// auth): one hash at a time, drawn from the budget, so that the memory
// ceiling holds.
type Turns interface {
	Take(suspect bool, memory int64) (release func())
}

// HashWith makes every hash of the database wait for its turn in t.
func (db *DB) HashWith(t Turns) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.turns = t
}

// turn waits for a hash's turn; memoryKiB is the hash's Argon2id memory.
func (db *DB) turn(suspect bool, memoryKiB uint32) (release func()) {
	db.mu.Lock()
	t := db.turns
	db.mu.Unlock()
	if t == nil {
		return func() {}
	}
	return t.Take(suspect, int64(memoryKiB)<<10)
}

// Hash makes an Argon2id hash of a password that is no account's (a
// public link's), as the accounts' are made, in the hashes' slot.
func (db *DB) Hash(password string) (string, error) { return db.hash(password) }

// Verify checks a password against such a hash.
func (db *DB) Verify(phc, password string, suspect bool) bool {
	return db.verify(phc, password, suspect)
}

// hash makes an Argon2id hash in the PHC string format.
func (db *DB) hash(password string) (string, error) {
	if len(password) < MinPassword {
		return "", fmt.Errorf("the password must be at least %d characters", MinPassword)
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	release := db.turn(false, argonMemory)
	sum := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	release()
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// verify checks password against a PHC Argon2id hash, with the parameters
// the hash carries.
func (db *DB) verify(phc, password string, suspect bool) bool {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	release := db.turn(suspect, m)
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	release()
	return subtle.ConstantTimeCompare(got, want) == 1
}

// EnsureAdmin makes the admin account on the very first start, with a
// generated password that is returned to be shown once and never stored in
// clear. keep (if not nil) is given the password first, before the account
// is stored, to put it where the owner reads it: a power cut between the
// two leaves no account, and the next start makes another password and
// keeps it again, so that the owner is never left with an account whose
// password was shown nowhere. keep's error is its own to report. If any
// account exists it does nothing and returns "".
func (db *DB) EnsureAdmin(keep func(password string)) (string, error) {
	if list, err := db.List(); err != nil || len(list) > 0 {
		return "", err
	}
	pw := NewPassword()
	if keep != nil {
		keep(pw)
	}
	hash, err := db.hash(pw)
	if err != nil {
		return "", err
	}
	err = db.update(func(m map[string]*User) error {
		if m[Admin] != nil {
			return fmt.Errorf("user %s already exists", Admin)
		}
		m[Admin] = &User{Name: Admin, Hash: hash, Created: time.Now().UTC(), Generated: true}
		return nil
	})
	if err != nil {
		return "", err
	}
	return pw, nil
}

// NewPassword makes a password easy to read off a serial console and type:
// four groups of five characters from an alphabet without look-alikes
// (about 98 bits).
func NewPassword() string { return readable(4, 5) }

// readableAlphabet has no look-alikes (no i, l, o, 0, 1), so that what is
// made from it can be typed from a screen.
const readableAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// readable is groups of size characters drawn evenly from
// readableAlphabet, joined by dashes.
func readable(groups, size int) string {
	var s strings.Builder
	var b [1]byte
	for n := 0; n < groups*size; {
		rand.Read(b[:])
		if int(b[0]) >= 256/len(readableAlphabet)*len(readableAlphabet) {
			continue // reject, so that every character is equally likely
		}
		if n > 0 && n%size == 0 {
			s.WriteByte('-')
		}
		s.WriteByte(readableAlphabet[int(b[0])%len(readableAlphabet)])
		n++
	}
	return s.String()
}
