package web

import (
	"bytes"
	"context"
	"encoding/xml"
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
	done, allowed := d.Guard.Begin(addr, "webdav", user)
	if !allowed {
		w.Header().Set("Retry-After", "60")
		http.Error(w, "too many failed logins from your address; try again later", http.StatusTooManyRequests)
		return
	}
	ok = d.Users.CheckPassword(user, pw)
	done(ok)
	if !ok {
		challenge(w)
		return
	}
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
		// x/net/webdav handles PUT (lock tokens, If headers, status codes);
		// the body is watched so that only a complete upload is committed.
		body := &putBody{ReadCloser: r.Body, want: r.ContentLength}
		r.Body = body
		r = r.WithContext(context.WithValue(r.Context(), putBodyKey{}, body))
		w = putStatus{w, body}
	case "COPY", "MOVE":
		// x/net/webdav compares source and destination unnormalised: a COPY
		// of a folder onto itself ("photos" to "photos/") would empty it.
		if dst, ok := destination(r); ok {
			src := path.Clean("/" + name)
			if dst == src || strings.HasPrefix(dst, strings.TrimSuffix(src, "/")+"/") {
				http.Error(w, "the destination is the source or inside it", http.StatusForbidden)
				return
			}
		}
	case "PROPFIND", "PROPPATCH":
		if err := checkXMLNamespaces(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
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

// maxXMLBody bounds a PROPFIND or PROPPATCH body.
const maxXMLBody = 1 << 20

// checkXMLNamespaces rejects an XML body that declares a namespace prefix as
// empty (xmlns:p=""), which the XML Namespaces spec forbids and Go's
// encoding/xml lets through. It leaves r.Body readable again.
func checkXMLNamespaces(r *http.Request) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxXMLBody+1))
	if err != nil {
		return err
	}
	if len(b) > maxXMLBody {
		return errors.New("request body too large")
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.RawToken()
		if err != nil {
			return nil // end, or malformed: x/net/webdav answers that itself
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Space == "xmlns" && a.Value == "" {
					return fmt.Errorf("namespace prefix %q declared empty", a.Name.Local)
				}
			}
		}
	}
}

// destination is the Destination header's path inside the user's tree,
// cleaned.
func destination(r *http.Request) (string, bool) {
	u, err := url.Parse(r.Header.Get("Destination"))
	if err != nil || u.Path == "" {
		return "", false
	}
	p, ok := strings.CutPrefix(u.Path, DAVPrefix)
	if !ok {
		return "", false
	}
	return path.Clean("/" + p), true
}

func challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="bonesync", charset="UTF-8"`)
	http.Error(w, "log in with your bonesync user name and password", http.StatusUnauthorized)
}

// putBody watches a PUT's body on its way to the upload: the upload is
// committed only if the whole body arrived (see davUpload.Close).
type putBody struct {
	io.ReadCloser
	want, got int64
	err       error // a read error other than EOF
	noSpace   bool  // the upload hit a full disk
}

func (b *putBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.got += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

// complete reports whether the body arrived whole, or why not.
func (b *putBody) complete() error {
	switch {
	case b.err != nil:
		return fmt.Errorf("upload interrupted after %d bytes: %w", b.got, b.err)
	case b.want >= 0 && b.got != b.want:
		return fmt.Errorf("upload incomplete: %d of %d bytes", b.got, b.want)
	}
	return nil
}

type putBodyKey struct{}

// putStatus gives x/net/webdav's generic answer to a failed PUT (405) its
// real meaning: 507 for a full disk, 400 for a body that did not arrive whole.
type putStatus struct {
	http.ResponseWriter
	body *putBody
}

func (w putStatus) WriteHeader(code int) {
	if code == http.StatusMethodNotAllowed {
		switch {
		case w.body.noSpace:
			code = http.StatusInsufficientStorage
		case w.body.complete() != nil:
			code = http.StatusBadRequest
		}
	}
	w.ResponseWriter.WriteHeader(code)
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
