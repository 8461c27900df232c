// Package calendars keeps the users' calendars and address books and
// serves them over CalDAV (RFC 4791) and CardDAV (RFC 6352), with
// github.com/emersion/go-webdav doing most of the protocol and this
// package what it lacks: collection tags (getctag), sync-collection
// (RFC 6578), validation before anything is stored, the Nextcloud paths.
//
// On disk (store.go) each collection is a directory beside the users'
// files, which neither WebDAV's file tree nor SFTP reach:
//
//	FILES/.calendars/USER/calendars/NAME/collection.json   name, components, change count
//	FILES/.calendars/USER/calendars/NAME/changes           one line per change: SEQ put|del OBJECT
//	FILES/.calendars/USER/calendars/NAME/OBJECT.ics        as received, re-encoded
//	FILES/.calendars/USER/addressbooks/NAME/...            the same, OBJECT.vcf
//
// Every write is atomic (a temporary file, fsync, rename, fsync of the
// directory), then the change is logged and counted: a power cut loses at
// most the change being made, and the next write counts on from the log.
package calendars

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav/caldav"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/precond"
	"github.com/bonesync/bonesync/appliance/state"
)

// Kind is the kind of collection: a calendar or an address book.
type Kind string

const (
	Calendars    Kind = "calendars"
	AddressBooks Kind = "addressbooks"
)

func (k Kind) ext() string {
	if k == Calendars {
		return ".ics"
	}
	return ".vcf"
}

// Default collections, made on first use.
const (
	DefaultCalendar    = "personal"
	DefaultAddressBook = "contacts"
)

// Errors a request maps to a status or an RFC precondition.
var (
	ErrNotFound     = errors.New("not found")
	ErrExists       = errors.New("already exists")
	ErrPrecondition = errors.New("the resource changed (If-Match or If-None-Match)")
	ErrUIDConflict  = errors.New("another object in the collection has this UID")
	ErrTooLarge     = errors.New("larger than the collection takes")
	ErrTooMany      = errors.New("the collection is full")
	ErrBadToken     = errors.New("not a sync token of this collection")
	// ErrNoRoom wraps Room's refusals: the owner's quota, which their
	// files share, or the disk.
	ErrNoRoom = errors.New("no room")
)

// Limits bound what a user can store.
type Limits struct {
	Object      int64 // bytes per object
	Objects     int   // objects per collection
	Collections int   // collections of a kind per user
}

// DefaultLimits fit a phone's calendar of many years on the board.
var DefaultLimits = Limits{Object: 1 << 20, Objects: 20000, Collections: 50}

// Store is the collections of every user.
type Store struct {
	dir    string
	Limits Limits
	// Sharing says what collections are shared with whom (package
	// shares); nil: nothing is.
	Sharing Sharing
	// Room says why user's objects may not grow by grow more bytes, given
	// what their calendars and address books take (used): the quota they
	// share with the user's files, or the disk's free space ("": they
	// may; accounts.Room). nil: only Limits bound them.
	Room func(user string, used, grow int64) (why string, err error)
	// Memory is the box's budget, from which every parse of an object and
	// every answer that reads objects draws its estimate before it starts
	// (memory.go); nil: unbounded (the command-line tools, tests).
	Memory  *budget.Budget
	mu      sync.Mutex           // writes, box-wide: they are small and rare
	uids    map[string]*uidIndex // by collection directory
	usageMu sync.Mutex
	usage   map[string]counted // Usage, kept between counts
}

// counted is a user's usage as last counted, with the puts since.
type counted struct {
	bytes int64
	at    time.Time
}

// countEvery is how often a user's usage is counted again from the disk
// (between counts, each put adds what it grew).
const countEvery = time.Minute

// Open returns the store under files (the users' file store's directory).
func Open(files string) (*Store, error) {
	dir := filepath.Join(files, ".calendars")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("calendars: %w", err)
	}
	s := &Store{dir: dir, Limits: DefaultLimits, uids: map[string]*uidIndex{}}
	s.own(dir)
	return s, nil
}

// Collection is one calendar or address book.
type Collection struct {
	Kind        Kind     `json:"-"`
	User        string   `json:"-"`
	Name        string   `json:"-"`
	DisplayName string   `json:"displayname,omitempty"`
	Description string   `json:"description,omitempty"`
	Color       string   `json:"color,omitempty"`      // as the client gave it: "#RRGGBB" or "#RRGGBBAA"
	Order       string   `json:"order,omitempty"`      // its place among the user's calendars, a number as text
	Components  []string `json:"components,omitempty"` // VEVENT, VTODO; calendars only
	Seq         int64    `json:"seq"`                  // changes so far: the ctag and sync token
	// ID tells this collection from one made later under the same name:
	// a token of the old one must not pass for the new one's.
	ID string `json:"id"`
	// A collection shared with User: its owner, and whether User may only
	// read it (shared.go).
	owner    string
	readOnly bool
}

// Tag is the collection's state as getctag and its ETag give it.
func (c *Collection) Tag() string { return fmt.Sprintf("%s-%d", c.ID, c.Seq) }

const tokenPrefix = "http://bonesync.invalid/ns/sync/"

// Token is the RFC 6578 sync token (a URI) for change number seq.
func (c *Collection) Token(seq int64) string {
	return tokenPrefix + c.ID + "/" + strconv.FormatInt(seq, 10)
}

// ParseToken reads a client's token: 0 for none, false for one that is
// not this collection's.
func (c *Collection) ParseToken(tok string) (int64, bool) {
	if tok == "" {
		return 0, true
	}
	rest, ok := strings.CutPrefix(tok, tokenPrefix+c.ID+"/")
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, ok && err == nil && n >= 0
}

// Object is one event, task or contact as stored.
type Object struct {
	Name    string // OBJECT.ics
	Data    []byte
	ETag    string
	ModTime time.Time
}

// ValidName is a user's or collection's name, or an object's file name:
// no path, not hidden, no control characters.
func ValidName(n string) bool {
	if n == "" || len(n) > 255 || strings.HasPrefix(n, ".") || strings.ContainsAny(n, "/\\") {
		return false
	}
	for _, r := range n {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func (s *Store) collDir(k Kind, user, name string) (string, error) {
	if !ValidName(user) || !ValidName(name) || (k != Calendars && k != AddressBooks) {
		return "", ErrNotFound
	}
	return filepath.Join(s.dir, user, string(k), name), nil
}

// Collections lists a user's collections of kind k.
func (s *Store) Collections(k Kind, user string) ([]Collection, error) {
	if !ValidName(user) {
		return nil, ErrNotFound
	}
	ents, err := os.ReadDir(filepath.Join(s.dir, user, string(k)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Collection
	for _, e := range ents {
		if !e.IsDir() || !ValidName(e.Name()) {
			continue
		}
		c, err := s.Collection(k, user, e.Name())
		if err != nil {
			continue
		}
		out = append(out, *c)
	}
	return out, nil
}

// Collection reads one collection's description.
func (s *Store) Collection(k Kind, user, name string) (*Collection, error) {
	dir, err := s.collDir(k, user, name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "collection.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c := &Collection{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s/collection.json: %w", dir, err)
	}
	c.Kind, c.User, c.Name = k, user, name
	c.Seq = max(c.Seq, lastLogged(dir))
	return c, nil
}

// Describe changes a collection's description (name, colour...) with
// change, and keeps it.
func (s *Store) Describe(k Kind, user, name string, change func(*Collection)) error {
	dir, err := s.collDir(k, user, name)
	if err != nil {
		return err
	}
	unlock, err := s.lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	c, err := s.Collection(k, user, name)
	if err != nil {
		return err
	}
	change(c)
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("describe %s: encode collection.json: %w", dir, err)
	}
	return s.write(filepath.Join(dir, "collection.json"), b)
}

// Create makes a collection.
func (s *Store) Create(c Collection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, err := s.collDir(c.Kind, c.User, c.Name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err == nil {
		return ErrExists
	}
	have, _ := s.Collections(c.Kind, c.User)
	if len(have) >= s.Limits.Collections {
		return ErrTooMany
	}
	tmp := filepath.Join(filepath.Dir(dir), ".new-"+c.Name)
	os.RemoveAll(tmp)
	if err := s.mkdir(tmp); err != nil {
		return err
	}
	c.Seq = 0
	var id [8]byte
	rand.Read(id[:])
	c.ID = hex.EncodeToString(id[:])
	b, err := json.Marshal(c)
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("create %s: encode collection.json: %w", dir, err)
	}
	if err := s.write(filepath.Join(tmp, "collection.json"), b); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	return state.SyncDir(filepath.Dir(dir))
}

// EnsureDefault makes the default collection of kind k for a user who has
// none.
func (s *Store) EnsureDefault(k Kind, user string) error {
	if !ValidName(user) {
		return ErrNotFound
	}
	// Once only: a user who deletes the default does not get it back,
	// and a request costs one stat.
	made := filepath.Join(s.dir, user, "."+string(k)+"-made")
	if _, err := os.Stat(made); err == nil {
		return nil
	}
	have, err := s.Collections(k, user)
	if err != nil {
		return err
	}
	if len(have) > 0 {
		return s.write(made, nil)
	}
	c := Collection{Kind: k, User: user, Name: DefaultAddressBook, DisplayName: "Contacts"}
	if k == Calendars {
		c.Name, c.DisplayName, c.Components = DefaultCalendar, "Personal", []string{"VEVENT", "VTODO"}
	}
	if err := s.Create(c); err != nil && !errors.Is(err, ErrExists) {
		return err
	}
	return s.write(made, nil)
}

// DeleteCollectionIf removes a whole collection if its ETag (the quoted
// Tag) meets the conditions.
func (s *Store) DeleteCollectionIf(k Kind, user, name string, cond Conditions) error {
	c, err := s.Collection(k, user, name)
	if err != nil {
		return err
	}
	if err := holds(cond, &Object{ETag: c.Tag()}); err != nil {
		return err
	}
	return s.DeleteCollection(k, user, name)
}

// Delete removes a whole collection.
func (s *Store) DeleteCollection(k Kind, user, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, err := s.collDir(k, user, name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return ErrNotFound
	}
	gone := filepath.Join(filepath.Dir(dir), ".deleted-"+name)
	os.RemoveAll(gone)
	if err := os.Rename(dir, gone); err != nil {
		return err
	}
	delete(s.uids, dir)
	// The rename is done: gone goes whatever the sync says, then the
	// sync's error is told (the collection may come back after a cut).
	return errors.Join(os.RemoveAll(gone), state.SyncDir(filepath.Dir(dir)))
}

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// Objects lists a collection's objects with their data.
func (s *Store) Objects(k Kind, user, name string) ([]Object, error) {
	dir, err := s.collDir(k, user, name)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var out []Object
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), k.ext()) || !ValidName(e.Name()) {
			continue
		}
		o, err := s.readObject(dir, e.Name())
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, *o)
	}
	return out, nil
}

// Object reads one object.
func (s *Store) Object(k Kind, user, coll, name string) (*Object, error) {
	dir, err := s.collDir(k, user, coll)
	if err != nil || !ValidName(name) {
		return nil, ErrNotFound
	}
	return s.readObject(dir, name)
}

func (s *Store) readObject(dir, name string) (*Object, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, ErrNotFound
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, err
	}
	return &Object{Name: name, Data: b, ETag: etag(b), ModTime: st.ModTime()}, nil
}

// Conditions are a request's conditional headers (package precond: the
// files' DAV evaluates them alike).
type Conditions = precond.Conditions

// holds says whether cond holds for cur (nil: no such object).
func holds(cond Conditions, cur *Object) error {
	ok := cond.Hold(false, "", time.Time{})
	if cur != nil {
		ok = cond.Hold(true, cur.ETag, cur.ModTime)
	}
	if !ok {
		return ErrPrecondition
	}
	return nil
}

// Put stores data (already validated) as object name with the given UID.
// It refuses a UID that another object of the collection has, and
// anything past the limits; it reports whether the object is new.
func (s *Store) Put(k Kind, user, coll, name, uid string, data []byte, cond Conditions) (*Object, bool, error) {
	dir, err := s.collDir(k, user, coll)
	if err != nil || !ValidName(name) || !strings.HasSuffix(name, k.ext()) {
		return nil, false, ErrNotFound
	}
	if int64(len(data)) > s.Limits.Object {
		return nil, false, ErrTooLarge
	}
	// The room is asked before the lock is taken (it counts the user's
	// files, which may take a while), for what the object would grow by
	// as it is now; a put racing it grows the count a little past.
	if err := s.room(user, filepath.Join(dir, name), int64(len(data))); err != nil {
		return nil, false, err
	}
	unlock, err := s.lock(dir)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	cur, err := s.readObject(dir, name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, false, err
	}
	if err := holds(cond, cur); err != nil {
		return nil, false, err
	}
	idx, err := s.index(dir, k)
	if err != nil {
		return nil, false, err
	}
	if other, ok := idx.m[uid]; ok && other != name {
		return nil, false, ErrUIDConflict
	}
	if cur == nil && idx.objects >= s.Limits.Objects {
		return nil, false, ErrTooMany
	}
	grow := int64(len(data))
	if cur != nil {
		grow -= int64(len(cur.Data))
	}
	// Logged first, then written: a cut between the two reports a change
	// that did not happen (the client compares the ETag and finds it the
	// same), never hides one that did.
	seq, err := s.logChange(dir, "put", name)
	if err != nil {
		delete(s.uids, dir)
		return nil, false, err
	}
	if err := s.write(filepath.Join(dir, name), data); err != nil {
		delete(s.uids, dir)
		return nil, false, err
	}
	for u, n := range idx.m {
		if n == name {
			delete(idx.m, u)
		}
	}
	idx.m[uid] = name
	if cur == nil {
		idx.objects++
	}
	s.usageMu.Lock()
	if c, ok := s.usage[user]; ok {
		c.bytes += grow
		s.usage[user] = c
	}
	s.usageMu.Unlock()
	idx.seq = seq
	o, err := s.readObject(dir, name)
	return o, cur == nil, err
}

// Delete removes an object.
func (s *Store) Delete(k Kind, user, coll, name string, cond Conditions) error {
	dir, err := s.collDir(k, user, coll)
	if err != nil || !ValidName(name) || !strings.HasSuffix(name, k.ext()) {
		return ErrNotFound
	}
	unlock, err := s.lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := s.readObject(dir, name)
	if err != nil {
		return err
	}
	if err := holds(cond, cur); err != nil {
		return err
	}
	idx, err := s.index(dir, k)
	if err != nil {
		return err
	}
	seq, err := s.logChange(dir, "del", name)
	if err == nil {
		err = os.Remove(filepath.Join(dir, name))
	}
	if err == nil {
		err = state.SyncDir(dir)
	}
	if err != nil {
		delete(s.uids, dir)
		return err
	}
	for u, n := range idx.m {
		if n == name {
			delete(idx.m, u)
		}
	}
	idx.objects--
	idx.seq = seq
	return nil
}

// lock serialises the writes to one collection, in this process (mu) and
// across processes (an flock on its folder: bonesync restore may run
// beside the server).
func (s *Store) lock(dir string) (func(), error) {
	s.mu.Lock()
	d, err := os.Open(dir)
	if err != nil {
		s.mu.Unlock()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		d.Close()
		s.mu.Unlock()
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "collection.json")); err != nil {
		d.Close()
		s.mu.Unlock()
		return nil, ErrNotFound
	}
	return func() { d.Close(); s.mu.Unlock() }, nil
}

// uidIndex maps the UIDs of a collection's objects to their names, as of
// change number seq, and counts the objects.
type uidIndex struct {
	seq     int64
	m       map[string]string
	objects int
}

// index returns a collection's UID index: read once, kept up to date by
// Put and Delete, read again if another process (bonesync restore) changed
// the collection. Each object's UID is the one its kind's parser gives
// (objectUID), as Put is given it.
func (s *Store) index(dir string, k Kind) (*uidIndex, error) {
	seq := s.seqOf(dir)
	if idx, ok := s.uids[dir]; ok && idx.seq == seq {
		return idx, nil
	}
	idx := &uidIndex{seq: seq, m: map[string]string{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), k.ext()) || !ValidName(e.Name()) {
			continue
		}
		idx.objects++
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if uid := objectUID(k, e.Name(), b); uid != "" {
			idx.m[uid] = e.Name()
		}
	}
	s.uids[dir] = idx
	return idx, nil
}

// seqOf is a collection's change count: the log's, or collection.json's
// if the log was lost.
func (s *Store) seqOf(dir string) int64 {
	var c Collection
	if b, err := os.ReadFile(filepath.Join(dir, "collection.json")); err == nil {
		json.Unmarshal(b, &c)
	}
	return max(c.Seq, lastLogged(dir))
}

// logChange appends a change to the log and counts it in collection.json;
// it returns the change's number. Names are escaped in the log; a line a
// power cut left torn is ended first.
func (s *Store) logChange(dir, op, name string) (int64, error) {
	c := Collection{}
	b, err := os.ReadFile(filepath.Join(dir, "collection.json"))
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return 0, err
	}
	seq := max(c.Seq, lastLogged(dir)) + 1
	f, err := os.OpenFile(filepath.Join(dir, "changes"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	s.own(f.Name())
	line := fmt.Sprintf("%d %s %s\n", seq, op, url.PathEscape(name))
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			line = "\n" + line
		}
	}
	_, err = io.WriteString(f, line)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	c.Seq = seq
	if b, err = json.Marshal(c); err != nil {
		return 0, fmt.Errorf("log a change in %s: encode collection.json: %w", dir, err)
	}
	return seq, s.write(filepath.Join(dir, "collection.json"), b)
}

// lastLogged is the sequence number of the last complete line of the log.
func lastLogged(dir string) int64 {
	f, err := os.Open(filepath.Join(dir, "changes"))
	if err != nil {
		return 0
	}
	defer f.Close()
	st, _ := f.Stat()
	off := max(0, st.Size()-4096)
	buf := make([]byte, st.Size()-off)
	f.ReadAt(buf, off)
	lines := strings.Split(string(buf), "\n")
	for i := len(lines) - 2; i >= 0; i-- { // the last element follows the last newline
		if fl := strings.Fields(lines[i]); len(fl) == 3 {
			if n, err := strconv.ParseInt(fl[0], 10, 64); err == nil {
				return n
			}
		}
	}
	return 0
}

// Changes lists what changed in a collection after change number since:
// the objects there now and those gone, names sorted, and the number now.
// Whether a name counts as put or deleted is decided by the file, not by
// the logged operation (a cut may fall between the two).
func (s *Store) Changes(k Kind, user, coll string, since int64) (put, deleted []string, now int64, err error) {
	c, err := s.Collection(k, user, coll)
	if err != nil {
		return nil, nil, 0, err
	}
	dir, _ := s.collDir(k, user, coll)
	now = c.Seq
	if since < 0 || since > now {
		return nil, nil, now, ErrBadToken
	}
	if since == 0 { // the first sync: everything there is
		objs, err := s.Objects(k, user, coll)
		for _, o := range objs {
			put = append(put, o.Name)
		}
		sort.Strings(put)
		return put, nil, now, err
	}
	changed := map[string]bool{}
	f, err := os.Open(filepath.Join(dir, "changes"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, 0, err
	}
	if f != nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) != 3 {
				continue // a line a power cut tore
			}
			n, err1 := strconv.ParseInt(fl[0], 10, 64)
			name, err2 := url.PathUnescape(fl[2])
			if err1 == nil && err2 == nil && n > since && ValidName(name) {
				changed[name] = true
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, nil, 0, err
		}
	}
	for name := range changed {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			put = append(put, name)
		} else {
			deleted = append(deleted, name)
		}
	}
	sort.Strings(put)
	sort.Strings(deleted)
	return put, deleted, now, nil
}

// write replaces a file atomically (state.WriteFile: a temporary file,
// fsync, rename, fsync of the folder), owned as the store is.
func (s *Store) write(name string, b []byte) error {
	return state.WriteFile(name, b, 0o600)
}

// mkdir makes dir and the folders above it up to the store's, owned as
// the store's own folder is: `sudo bonesync restore` on a Debian install
// must leave them the service's.
func (s *Store) mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	s.own(dir)
	return nil
}

// own gives path, and the folders between it and the file store's, the
// file store's owner (the service's user) when running as root.
func (s *Store) own(path string) {
	if os.Geteuid() != 0 {
		return
	}
	files := filepath.Dir(s.dir)
	fi, err := os.Stat(files)
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 && st.Gid == 0 {
		return
	}
	for p := path; strings.HasPrefix(p, files+string(filepath.Separator)); p = filepath.Dir(p) {
		os.Lchown(p, int(st.Uid), int(st.Gid))
	}
}

// objectUID is the UID of a stored object as Put is given it: the parsed
// (unescaped) UID of an iCalendar object, a vCard's UID or, for a vCard
// without one, its file name.
func objectUID(k Kind, name string, b []byte) string {
	if k == Calendars {
		cal, err := decodeCalendar(b)
		if err != nil {
			return ""
		}
		_, uid, _ := caldav.ValidateCalendarObject(cal)
		return uid
	}
	card, err := decodeCard(b)
	if err != nil {
		return ""
	}
	return cardUID(card, name)
}

// cardUID is a vCard's identity in its collection: its UID, or its name.
func cardUID(card vcard.Card, name string) string {
	if uid := card.Value(vcard.FieldUID); uid != "" {
		return uid
	}
	return "name:" + name
}

// Owners are the users with calendars or address books here, with an
// account or not.
func (s *Store) Owners() []string {
	entries, _ := os.ReadDir(s.dir)
	var names []string
	for _, e := range entries {
		if e.IsDir() && ValidName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

// room asks Room whether user's object at path may be size bytes.
func (s *Store) room(user, path string, size int64) error {
	if s.Room == nil {
		return nil
	}
	grow := size
	if fi, err := os.Stat(path); err == nil {
		grow -= fi.Size()
	}
	if grow <= 0 {
		return nil
	}
	used, err := s.Used(user)
	if err != nil {
		return err
	}
	why, err := s.Room(user, used, grow)
	if err == nil && why != "" {
		err = fmt.Errorf("%w: %s", ErrNoRoom, why)
	}
	return err
}

// Used is Usage as Put counts it: from the disk at most once every
// countEvery, with each put's growth added between (the files' quota,
// read on every request, counts it). It takes no lock a write holds.
func (s *Store) Used(user string) (int64, error) {
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	if c, ok := s.usage[user]; ok && time.Since(c.at) < countEvery {
		return c.bytes, nil
	}
	n, err := s.Usage(user)
	if err != nil {
		return 0, err
	}
	if s.usage == nil || len(s.usage) > 1000 {
		s.usage = map[string]counted{}
	}
	s.usage[user] = counted{n, time.Now()}
	return n, nil
}

// Usage is the bytes a user's calendars and address books take.
func (s *Store) Usage(user string) (int64, error) {
	if !ValidName(user) {
		return 0, ErrNotFound
	}
	var n int64
	err := filepath.WalkDir(filepath.Join(s.dir, user), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

// RemoveOwner removes every calendar and address book of user, a user
// with no account.
func (s *Store) RemoveOwner(user string) error {
	if !ValidName(user) {
		return ErrNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Join(s.dir, user)
	for d := range s.uids {
		if strings.HasPrefix(d, dir+string(filepath.Separator)) {
			delete(s.uids, d)
		}
	}
	return os.RemoveAll(dir)
}
