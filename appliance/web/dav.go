package web

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/webdav"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// DAVPrefix is where WebDAV lives on the HTTPS server.
const DAVPrefix = "/dav"

// DAV serves each user's files over WebDAV (golang.org/x/net/webdav), with
// HTTP Basic authentication accepted only over TLS.
type DAV struct {
	Users *users.DB
	Store *store.Store
	Guard *guard.Guard
	Log   io.Writer

	locks sync.Map // user -> webdav.LockSystem
}

func (d *DAV) lockSystem(user string) webdav.LockSystem {
	ls, _ := d.locks.LoadOrStore(user, webdav.NewMemLS())
	return ls.(webdav.LockSystem)
}

func (d *DAV) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		// Never take a password over plain HTTP, and do not invite one.
		http.Error(w, "WebDAV is served over HTTPS only", http.StatusUnauthorized)
		return
	}
	if r.URL.Path == DAVPrefix {
		http.Redirect(w, r, DAVPrefix+"/", http.StatusMovedPermanently)
		return
	}
	addr := guard.Host(r.RemoteAddr)
	if banned, left := d.Guard.Banned(addr); banned {
		w.Header().Set("Retry-After", fmt.Sprint(int(left.Seconds())+1))
		http.Error(w, "too many failed logins from your address; try again later", http.StatusTooManyRequests)
		return
	}
	user, pw, ok := r.BasicAuth()
	if !ok {
		challenge(w)
		return
	}
	if !d.Users.CheckPassword(user, pw) {
		d.Guard.Failed(addr, "webdav", user)
		challenge(w)
		return
	}
	d.Guard.Succeeded(addr)
	tree, err := d.Store.Tree(user)
	if err != nil {
		http.Error(w, "cannot open your files", http.StatusInternalServerError)
		fmt.Fprintf(d.Log, "webdav: %v\n", err)
		return
	}
	defer tree.Close()
	name := strings.TrimPrefix(r.URL.Path, DAVPrefix)
	switch r.Method {
	case http.MethodPut:
		d.put(w, r, tree, name, user)
		return
	case http.MethodGet, http.MethodHead:
		if fi, err := tree.Stat(name); err == nil && fi.IsDir() {
			listing(w, r, tree, name)
			return
		}
	}
	h := &webdav.Handler{
		Prefix:     DAVPrefix,
		FileSystem: davFS{tree},
		LockSystem: d.lockSystem(user),
		Logger: func(r *http.Request, err error) {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(d.Log, "webdav: %s %s %s: %v\n", user, r.Method, r.URL.Path, err)
			}
		},
	}
	h.ServeHTTP(w, r)
}

func challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="bonesync", charset="UTF-8"`)
	http.Error(w, "log in with your bonesync user name and password", http.StatusUnauthorized)
}

// put stores an upload atomically: the new content becomes visible only when
// all of it has arrived and is on disk, and only then is the request
// answered. A client that goes away, a short body or a full disk leave the
// previous version as it was.
func (d *DAV) put(w http.ResponseWriter, r *http.Request, t *store.Tree, name, user string) {
	if strings.HasSuffix(name, "/") {
		http.Error(w, "cannot PUT a collection", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("If") == "" {
		// As x/net/webdav does: a client without lock tokens must not
		// write a resource someone else has locked.
		ls := d.lockSystem(user)
		token, err := ls.Create(time.Now(), webdav.LockDetails{Root: path.Clean("/" + name), Duration: -1, ZeroDepth: true})
		if errors.Is(err, webdav.ErrLocked) {
			http.Error(w, "locked", http.StatusLocked)
			return
		}
		if err == nil {
			defer ls.Unlock(time.Now(), token)
		}
	}
	if fi, err := t.Stat(path.Dir(path.Clean("/" + name))); err != nil || !fi.IsDir() {
		http.Error(w, "the parent folder does not exist", http.StatusConflict)
		return
	}
	existed := false
	if fi, err := t.Stat(name); err == nil {
		if fi.IsDir() {
			http.Error(w, "a folder of that name exists", http.StatusMethodNotAllowed)
			return
		}
		existed = true
	}
	u, err := t.Create(name, false)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	n, err := io.Copy(u, r.Body)
	if err == nil && r.ContentLength >= 0 && n != r.ContentLength {
		err = fmt.Errorf("got %d of %d bytes", n, r.ContentLength)
	}
	if err != nil {
		u.Abort()
		if errors.Is(err, store.ErrNoSpace) {
			writeStoreError(w, err)
			return
		}
		http.Error(w, "upload incomplete: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := u.Commit(); err != nil {
		writeStoreError(w, err)
		return
	}
	if fi, err := t.Stat(name); err == nil {
		w.Header().Set("ETag", fmt.Sprintf(`"%x%x"`, fi.ModTime().UnixNano(), fi.Size()))
	}
	if existed {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
}

func writeStoreError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, store.ErrNoSpace):
		http.Error(w, "the box's disk is full", http.StatusInsufficientStorage)
	case errors.Is(err, store.ErrBadName):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, fs.ErrNotExist):
		http.Error(w, "not found", http.StatusNotFound)
	case errors.Is(err, fs.ErrExist):
		http.Error(w, "exists", http.StatusConflict)
	default:
		http.Error(w, "refused", http.StatusForbidden)
	}
}

// listing answers a browser's GET on a folder with a readable page.
func listing(w http.ResponseWriter, r *http.Request, t *store.Tree, name string) {
	if !strings.HasSuffix(r.URL.Path, "/") {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	entries, err := t.ReadDir(name)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].IsDir() != entries[j].IsDir() {
			return entries[i].IsDir()
		}
		return strings.ToLower(entries[i].Name()) < strings.ToLower(entries[j].Name())
	})
	type row struct {
		Name, Href, Size, Modified string
	}
	var rows []row
	for _, e := range entries {
		rw := row{Name: e.Name(), Href: url.PathEscape(e.Name()), Modified: e.ModTime().Format("2006-01-02 15:04")}
		if e.IsDir() {
			rw.Name += "/"
			rw.Href += "/"
		} else {
			rw.Size = humanSize(e.Size())
		}
		rows = append(rows, rw)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	listPage.Execute(w, struct {
		Path string
		Top  bool
		Rows []row
	}{path.Clean("/" + name), path.Clean("/"+name) == "/", rows})
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

var listPage = template.Must(template.New("list").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Path}} - bonesync</title>
<style>body{font-family:system-ui,sans-serif;max-width:50rem;margin:1rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%}td,th{padding:.25rem .5rem;text-align:left}
td.n{text-align:right;white-space:nowrap}tr:nth-child(even){background:#f6f6f6}</style></head><body>
<h1>{{.Path}}</h1>
<table><tr><th>Name</th><th>Size</th><th>Modified</th></tr>
{{if not .Top}}<tr><td><a href="../">../</a></td><td></td><td></td></tr>{{end}}
{{range .Rows}}<tr><td><a href="{{.Href}}">{{.Name}}</a></td><td class="n">{{.Size}}</td><td>{{.Modified}}</td></tr>
{{else}}<tr><td colspan="3">This folder is empty.</td></tr>{{end}}
</table></body></html>
`))
