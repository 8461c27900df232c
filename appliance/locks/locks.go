// Package locks is the box's table of WebDAV locks (RFC 4918 section 6),
// exclusive and shared, at depth 0 or infinity. WebDAV takes and releases
// them; every protocol that writes (WebDAV, chunk assembly, SFTP) asks the
// table before it changes a path, so a file locked by one client is not
// overwritten or deleted by another through a different door.
//
// Locks live in memory: a restart releases them, as RFC 4918 allows (a
// client that holds one sees 412 on its next conditional request and locks
// again).
package locks

import (
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/unicode/norm"
)

// Infinity is the depth of a lock on a folder and everything below it.
const Infinity = -1

// MaxTimeout bounds how long a lock lasts without a refresh: a client that
// vanishes does not keep a file from the others for longer.
const MaxTimeout = time.Hour

// Lock is one active lock.
type Lock struct {
	Token   string // opaquelocktoken:UUID
	Root    string // the locked path, cleaned, starting with "/"
	Depth   int    // 0 or Infinity
	Shared  bool
	Owner   string // the client's owner element, as XML
	Timeout time.Duration
	Expires time.Time
}

// covers reports whether p is within the lock's scope.
func (l *Lock) covers(p string) bool {
	return l.Root == p || l.Depth == Infinity && within(p, l.Root)
}

// within reports whether p is strictly below dir.
func within(p, dir string) bool {
	return dir == "/" && p != "/" || strings.HasPrefix(p, dir+"/")
}

// ErrLocked is returned when a lock is in the way.
var ErrLocked = errors.New("locked")

// MaxPerUser bounds the locks one user's files hold at once: a WebDAV
// client locks the few files it has open (an office suite, Explorer); a
// client that took 3,000 held 6.5 MB of the box's memory.
const MaxPerUser = 256

// ErrTooMany is Create's error for a user at MaxPerUser.
var ErrTooMany = fmt.Errorf("too many locks: at most %d at once on one user's files; unlock some first", MaxPerUser)

// Table holds every user's locks; paths of different users never meet.
type Table struct {
	mu    sync.Mutex
	locks map[string]map[string]*Lock // user -> token -> lock
	now   func() time.Time
}

// New returns an empty table.
func New() *Table { return &Table{locks: map[string]map[string]*Lock{}, now: time.Now} }

// Clean is the form of a path the table keys on: cleaned and in Unicode
// NFC, as the store names files, so two spellings of one name are one path.
func Clean(p string) string { return path.Clean("/" + norm.NFC.String(p)) }

func (t *Table) expire(user string) map[string]*Lock {
	m := t.locks[user]
	if m == nil {
		m = map[string]*Lock{}
		t.locks[user] = m
	}
	now := t.now()
	for tok, l := range m {
		if now.After(l.Expires) {
			delete(m, tok)
		}
	}
	return m
}

// Create takes a lock on p for user. It fails with ErrLocked if an
// exclusive lock, or any lock when an exclusive one is asked for, covers p
// or (at depth infinity) lies below it.
func (t *Table) Create(user, p string, depth int, shared bool, owner string, timeout time.Duration) (Lock, error) {
	p = Clean(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.expire(user)
	for _, l := range m {
		overlaps := l.covers(p) || depth == Infinity && within(l.Root, p)
		if overlaps && (!shared || !l.Shared) {
			return Lock{}, fmt.Errorf("%s: %w by another client", p, ErrLocked)
		}
	}
	if len(m) >= MaxPerUser {
		return Lock{}, ErrTooMany
	}
	if timeout <= 0 || timeout > MaxTimeout {
		timeout = MaxTimeout
	}
	l := &Lock{Token: newToken(), Root: p, Depth: depth, Shared: shared, Owner: owner,
		Timeout: timeout, Expires: t.now().Add(timeout)}
	m[l.Token] = l
	return *l, nil
}

// Refresh extends the lock token, which must cover p.
func (t *Table) Refresh(user, p, token string, timeout time.Duration) (Lock, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.expire(user)[token]
	if l == nil || !l.covers(Clean(p)) {
		return Lock{}, fmt.Errorf("no lock %s on %s", token, p)
	}
	if timeout <= 0 || timeout > MaxTimeout {
		timeout = MaxTimeout
	}
	l.Timeout, l.Expires = timeout, t.now().Add(timeout)
	return *l, nil
}

// Unlock releases token, which must cover p.
func (t *Table) Unlock(user, p, token string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.expire(user)
	l := m[token]
	if l == nil || !l.covers(Clean(p)) {
		return fmt.Errorf("no lock %s on %s", token, p)
	}
	delete(m, token)
	return nil
}

// Valid reports whether token is an active lock of user's that covers p.
func (t *Table) Valid(user, p, token string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.expire(user)[token]
	return l != nil && l.covers(Clean(p))
}

// On lists the locks whose scope includes p.
func (t *Table) On(user, p string) []Lock {
	p = Clean(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Lock
	for _, l := range t.expire(user) {
		if l.covers(p) {
			out = append(out, *l)
		}
	}
	return out
}

// Change describes what a request does to a path, for Check.
type Change struct {
	Path string
	// Tree: the path and everything below it go (DELETE, the source of a
	// MOVE) or are replaced (a MOVE or COPY onto a folder).
	Tree bool
	// Member: the path appears in or leaves its folder (a new file, MKCOL,
	// DELETE, MOVE), which a lock on the folder guards.
	Member bool
}

// Check returns ErrLocked unless the client submitted, for each locked
// path in the way of the changes, a token of its lock: the exclusive one,
// or one of its shared ones (RFC 4918 section 6.1). A lock is in the way
// of a change if it covers the path, lies below it (Tree), or covers its
// folder (Member).
func (t *Table) Check(user string, submitted []string, changes ...Change) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.expire(user)
	for _, c := range changes {
		p := Clean(c.Path)
		var blocking []*Lock
		for _, l := range m {
			if l.covers(p) || c.Tree && within(l.Root, p) || c.Member && p != "/" && l.covers(path.Dir(p)) {
				blocking = append(blocking, l)
			}
		}
		// Per locked path: its exclusive lock's token, or one of its
		// shared locks' tokens.
		held := map[string]bool{}
		for _, l := range blocking {
			if _, seen := held[l.Root]; !seen {
				held[l.Root] = false
			}
			if contains(submitted, l.Token) {
				held[l.Root] = true
			}
		}
		for _, ok := range held {
			if !ok {
				return fmt.Errorf("%s: %w by a WebDAV client", p, ErrLocked)
			}
		}
	}
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("opaquelocktoken:%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
