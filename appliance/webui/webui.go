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
	AccountPassword(addr, proto, user, pw string) auth.Result
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

// Routes adds the pages to mux.
func (u *UI) Routes(mux *http.ServeMux) {
	u.init()
	mux.HandleFunc("GET /ui/{name}", func(w http.ResponseWriter, r *http.Request) {
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
	mux.HandleFunc("GET "+LoginPage, u.loginPage)
	mux.HandleFunc("POST "+LoginPage, u.loginPost)
	mux.HandleFunc("POST "+LoginPage+"/code", u.codePost)
	mux.HandleFunc("POST /logout", u.logout)
	mux.HandleFunc("GET /files", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, FilesPrefix+"/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /files/{path...}", u.files)
	mux.HandleFunc("HEAD /files/{path...}", u.files)
	mux.HandleFunc("GET /trash/{$}", u.trashPage)
	mux.HandleFunc("POST /trash/{$}", u.trashPost)
	mux.HandleFunc("GET /trash/item/{id}", u.trashItem)
	mux.HandleFunc("GET /connect", u.connectPage)
	mux.HandleFunc("POST /connect", u.connectPost)
	mux.HandleFunc("GET /account", u.accountPage)
	mux.HandleFunc("POST /account", u.accountPost)
	mux.HandleFunc("GET /admin/{$}", u.adminPage)
	mux.HandleFunc("POST /admin/{$}", u.adminPost)
	mux.HandleFunc("GET /admin/bench.json", u.benchStatus)
	mux.HandleFunc("GET /thumb/{path...}", u.thumb)
	mux.HandleFunc("GET /photos", u.photos)
	mux.HandleFunc("GET /search", u.search)
	mux.HandleFunc("GET /index.php/f/{id}", u.byID)
	mux.HandleFunc("POST /notices", u.dismiss)
	u.publicRoutes(mux)
	mux.HandleFunc("GET /shares", u.sharesPage)
	mux.HandleFunc("POST /shares", u.sharesPost)
	u.flowRoutes(mux)
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

// session returns the logged-in user's session, or sends the browser to
// the login page (a script's request gets 401) and returns false.
func (u *UI) session(w http.ResponseWriter, r *http.Request) (*auth.Session, bool) {
	if r.TLS == nil {
		http.Error(w, "the pages are served over HTTPS only", http.StatusForbidden)
		return nil, false
	}
	sess, ok := u.Door.Sessions().Get(r)
	if !ok {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, LoginPage+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		} else {
			http.Error(w, "log in first", http.StatusUnauthorized)
		}
		return nil, false
	}
	return sess, true
}

// change is session for a request that changes something: it must come
// from the box's own page, with the session's CSRF token.
func (u *UI) change(w http.ResponseWriter, r *http.Request) (*auth.Session, bool) {
	sess, ok := u.session(w, r)
	if !ok {
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !sess.Allows(r) {
		http.Error(w, "refused: the request did not come from this box's page (no valid CSRF token)", http.StatusForbidden)
		return nil, false
	}
	return sess, true
}

// sessionTree is session (or change, for a request that changes
// something) and the session user's files, opened; the caller closes them.
func (u *UI) sessionTree(w http.ResponseWriter, r *http.Request, changing bool) (*auth.Session, *store.Tree, bool) {
	get := u.session
	if changing {
		get = u.change
	}
	sess, ok := get(w, r)
	if !ok {
		return nil, nil, false
	}
	tree, ok := u.tree(w, sess)
	return sess, tree, ok
}

// tree opens the session user's files with their quota, or answers 500.
func (u *UI) tree(w http.ResponseWriter, sess *auth.Session) (*store.Tree, bool) {
	tree, err := u.Store.Tree(sess.User)
	if err != nil {
		u.Log.Error("web: cannot open the files", "user", sess.User, "err", err)
		http.Error(w, "cannot open your files; the log says why", http.StatusInternalServerError)
		return nil, false
	}
	tree.SetQuota(u.Users.Quota(sess.User))
	return tree, true
}

func (u *UI) base(sess *auth.Session, title, nav string) page {
	p := page{Title: title, User: sess.User, Admin: sess.User == users.Admin, CSRF: sess.CSRF, Nav: nav}
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
