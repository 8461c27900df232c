// Package shares is sharing: a file or folder shared with another user of
// the box (read, or read and write), or by a public link (read-only,
// read-write, or a drop that takes uploads only; with a password and an
// expiry if wished), and calendars and address books shared between users.
// The book of shares is here (book.go); the store mounts a share in its
// recipient's tree and enforces its permissions for every protocol
// (store/mounts.go); the OCS files_sharing API the apps' and the desktop
// client's share menus call is package shareapi; a public link's pages
// are webui/public.go, its WebDAV (a link mounted as a folder)
// files/links.go.
//
// The book is one file, files/.bonesync/shares/shares.json, written whole
// and synced at each change. A share names its item by the owner's file id
// (it follows a rename) and the path it was last seen at.
package shares

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
)

// Kinds of share, as Nextcloud numbers them.
const (
	TypeUser = 0
	TypeLink = 3
)

// Items shared besides files and folders.
const (
	ItemFile        = "file"
	ItemFolder      = "folder"
	ItemCalendar    = "calendar"
	ItemAddressBook = "addressbook"
)

// Share is one share.
type Share struct {
	ID      int       `json:"id"`
	Type    int       `json:"type"` // TypeUser or TypeLink
	Item    string    `json:"item"` // ItemFile, ItemFolder, ItemCalendar, ItemAddressBook
	Owner   string    `json:"owner"`
	FileID  uint64    `json:"file_id,omitempty"`  // a file's or folder's
	Path    string    `json:"path"`               // "/a/b", as last seen; a collection's name
	With    string    `json:"with,omitempty"`     // the recipient (TypeUser)
	Mount   string    `json:"mount,omitempty"`    // the recipient's name for it
	Perm    int       `json:"perm"`               // rights.Set's numbers
	Token   string    `json:"token,omitempty"`    // a link's
	Hash    string    `json:"password,omitempty"` // a link's password, Argon2id
	Expires time.Time `json:"expires,omitzero"`
	Created time.Time `json:"created"`
	Label   string    `json:"label,omitempty"`
	Note    string    `json:"note,omitempty"`
	Hide    bool      `json:"hide_download,omitempty"`
	// The accounts' identities (users.DB.Since): a share is the owner's
	// and the recipient's that were, never another account made later
	// with the same name.
	OwnerSince time.Time `json:"owner_since,omitzero"`
	WithSince  time.Time `json:"with_since,omitzero"`
}

// Expired reports whether the share has passed its expiry (at the end of
// its day, as Nextcloud counts).
func (s Share) Expired(now time.Time) bool { return !s.Expires.IsZero() && !now.Before(s.Expires) }

// live reports whether s gives anything now: not past its expiry, and
// its owner and (for a user share) its recipient still have the accounts
// they had. An account deleted ends its shares (UserGone, or Reconcile
// for one another process deleted); this holds in the meantime, and holds
// against an account made again with the same name.
func (b *Book) live(s Share, now time.Time) bool {
	return !s.Expired(now) && b.same(s.Owner, s.OwnerSince) && (s.Type != TypeUser || b.same(s.With, s.WithSince))
}

// same reports whether name's account is the one made at since.
func (b *Book) same(name string, since time.Time) bool {
	at, ok := b.accounts.Since(name)
	return ok && at.Equal(since)
}

// Accounts are what the book asks of the users (users.DB).
type Accounts interface {
	Exists(name string) bool
	// Since is when name's account was made (its identity); !ok: none.
	Since(name string) (time.Time, bool)
	Hash(password string) (string, error)
}

// Files is the store as the book uses it: the owners' trees, to find what
// is shared and where a recipient's mount may go, and the recipients'
// folders that stood for a share, to take away.
type Files interface {
	Tree(user string) (*store.Tree, error)
	Unmounted(user, name string)
}

// Book is the box's shares.
type Book struct {
	file     string
	store    Files
	accounts Accounts
	log      *slog.Logger
	// Now is the clock shares are made and expire by (time.Now unless
	// set).
	Now func() time.Time
	// Told is called when a user is given a share (a notice for them),
	// Ended when a share ends (the notice goes).
	Told, Ended func(s Share)
	// CollectionExists says whether owner has the calendar or address
	// book (item) name; nil: none can be shared.
	CollectionExists func(owner, item, name string) bool
	// Audit records each share made and ended; nil: none.
	Audit *audit.Log

	mu     sync.Mutex
	next   int
	shares []Share
}

type bookFile struct {
	Next   int     `json:"next"`
	Shares []Share `json:"shares"`
}

// Open reads the book kept in dir.
func Open(dir string, st Files, accounts Accounts, log *slog.Logger) (*Book, error) {
	b := &Book{file: filepath.Join(dir, "shares.json"), store: st, accounts: accounts, log: log, Now: time.Now, next: 1}
	data, err := os.ReadFile(b.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("shares: %w", err)
	default:
		var f bookFile
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, &state.Damaged{Path: b.file, Reason: err.Error(),
				Advice: "restore it from a backup, or delete it: every share is then gone (the files stay)"}
		}
		b.next, b.shares = max(f.Next, 1), f.Shares
	}
	b.stampOld()
	return b, nil
}

// stampOld gives the shares an earlier version kept without the
// accounts' identities those of the accounts now, once.
func (b *Book) stampOld() {
	for i, s := range b.shares {
		if s.OwnerSince.IsZero() {
			b.shares[i].OwnerSince, _ = b.accounts.Since(s.Owner)
		}
		if s.Type == TypeUser && s.WithSince.IsZero() {
			b.shares[i].WithSince, _ = b.accounts.Since(s.With)
		}
	}
}

// save writes the book; the caller holds b.mu, and on an error puts
// back what it changed (the file on disk is the old one).
func (b *Book) save() error {
	if err := state.WriteJSON(b.file, bookFile{Next: b.next, Shares: b.shares}, 0o600); err != nil {
		return fmt.Errorf("%w: %w", ErrNotKept, err)
	}
	return nil
}

// ErrNotKept says the share book could not be written: the change was
// not made (a 500; the book on disk is as it was).
var ErrNotKept = errors.New("the share book could not be written")

// ErrNotFound is a share that does not exist, or not for who asks.
var ErrNotFound = errors.New("no such share")

// Request is what a new share is asked to be.
type Request struct {
	Path     string // the owner's path, or a collection's "calendars/NAME", "addressbooks/NAME"
	Item     string // for a collection: ItemCalendar or ItemAddressBook; else found from Path
	Type     int
	With     string
	Perm     int // 0: the most the kind of share allows
	Password string
	Expires  time.Time
	Label    string
	Note     string
	Upload   bool // a link that takes uploads (publicUpload)
}

// Add makes a share of owner's.
func (b *Book) Add(owner string, r Request) (Share, error) {
	if err := state.Storable("expiry", r.Expires); err != nil {
		return Share{}, err
	}
	s := Share{Type: r.Type, Owner: owner, Created: b.Now().UTC(), Expires: r.Expires, Label: r.Label, Note: r.Note, Perm: r.Perm}
	var ok bool
	if s.OwnerSince, ok = b.accounts.Since(owner); !ok {
		return Share{}, fmt.Errorf("no user %q", owner)
	}
	switch r.Item {
	case ItemCalendar, ItemAddressBook:
		s.Item, s.Path = r.Item, r.Path
		if b.CollectionExists == nil || !b.CollectionExists(owner, r.Item, r.Path) {
			return Share{}, fmt.Errorf("no %s %q to share: %w", r.Item, r.Path, fs.ErrNotExist)
		}
		if r.Type != TypeUser {
			return Share{}, errors.New("calendars and address books are shared with users, not by link")
		}
		if s.Perm == 0 || s.Perm&int(rights.Update) != 0 {
			s.Perm = int(rights.Read | rights.Update)
		}
		if r.Perm != 0 && r.Perm&int(rights.Update) == 0 {
			s.Perm = int(rights.Read)
		}
	default:
		if err := b.item(owner, r.Path, &s); err != nil {
			return Share{}, err
		}
	}
	switch r.Type {
	case TypeUser:
		if r.With == owner || !b.accounts.Exists(r.With) {
			return Share{}, fmt.Errorf("no user %q to share with", r.With)
		}
		s.With = r.With
		s.WithSince, _ = b.accounts.Since(r.With)
	case TypeLink:
		s.Token = newToken()
		if r.Upload && s.Item == ItemFolder && r.Perm == 0 {
			s.Perm = int(rights.Read | rights.Update | rights.Create | rights.Delete)
		}
		if r.Password != "" {
			h, err := b.accounts.Hash(r.Password)
			if err != nil {
				return Share{}, err
			}
			s.Hash = h
		}
	default:
		return Share{}, fmt.Errorf("share type %d: only users (0) and links (3)", r.Type)
	}
	s.Perm = fit(s.Item, s.Type, s.Perm)
	if s.Type == TypeUser && (s.Item == ItemFile || s.Item == ItemFolder) {
		s.Mount = b.freeName(s.With, path.Base(s.Path))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.Type == TypeUser {
		if slices.ContainsFunc(b.shares, func(o Share) bool {
			return o.Type == TypeUser && o.Owner == owner && o.With == s.With && o.Item == s.Item && o.FileID == s.FileID && o.Path == s.Path
		}) {
			return Share{}, fmt.Errorf("%s already has it", s.With)
		}
		if s.Mount != "" && slices.ContainsFunc(b.shares, func(o Share) bool { return o.With == s.With && o.Mount == s.Mount }) {
			return Share{}, errors.New("another share was just given that name: try again")
		}
	}
	s.ID = b.next
	b.next++
	b.shares = append(b.shares, s)
	if err := b.save(); err != nil {
		b.shares = b.shares[:len(b.shares)-1]
		return Share{}, err
	}
	if s.Type == TypeUser && b.Told != nil {
		b.Told(s)
	}
	b.audit(s.Owner, "shared "+s.describe())
	return s, nil
}

// describe is a share in a few words, for the audit log.
func (s Share) describe() string {
	what := fmt.Sprintf("%s %s", s.Item, s.Path)
	if s.Type == TypeLink {
		return what + " by a public link"
	}
	return what + " with " + s.With
}

func (b *Book) audit(user, what string) {
	if err := b.Audit.Record(audit.Event{Kind: audit.Share, User: user, What: what}); err != nil {
		b.log.Warn("share not recorded in the audit log", "err", err)
	}
}

// item fills in what owner shares at p: its kind, id and path.
func (b *Book) item(owner, p string, s *Share) error {
	tree, err := b.store.Tree(owner)
	if err != nil {
		return err
	}
	defer tree.Close()
	c, err := store.Clean(p)
	if err != nil {
		return err
	}
	if c == "." {
		return errors.New("all of one's files cannot be shared: share a folder")
	}
	if _, mounted := tree.MountAt(strings.SplitN(c, "/", 2)[0]); mounted {
		return errors.New("what was shared with you cannot be shared again")
	}
	in, err := tree.Info(c)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	s.Item, s.FileID, s.Path = ItemFile, in.FileID, "/"+c
	if in.IsDir() {
		s.Item = ItemFolder
	}
	return nil
}

// fit keeps a share's permissions to what its kind allows: a file takes
// no new files and no deletes inside; a user share always reads; a link
// that cannot read is a drop (create only).
func fit(item string, typ, perm int) int {
	all := int(rights.Read | rights.Update | rights.Create | rights.Delete)
	if perm <= 0 {
		perm = int(rights.Read)
	}
	perm &= all
	if item == ItemFile {
		perm &= int(rights.Read | rights.Update)
	}
	if typ == TypeUser || item == ItemFile || perm&int(rights.Create) == 0 {
		perm |= int(rights.Read)
	}
	if typ == TypeLink && perm&int(rights.Read) == 0 {
		perm = int(rights.Create) // a drop
	}
	return perm
}

// freeName is a name at the top of user's tree for a share of base: base,
// or "base (2)"...
func (b *Book) freeName(user, base string) string {
	tree, err := b.store.Tree(user)
	if err == nil {
		defer tree.Close()
	}
	taken := func(n string) bool {
		if _, ok := b.Mount(user, n); ok {
			return true
		}
		if tree == nil {
			return false
		}
		_, err := tree.Lstat(n)
		return err == nil
	}
	name := base
	for i := 2; taken(name); i++ {
		ext := path.Ext(base)
		if path.Ext(base) == base {
			ext = ""
		}
		name = strings.TrimSuffix(base, ext) + " (" + strconv.Itoa(i) + ")" + ext
	}
	return name
}

// newToken is a link's token: 15 letters and digits, 89 bits.
func newToken() string {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 15)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[n.Int64()]
	}
	return string(b)
}

// Change is what an update of a share sets; nil leaves it.
type Change struct {
	Perm     *int
	Password *string // "": none
	Expires  *time.Time
	Label    *string
	Note     *string
	Hide     *bool
}

// Update changes a share of owner's.
func (b *Book) Update(owner string, id int, c Change) (Share, error) {
	if c.Expires != nil {
		if err := state.Storable("expiry", *c.Expires); err != nil {
			return Share{}, err
		}
	}
	var hash *string
	if c.Password != nil {
		h := ""
		if *c.Password != "" {
			var err error
			if h, err = b.accounts.Hash(*c.Password); err != nil {
				return Share{}, err
			}
		}
		hash = &h
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.shares, func(s Share) bool { return s.ID == id && s.Owner == owner })
	if i < 0 {
		return Share{}, ErrNotFound
	}
	s := b.shares[i]
	if c.Perm != nil {
		s.Perm = fit(s.Item, s.Type, *c.Perm)
	}
	if hash != nil && s.Type == TypeLink {
		s.Hash = *hash
	}
	if c.Expires != nil {
		s.Expires = *c.Expires
	}
	if c.Label != nil {
		s.Label = *c.Label
	}
	if c.Note != nil {
		s.Note = *c.Note
	}
	if c.Hide != nil {
		s.Hide = *c.Hide
	}
	old := b.shares[i]
	b.shares[i] = s
	if err := b.save(); err != nil {
		b.shares[i] = old
		return Share{}, err
	}
	return s, nil
}

// Remove ends a share: its owner revokes it, or its recipient leaves it.
func (b *Book) Remove(user string, id int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.shares, func(s Share) bool { return s.ID == id && (s.Owner == user || s.With == user) })
	if i < 0 {
		return ErrNotFound
	}
	s := b.shares[i]
	b.shares = slices.Delete(b.shares, i, i+1)
	if err := b.save(); err != nil {
		b.shares = slices.Insert(b.shares, i, s)
		return err
	}
	if s.Mount != "" {
		b.store.Unmounted(s.With, s.Mount)
	}
	if b.Ended != nil {
		b.Ended(s)
	}
	b.log.Info("share ended", "id", s.ID, "owner", s.Owner, "with", s.With, "path", s.Path, "by", user)
	b.audit(user, "ended the share of "+s.describe())
	return nil
}

// Get is a share its owner or recipient asks for.
func (b *Book) Get(user string, id int) (Share, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.shares {
		if s.ID == id && (s.Owner == user || s.With == user) {
			return s, nil
		}
	}
	return Share{}, ErrNotFound
}

// By is owner's shares, oldest first.
func (b *Book) By(owner string) []Share {
	return b.filter(func(s Share) bool { return s.Owner == owner })
}

// With is the shares user receives, live ones only.
func (b *Book) With(user string) []Share {
	now := b.Now()
	return b.filter(func(s Share) bool { return s.Type == TypeUser && s.With == user && b.live(s, now) })
}

func (b *Book) filter(keep func(Share) bool) []Share {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Share
	for _, s := range b.shares {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// Link is the live link with the token.
func (b *Book) Link(token string) (Share, bool) {
	now := b.Now()
	for _, s := range b.filter(func(s Share) bool { return s.Type == TypeLink && s.Token == token }) {
		if b.live(s, now) {
			return s, true
		}
	}
	return Share{}, false
}

// PublicLink is the live link with the token as its WebDAV opens it
// (package files): what it shares, as a mount, and its password's hash
// ("": none).
func (b *Book) PublicLink(token string) (store.Mount, string, bool) {
	s, ok := b.Link(token)
	if !ok {
		return store.Mount{}, "", false
	}
	return mountOf(s), s.Hash, true
}

// Types are the kinds of share owner has made of each file id: the
// oc:share-types a listing shows.
func (b *Book) Types(owner string) map[uint64][]int {
	out := map[uint64][]int{}
	for _, s := range b.By(owner) {
		if s.FileID != 0 && !slices.Contains(out[s.FileID], s.Type) {
			out[s.FileID] = append(out[s.FileID], s.Type)
		}
	}
	return out
}

// Collections are the calendars or address books (item) shared with
// user, live ones.
func (b *Book) Collections(user, item string) []Share {
	return b.filter(func(s Share) bool {
		return s.Type == TypeUser && s.With == user && s.Item == item && b.live(s, b.Now())
	})
}

// The book as the store asks it (store.Mounts): the files and folders a
// user receives, mounted at the top of their tree.

func mountOf(s Share) store.Mount {
	return store.Mount{ID: strconv.Itoa(s.ID), Name: s.Mount, Owner: s.Owner, FileID: s.FileID, Path: s.Path, Perm: rights.Set(s.Perm)}
}

// Mounts are the files and folders user receives.
func (b *Book) Mounts(user string) []store.Mount {
	var out []store.Mount
	for _, s := range b.With(user) {
		if s.Mount != "" {
			out = append(out, mountOf(s))
		}
	}
	return out
}

// Mount is the share user receives under name.
func (b *Book) Mount(user, name string) (store.Mount, bool) {
	now := b.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.shares {
		if s.Type == TypeUser && s.With == user && s.Mount == name && b.live(s, now) {
			return mountOf(s), true
		}
	}
	return store.Mount{}, false
}

// Renamed gives user's mount id a new name.
func (b *Book) Renamed(user, id, name string) error {
	n, _ := strconv.Atoi(id)
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.shares, func(s Share) bool { return s.ID == n && s.With == user })
	if i < 0 {
		return ErrNotFound
	}
	old := b.shares[i].Mount
	b.shares[i].Mount = name
	if err := b.save(); err != nil {
		b.shares[i].Mount = old
		return err
	}
	return nil
}

// Left ends user's share id: they removed it from their files.
func (b *Book) Left(user, id string) error {
	n, _ := strconv.Atoi(id)
	return b.Remove(user, n)
}

// UserGone ends the shares of name's deleted account, links among them
// (accounts.Part): every share that is no longer its accounts', which
// holds no share of an account made since with that name. An error is a
// book that could not be written: those shares stay dead all the same.
func (b *Book) UserGone(string) error { return b.endDead() }

// Reconcile is UserGone for every account deleted while no server saw it
// (`bonesync user del` with the server stopped), at start.
func (b *Book) Reconcile(func(string) bool) error { return b.endDead() }

// endDead removes, as their owners would, the shares whose owner's or
// recipient's account is not the one they were made with.
func (b *Book) endDead() error {
	var errs []error
	for _, s := range b.filter(func(s Share) bool {
		return !b.same(s.Owner, s.OwnerSince) || (s.Type == TypeUser && !b.same(s.With, s.WithSince))
	}) {
		errs = append(errs, b.Remove(s.Owner, s.ID))
	}
	return errors.Join(errs...)
}

// Expire ends the shares past their expiry (their recipients' empty
// folders and notices go), and returns how many.
func (b *Book) Expire() int {
	now := b.Now()
	gone := b.filter(func(s Share) bool { return s.Expired(now) })
	for _, s := range gone {
		b.Remove(s.Owner, s.ID)
	}
	return len(gone)
}

// ExpireEvery ends the shares past their expiry a minute after it is
// called and then every interval, until ctx ends.
func (b *Book) ExpireEvery(ctx context.Context, every time.Duration) {
	clock.Every(ctx, time.Minute, every, func() {
		if n := b.Expire(); n > 0 {
			b.log.Info("shares past their expiry ended", "count", n)
		}
	})
}

// LinkPath is a link's page.
func LinkPath(token string) string { return "/index.php/s/" + token }
