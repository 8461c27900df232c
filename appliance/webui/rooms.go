package webui

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/pquerna/otp"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// The pages are served by rooms, one handler type per group of pages, each
// holding only what its pages use, as interfaces the real parts satisfy
// (wired in server.web): Login (the login form, its code, the login
// flows), Files (the file manager, the trash, search), Photos, Sharing,
// Account (password, app passwords, two-factor login, connecting apps),
// Public (the public links' pages) and Admin. What they share, the page
// frame (templates, assets, render) and a page's common data, is Common,
// which each holds; Common serves the assets and the notices' dismissal.

// Common is what every room holds: the pages' templates and assets, the
// log and the notices shown at the top of the pages. Set its fields, then
// mount it with the rooms.
type Common struct {
	Log *slog.Logger
	// Notices are shown at the top of the pages; nil: none.
	Notices *notices.Board
	// Audit is the owner's record of logins and changes, written to by
	// the account's and the admin's actions.
	Audit *audit.Log

	once   sync.Once
	pages  pages
	static map[string]staticFile
}

// Routes adds the assets, anyone's, and the notices' dismissal.
func (u *Common) Routes(rs *front.Routes) {
	u.init()
	rs.Public("GET /ui/{name}", func(w http.ResponseWriter, r *http.Request) {
		f, ok := u.static[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.typ)
		if r.URL.Query().Get("v") == f.tag {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
	})
	rs.Handle(auth.Page, "POST /notices", u.dismiss)
}

// WaysIn are the ways in that the pages take themselves, the one way the
// rooms reach the login door (package auth): the login form's password
// (auth.Form: a two-factor account's right one is auth.NeedsCode) and
// code, a password typed again on a logged-in page (auth.Retyped), a
// public link's password, how long a refused one waits, and the sessions
// a login starts, ends or renews. They are logins, not access checks:
// who a request comes from is the front's to find, by the access its
// route declared (auth.Door.Check), and no room asks it of the door.
// Login, Account and Public hold it.
type WaysIn interface {
	Password(addr string, way auth.Way, user, pw string) auth.Result
	Code(addr, user, code string) auth.Result
	LinkPassword(addr, token, hash, pw string) auth.Result
	RetryAfter(addr, user string) time.Duration
	LinkRetryAfter(addr, token string) time.Duration
	Sessions() *auth.Sessions
	// Passkey is a passkey's answer to a sign-in (auth.Door.Passkey).
	Passkey(addr, host, token, user string, answer []byte) (string, auth.Result)
}

// Passkeys are the passkeys' ceremonies (package passkeys): a sign-in's
// options (its answer is WaysIn's, a login), and the making of one.
// host is always the request's Host, the name a passkey is made for and
// works at.
type Passkeys interface {
	Has(host, user string) bool
	BeginSignIn(addr, host, user string) (options []byte, token string, err error)
	BeginRegistration(addr, host, user string) (options []byte, token string, err error)
	FinishRegistration(host, user, token, name string, answer []byte) error
}

// AppPasswords makes the app passwords an app connects with (package
// users).
type AppPasswords interface {
	NewAppPassword(name, label string) (string, users.AppPassword, error)
}

// Login is the login form and its code, the logout, and the Nextcloud
// login flows that let an app connect through a browser.
type Login struct {
	*Common
	WaysIn   WaysIn
	Apps     AppPasswords
	Passkeys Passkeys
	// OnBoard: the box runs on its board, where the first password is on
	// the console and the card.
	OnBoard bool

	flows loginFlows
	codes pendings
}

// Routes adds the login form, anyone's; the logout, a session's; the
// login flows' pages.
func (u *Login) Routes(rs *front.Routes) {
	rs.Handle(auth.Optional, "GET "+LoginPage, u.loginPage)
	rs.Public("POST "+LoginPage, u.loginPost)
	rs.Public("POST "+LoginPage+"/code", u.codePost)
	rs.Public("POST "+LoginPage+"/passkey/begin", u.passkeyBegin)
	rs.Public("POST "+LoginPage+"/passkey", u.passkeyPost)
	rs.Handle(auth.Page, "POST /logout", u.logout)
	u.flowRoutes(rs)
}

// Trees opens a user's files (package store).
type Trees interface {
	Tree(user string) (*store.Tree, error)
}

// fileTree is what the pages do with one user's files, or a link's (a
// *store.Tree).
type fileTree interface {
	Info(p string) (store.Info, error)
	Lstat(p string) (fs.FileInfo, error)
	ReadDir(p string) ([]fs.FileInfo, error)
	Open(p string) (store.File, error)
	OpenDir(p string) (store.File, error)
	InfoIn(dir store.File, base string) (in store.Info, ok bool, err error)
	Find(id uint64) (string, store.Info, error)
	Walk(p string, fn func(p string, in store.Info) error) error
	Size(p string) (int64, error)
	Create(p string, keep bool) (*store.Upload, error)
	Mkdir(p string) error
	Bin() store.Bin
	Quota() int64
	Usage() (int64, error)
	Close() error
}

// Quotas are the users' quotas (package users).
type Quotas interface {
	Quota(name string) int64
}

// FileStore is the store as the file pages ask it.
type FileStore interface {
	Trees
	TrashKeep() time.Duration
}

// NameSearch finds files and folders by name, as WebDAV's SEARCH does
// (package files).
type NameSearch interface {
	FindByName(tree *store.Tree, under, term string, limit int) ([]string, []store.Info, error)
}

// Files is the file manager, the trash and version history, search and
// the links by file id.
type Files struct {
	*Common
	Store  FileStore
	Users  Quotas
	Search NameSearch
	// DAV is where WebDAV serves the files, which the pages change
	// through (files.Prefix).
	DAV string
	// Thumbs: previews are made, the listing shows thumbnails.
	Thumbs bool
}

// Routes adds the file pages, a session's.
func (u *Files) Routes(rs *front.Routes) {
	rs.Public("GET /files", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, FilesPrefix+"/", http.StatusMovedPermanently)
	})
	rs.Handle(auth.Page, "GET /files/{path...}", u.files)
	rs.Handle(auth.Page, "HEAD /files/{path...}", u.files)
	rs.Handle(auth.Page, "GET /trash/{$}", u.trashPage)
	rs.Handle(auth.Page, "POST /trash/{$}", u.trashPost)
	rs.Handle(auth.Page, "GET /trash/item/{id}", u.trashItem)
	rs.Handle(auth.Page, "GET /search", u.search)
	rs.Handle(auth.Page, "GET /index.php/f/{id}", u.byID)
}

// Previews make the thumbnails and the photos' dates (package preview).
type Previews interface {
	Serve(w http.ResponseWriter, r *http.Request, src preview.Source, width, height int, square bool)
	Taken(user string, pics []preview.Source) []time.Time
}

// Photos is the photos page and the thumbnails.
type Photos struct {
	*Common
	Store    Trees
	Users    Quotas
	Previews Previews // nil: none
}

// Routes adds the photos' pages, a session's.
func (u *Photos) Routes(rs *front.Routes) {
	rs.Handle(auth.Page, "GET /thumb/{path...}", u.thumb)
	rs.Handle(auth.Page, "GET /photos", u.photos)
}

// ShareBook is the book of shares as the sharing page asks it (package
// shares).
type ShareBook interface {
	Add(owner string, r shares.Request) (shares.Share, error)
	Remove(user string, id int) error
	By(owner string) []shares.Share
	With(user string) []shares.Share
}

// SharingUsers are the users as the sharing page asks them.
type SharingUsers interface {
	Quotas
	List() ([]users.Info, error)
}

// Sharing is the page of a user's shares and links.
type Sharing struct {
	*Common
	Store  Trees
	Users  SharingUsers
	Shares ShareBook // nil: no sharing
	// Collections names a user's calendars and address books, which
	// may be shared; nil: none.
	Collections func(user string) (calendars, addressBooks []string)
}

// Routes adds the sharing page, a session's.
func (u *Sharing) Routes(rs *front.Routes) {
	rs.Handle(auth.Page, "GET /shares", u.sharesPage)
	rs.Handle(auth.Page, "POST /shares", u.sharesPost)
}

// AccountUsers are the users as the account's pages change them.
type AccountUsers interface {
	AppPasswords
	AppPasswords(name string) ([]users.AppPassword, error)
	RevokeAppPassword(name, id string) error
	SetPassword(name, password string) error
	Email(name string) string
	SetEmail(name, email string) error
	TOTP(name string) (on bool, recoveryLeft int)
	NewTOTP(name string) (*otp.Key, error)
	EnableTOTP(name, secret, code string) ([]string, error)
	DisableTOTP(name string) error
}

// PasskeyBook is the accounts' passkeys as kept (users.Passkeys).
type PasskeyBook interface {
	Of(name string) ([]users.Passkey, []byte, error)
	Remove(name, id string) error
}

// Account is the account's pages: password, e-mail, app passwords,
// two-factor login, and connecting apps.
type Account struct {
	*Common
	WaysIn   WaysIn // the password and code typed again, the sessions renewed
	Users    AccountUsers
	Passkeys Passkeys
	Keys     PasskeyBook // the passkeys kept, listed and removed
	// Report is the benchmark report as it is now (the SSH host key's
	// fingerprint).
	Report func() *report.Report
	// SFTPPort is the port the SFTP server listens on, for the connect
	// page.
	SFTPPort int

	enrolling enrolments
}

// Routes adds the account's pages: what changes the account, the
// account's.
func (u *Account) Routes(rs *front.Routes) {
	rs.Handle(auth.Page, "GET /connect", u.connectPage)
	rs.Handle(auth.Account, "POST /connect", u.connectPost)
	rs.Handle(auth.Account, "GET /account", u.accountPage)
	rs.Handle(auth.Account, "POST /account", u.accountPost)
	rs.Handle(auth.Account, "POST /account/passkey/begin", u.passkeyBegin)
	rs.Handle(auth.Account, "POST /account/passkey", u.passkeyAdd)
}

// Links are the public links (package shares).
type Links interface {
	Link(token string) (shares.Share, bool)
}

// SharedTrees opens a share's tree (package store).
type SharedTrees interface {
	Shared(owner string, id uint64, p string, perm rights.Set) (*store.Tree, error)
}

// Public is a public link's pages: its folder or file, its password
// form, downloads, previews and uploads.
type Public struct {
	*Common
	WaysIn   WaysIn // a link's password
	Shares   Links  // nil: no links
	Store    SharedTrees
	Previews Previews // nil: none

	links linkVisits
}

// Routes adds a link's pages, open to whoever has the link.
func (u *Public) Routes(rs *front.Routes) { u.publicRoutes(rs) }

// AdminUsers are the users as the admin page changes them.
type AdminUsers interface {
	List() ([]users.Info, error)
	Exists(name string) bool
	Add(name, password string) error
	SetPassword(name, password string) error
	SetQuota(name string, bytes int64) error
}

// AdminStore is the store as the admin page counts and hands over a
// user's files.
type AdminStore interface {
	Owners() ([]string, error)
	UsageOf(user string) (store.Usage, error)
	DiskSpace() (total, free int64, err error)
	HandOver(from, to, name string) error
	RemoveOwner(user string) error
}

// CalendarData is what the admin page asks of the calendars' store.
type CalendarData interface {
	Owners() []string
	Usage(user string) (int64, error)
	RemoveOwner(user string) error
}

// Admin is the admin page: the users, their data, the box (package
// admin) and measuring again.
type Admin struct {
	*Common
	// Sessions are renewed when the admin resets a password.
	Sessions interface {
		Renew(r *http.Request, user string)
	}
	Users AdminUsers
	Store AdminStore
	// System is the box as its admin sees and sets it; nil: the page
	// shows the users alone.
	System admin.System
	// Report is the benchmark report as it is now.
	Report func() *report.Report
	// Recent returns the log's last lines, oldest first.
	Recent func() []string
	// Measure runs the benchmark again, writing its progress lines to
	// progress; nil: the admin page offers no "measure again".
	Measure func(ctx context.Context, progress io.Writer) error
	// Accounts deletes an account and everything keyed by it (package
	// accounts); nil: the admin page deletes no one.
	Accounts interface{ Delete(name string) error }
	// Calendars is the calendars' and address books' data as the admin
	// page counts and removes it (package calendars); nil: none.
	Calendars CalendarData

	bench benchRun
}

// Routes adds the admin page, the admin's.
func (u *Admin) Routes(rs *front.Routes) {
	rs.Handle(auth.Admin, "GET /admin/{$}", u.adminPage)
	rs.Handle(auth.Admin, "POST /admin/{$}", u.adminPost)
	// What shows the copies' password or changes whom they trust: the
	// admin's password typed within minutes (the page asks for it).
	rs.Handle(auth.Confirmed, "POST /admin/copies", u.confirmedPost)
	rs.Handle(auth.Admin, "GET /admin/bench.json", u.benchStatus)
}
