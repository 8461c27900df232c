// Package webui is the box in a browser: the login form and its session,
// the file manager at /files/, the trash and version history, the
// account page (password, app passwords), the admin page, and the
// Nextcloud login flow that lets the Nextcloud apps connect through a
// browser. Pages are server-side templates with a little plain JavaScript,
// every asset embedded in the binary. Changes to files go through WebDAV
// (package files) with the session standing for Basic credentials (the
// login door, package auth, takes either), so the pages and the sync
// clients share one implementation of every change: the same store,
// names, quotas, checksums and locks. The pages are served by rooms, a
// handler per group of pages holding only what its pages use (rooms.go).
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/report"
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

type staticFile struct {
	body []byte
	typ  string
	tag  string
}

func (u *Common) init() {
	u.once.Do(func() {
		funcs := template.FuncMap{
			"size":        humanSize,
			"sh":          shellQuote,
			"when":        func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") },
			"asset":       u.assetURL,
			"inc":         func(i int) int { return i + 1 },
			"dec":         func(i int) int { return i - 1 },
			"base":        path.Base,
			"mib":         func(n int64) int64 { return n >> 20 },
			"used":        func(total, free int64) int64 { return total - free },
			"fingerprint": report.FingerprintHTML,
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
		for _, name := range []string{"style.css", "app.js", "passkey.js", "icon.svg"} {
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
func (u *Common) assetURL(name string) string { return "/ui/" + name + "?v=" + u.static[name].tag }

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
func (u *Common) render(w http.ResponseWriter, code int, name string, p page) {
	u.init()
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

// openTree opens the session user's files with their quota, or answers
// 500.
func openTree(w http.ResponseWriter, log *slog.Logger, st Trees, q Quotas, sess auth.Caller) (*store.Tree, bool) {
	tree, err := st.Tree(sess.User)
	if err != nil {
		log.Error("web: cannot open the files", "user", sess.User, "err", err)
		http.Error(w, "cannot open your files; the log says why", http.StatusInternalServerError)
		return nil, false
	}
	tree.SetQuota(q.Quota(sess.User))
	return tree, true
}

func (u *Common) base(sess auth.Caller, title, nav string) page {
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

// dismiss takes a notice (id, or all) off the user's pages, and goes back.
func (u *Common) dismiss(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	if u.Notices != nil {
		id, _ := strconv.Atoi(r.FormValue("id"))
		if _, err := u.Notices.Dismiss(sess.User, id); err != nil {
			u.Log.Warn("web: cannot dismiss a notice", "user", sess.User, "err", err)
		}
	}
	// Back to the page it was on (the change check made sure the
	// request came from this box's page).
	back := FilesPrefix + "/"
	if ref, err := url.Parse(r.Referer()); err == nil && strings.HasPrefix(ref.Path, "/") && !strings.HasPrefix(ref.Path, "//") {
		back = (&url.URL{Path: ref.Path, RawQuery: ref.RawQuery}).String()
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// audited records an action taken on the pages in the audit log: the
// admin's, and an account turning its two-factor login on or off.
func (u *Common) audited(r *http.Request, user, what string) {
	if err := u.Audit.Record(audit.Event{Kind: audit.Admin, User: user, Addr: guard.Host(r.RemoteAddr), Proto: "web", What: what}); err != nil {
		u.Log.Warn("admin action not recorded in the audit log", "what", what, "err", err)
	}
}
