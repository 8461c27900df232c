// Package webui is the box in a browser: the login form and its session,
// the file manager at /files/, the trash and version history, the
// account page (password, app passwords), the admin page, and the
// Nextcloud login flow that lets the Nextcloud apps connect through a
// browser. Pages are server-side templates with a little plain JavaScript,
// every asset embedded in the binary. Changes to files go through WebDAV
// (package files) with the session standing for Basic credentials (the
// login door, package auth, takes either), so the pages and the sync
// clients share one implementation of every change: the same store,
// names, quotas, checksums and locks.
package webui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

//go:embed assets
var assets embed.FS

// FilesPrefix is where the pages show the files.
const FilesPrefix = "/files"

// LoginPage is the login form.
const LoginPage = "/login"

// FolderURL is the page that shows the folder p of the user's files.
func FolderURL(p string) string {
	return (&url.URL{Path: FilesPrefix + strings.TrimSuffix(path.Clean("/"+p), "/") + "/"}).EscapedPath()
}

// Door is the login door as the pages ask it (package auth): the login
// form's and the account page's password check, and the sessions.
type Door interface {
	Password(addr string, way auth.Way, user, pw string) auth.Result
	Code(addr, user, code string) auth.Result
	TwoFactor(user string) bool
	LinkPassword(addr, token, hash, pw string) auth.Result
	RetryAfter(addr, user string) time.Duration
	LinkRetryAfter(addr, token string) time.Duration
	Sessions() *auth.Sessions
}

// UI serves the pages. Set its fields, then call Routes.
type UI struct {
	Door  Door
	Users *users.DB
	Store *store.Store
	Log   *slog.Logger
	// Report is the benchmark report as it is now.
	Report func() *report.Report
	// System is the version and the card's slots (updates).
	System *admin.System
	// Recent returns the log's last lines, oldest first.
	Recent func() []string
	// Measure runs the benchmark again, writing its progress lines to
	// progress; nil: the admin page offers no "measure again".
	Measure func(ctx context.Context, progress io.Writer) error
	// Previews make the thumbnails and the photos page's; nil: none.
	Previews *preview.Maker
	// Notices are shown at the top of the pages; nil: none.
	Notices *notices.Board
	// Shares are the shares and public links; nil: no sharing.
	Shares *shares.Book
	// Accounts deletes an account and everything keyed by it (package
	// accounts); nil: the admin page deletes no one.
	Accounts interface{ Delete(name string) error }
	// Collections names a user's calendars and address books, which
	// may be shared; nil: none.
	Collections func(user string) (calendars, addressBooks []string)
	// Calendars is the calendars' and address books' data as the admin
	// page counts and removes it (package calendars); nil: none.
	Calendars CalendarData
	// Audit is the owner's record of logins and changes, shown on the
	// admin page and written to by its actions; nil: none.
	Audit *audit.Log
	// SFTPPort is the port the SFTP server listens on, for the connect
	// page (its host key's fingerprint is the report's).
	SFTPPort int

	flows     loginFlows
	codes     pendings
	enrolling enrolments
	links     linkVisits
	bench     benchRun
	once      sync.Once
	pages     pages
	static    map[string]staticFile
}

// CalendarData is what the admin page asks of the calendars' store.
type CalendarData interface {
	Owners() []string
	Usage(user string) (int64, error)
	RemoveOwner(user string) error
}

type staticFile struct {
	body []byte
	typ  string
	tag  string
}

func (u *UI) init() {
	u.once.Do(func() {
		funcs := template.FuncMap{
			"size":  humanSize,
			"sh":    shellQuote,
			"when":  func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") },
			"asset": u.assetURL,
			"inc":   func(i int) int { return i + 1 },
			"dec":   func(i int) int { return i - 1 },
			"base":  path.Base,
			"mib":   func(n int64) int64 { return n >> 20 },
			"used":  func(total, free int64) int64 { return total - free },
			"sortLink": func(d filesData, col string) string {
				if d.Sort == col && !d.Desc {
					return "?sort=" + col + "&desc=1"
				}
				return "?sort=" + col
			},
			"sortState": func(d filesData, col string) string {
				switch {
				case d.Sort != col:
					return "none"
				case d.Desc:
					return "descending"
				}
				return "ascending"
			},
		}
		u.static = map[string]staticFile{}
		for _, name := range []string{"style.css", "app.js", "icon.svg"} {
			b, err := assets.ReadFile("assets/" + name)
			if err != nil {
				panic(err)
			}
			sum := sha256.Sum256(b)
			typ := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}[path.Ext(name)]
			u.static[name] = staticFile{body: b, typ: typ, tag: hex.EncodeToString(sum[:6])}
		}
		u.pages.funcs = funcs
	})
}

// assetURL names an asset with its content's hash, so it can be cached for
// good and a new binary's is fetched at once.
func (u *UI) assetURL(name string) string { return "/ui/" + name + "?v=" + u.static[name].tag }

// Routes adds the pages, each with the access it asks: the assets, the
// login form and the public links anyone's; the pages a session's; what
// changes the account (its password, app passwords, two-factor login,
// the apps it lets in) the account's; the admin page the admin's.
func (u *UI) Routes(rs *front.Routes) {
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
	rs.Handle(auth.Optional, "GET "+LoginPage, u.loginPage)
	rs.Public("POST "+LoginPage, u.loginPost)
	rs.Public("POST "+LoginPage+"/code", u.codePost)
	rs.Handle(auth.Page, "POST /logout", u.logout)
	rs.Public("GET /files", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, FilesPrefix+"/", http.StatusMovedPermanently)
	})
	rs.Handle(auth.Page, "GET /files/{path...}", u.files)
	rs.Handle(auth.Page, "HEAD /files/{path...}", u.files)
	rs.Handle(auth.Page, "GET /trash/{$}", u.trashPage)
	rs.Handle(auth.Page, "POST /trash/{$}", u.trashPost)
	rs.Handle(auth.Page, "GET /trash/item/{id}", u.trashItem)
	rs.Handle(auth.Page, "GET /connect", u.connectPage)
	rs.Handle(auth.Account, "POST /connect", u.connectPost)
	rs.Handle(auth.Account, "GET /account", u.accountPage)
	rs.Handle(auth.Account, "POST /account", u.accountPost)
	rs.Handle(auth.Admin, "GET /admin/{$}", u.adminPage)
	rs.Handle(auth.Admin, "POST /admin/{$}", u.adminPost)
	rs.Handle(auth.Admin, "GET /admin/bench.json", u.benchStatus)
	rs.Handle(auth.Page, "GET /thumb/{path...}", u.thumb)
	rs.Handle(auth.Page, "GET /photos", u.photos)
	rs.Handle(auth.Page, "GET /search", u.search)
	rs.Handle(auth.Page, "GET /index.php/f/{id}", u.byID)
	rs.Handle(auth.Page, "POST /notices", u.dismiss)
	u.publicRoutes(rs)
	rs.Handle(auth.Page, "GET /shares", u.sharesPage)
	rs.Handle(auth.Page, "POST /shares", u.sharesPost)
	u.flowRoutes(rs)
}

// page is what every template gets.
type page struct {
	Title   string
	User    string
	Admin   bool
	CSRF    string
	Flash   string // a message about what was just done
	Problem string // a message about what failed
	Nav     string // which menu entry is this page
	Notices []notices.Notice
	// FormsTo is where else the page's forms may lead ("nc:", for the
	// login flow v1's answer to its app); "" for the box's pages only.
	FormsTo string
	Data    any
}

// render writes a page. Pages carry a Content-Security-Policy that lets
// only the box's own script and style run.
func (u *UI) render(w http.ResponseWriter, code int, name string, p page) {
	var b bytes.Buffer
	t, err := u.pages.get(name)
	if err == nil {
		err = t.ExecuteTemplate(&b, "layout.html", p)
	}
	if err != nil {
		u.Log.Error("web page not made", "page", name, "err", err)
		http.Error(w, "the page could not be made; the log says why", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	formAction := "'self'"
	if p.FormsTo != "" {
		formAction += " " + p.FormsTo
	}
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; form-action "+
		formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// tree opens the session user's files with their quota, or answers 500.
func (u *UI) tree(w http.ResponseWriter, sess auth.Caller) (*store.Tree, bool) {
	tree, err := u.Store.Tree(sess.User)
	if err != nil {
		u.Log.Error("web: cannot open the files", "user", sess.User, "err", err)
		http.Error(w, "cannot open your files; the log says why", http.StatusInternalServerError)
		return nil, false
	}
	tree.SetQuota(u.Users.Quota(sess.User))
	return tree, true
}

func (u *UI) base(sess auth.Caller, title, nav string) page {
	p := page{Title: title, User: sess.User, Admin: sess.User == users.Admin, CSRF: sess.CSRF(), Nav: nav}
	if u.Notices != nil {
		p.Notices, _ = u.Notices.List(sess.User)
	}
	return p
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
