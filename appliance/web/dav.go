package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/webdav"
	"golang.org/x/text/unicode/norm"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// DAVPrefix is where WebDAV lives on the HTTPS server.
const DAVPrefix = "/dav"

// DAV serves each user's files over WebDAV (golang.org/x/net/webdav), with
// HTTP Basic authentication accepted only over TLS, at DAVPrefix and at the
// paths the ownCloud and Nextcloud clients use (nextcloud.go).
//
// x/net/webdav does the protocol; what sync clients need on top of it is
// done here, before and around it: conditional requests (If-Match,
// If-None-Match, If-Unmodified-Since) checked under a per-path lock so the
// check and the change are one step, the client's modification time
// (X-OC-Mtime, PROPPATCH lastmodified) and checksums (OC-Checksum,
// Content-MD5), strong ETags for files and folders, and the oc: properties.
type DAV struct {
	Users *users.DB
	Store *store.Store
	Guard *guard.Guard
	Log   *slog.Logger
	// Locks are the WebDAV locks, which SFTP honours too; nil: a table of
	// DAV's own.
	Locks *locks.Table
	// Calendars, if set, adds CalDAV and CardDAV (package calendars) on
	// its own paths, logged in by Login.
	Calendars interface{ Routes(*http.ServeMux) }

	locksOnce sync.Once
	paths     pathLocks
}

func (d *DAV) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, ok := d.login(w, r)
	if !ok {
		return
	}
	prefix, ok := davRoot(r.URL.Path, user)
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	d.serve(w, r, user, prefix)
}

// login checks the request's Basic credentials (over TLS only, under the
// login bans) and answers it if they do not hold.
// Login checks a request's Basic credentials as WebDAV does (over TLS
// only, the shared bans) and answers the request itself when they fail:
// for the other protocols on the HTTPS port (CalDAV, CardDAV).
func (d *DAV) Login(w http.ResponseWriter, r *http.Request) (string, bool) { return d.login(w, r) }

func (d *DAV) login(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.TLS == nil {
		// Never take a password over plain HTTP, and do not invite one.
		http.Error(w, "WebDAV is served over HTTPS only", http.StatusUnauthorized)
		return "", false
	}
	addr := guard.Host(r.RemoteAddr)
	if banned, left := d.Guard.Banned(addr); banned {
		w.Header().Set("Retry-After", fmt.Sprint(int(left.Seconds())+1))
		http.Error(w, "too many failed logins from your address; try again later", http.StatusTooManyRequests)
		return "", false
	}
	user, pw, ok := r.BasicAuth()
	if !ok {
		challenge(w)
		return "", false
	}
	done, allowed := d.Guard.Begin(addr, "webdav", user)
	if !allowed {
		w.Header().Set("Retry-After", "60")
		http.Error(w, "too many failed logins from your address; try again later", http.StatusTooManyRequests)
		return "", false
	}
	ok, err := d.Users.CheckPassword(user, pw, d.Guard.Suspect(addr))
	switch {
	case err != nil:
		done(guard.ServerFault)
		d.Log.Error(fmt.Sprintf("webdav: login of %q from %s not checked: %v", user, addr, err))
		http.Error(w, "the server cannot check passwords now; its log says why", http.StatusServiceUnavailable)
		return "", false
	case !ok:
		done(guard.WrongPassword)
		challenge(w)
		return "", false
	}
	done(guard.LoggedIn)
	return user, true
}

// serve answers a WebDAV request on user's tree, reached under prefix.
func (d *DAV) serve(w http.ResponseWriter, r *http.Request, user, prefix string) {
	tree, err := d.Store.Tree(user)
	if err != nil {
		http.Error(w, "cannot open your files", http.StatusInternalServerError)
		d.Log.Error(fmt.Sprintf("webdav: %v", err))
		return
	}
	defer tree.Close()
	tree.SetQuota(d.Users.Quota(user))
	// The store names files in NFC; the checks here (source against
	// destination, locks) must compare the same spellings.
	name := norm.NFC.String(strings.TrimPrefix(r.URL.Path, prefix))
	ctx := r.Context()
	switch r.Method {
	case "LOCK":
		defer d.paths.lock(user, name)()
		d.lock(w, r, tree, user, prefix, name)
		return
	case "UNLOCK":
		d.unlock(w, r, user, name)
		return
	}
	if mutating(r.Method) {
		paths := []string{name}
		dst, hasDst := destination(r, prefix)
		if hasDst {
			paths = append(paths, dst)
		} else if r.Method == "MOVE" || r.Method == "COPY" {
			http.Error(w, "the Destination must be in your files, under "+prefix+"/", http.StatusBadRequest)
			return
		}
		defer d.paths.lock(user, paths...)()
		_, statErr := tree.Stat(name)
		var changes []locks.Change
		switch r.Method {
		case http.MethodPut:
			changes = []locks.Change{{Path: name, Member: statErr != nil}}
		case http.MethodDelete:
			changes = []locks.Change{{Path: name, Tree: true, Member: true}}
		case "MKCOL":
			changes = []locks.Change{{Path: name, Member: true}}
		case "PROPPATCH":
			changes = []locks.Change{{Path: name}}
		case "MOVE":
			changes = []locks.Change{{Path: name, Tree: true, Member: true}}
		}
		if hasDst && (r.Method == "MOVE" || r.Method == "COPY") {
			changes = append(changes, locks.Change{Path: dst, Tree: true, Member: true})
		}
		if !d.conditions(w, r, tree, user, prefix, name, changes...) {
			return
		}
	}
	switch r.Method {
	case http.MethodPut:
		if r.Header.Get("Content-Range") != "" {
			// RFC 9110 section 14.5: a partial PUT must not be taken as a whole one.
			http.Error(w, "Content-Range on PUT is not supported: send the whole file", http.StatusBadRequest)
			return
		}
		up, err := newPutInfo(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		old, statErr := tree.Stat(name)
		up.existed = statErr == nil
		if r.ContentLength > 0 {
			grow := r.ContentLength
			if statErr == nil {
				grow -= old.Size()
			}
			if err := tree.Fits(grow); err != nil {
				writeStoreError(w, err) // before a byte is sent (Expect: 100-continue)
				return
			}
		}
		r.Body = up.body
		ctx = context.WithValue(ctx, putKey{}, up)
		w = &putStatus{ResponseWriter: w, put: up}
	case "COPY", "MOVE":
		// x/net/webdav compares source and destination unnormalised: a COPY
		// of a folder onto itself ("photos" to "photos/") would empty it.
		if dst, ok := destination(r, prefix); ok {
			src := path.Clean("/" + name)
			if dst == src || strings.HasPrefix(dst, strings.TrimSuffix(src, "/")+"/") {
				http.Error(w, "the destination is the source or inside it", http.StatusForbidden)
				return
			}
			var cp *copyPaths
			if r.Method == "COPY" {
				cp = &copyPaths{src: src, dst: dst}
				ctx = context.WithValue(ctx, copyKey{}, cp)
			}
			// x/net/webdav deletes an existing destination before it copies
			// or moves onto it; a file onto a file is replaced by one rename
			// instead, so a copy that fails (quota, full disk) or a power
			// cut leaves the old file.
			sfi, err1 := tree.Stat(src)
			dfi, err2 := tree.Stat(dst)
			if err1 == nil && err2 == nil && sfi.Mode().IsRegular() && dfi.Mode().IsRegular() {
				ctx = context.WithValue(ctx, replaceKey{}, dst)
			}
			var mtime time.Time
			if v := r.Header.Get("X-OC-Mtime"); v != "" {
				if mtime, err = parseUnixTime(v); err != nil {
					http.Error(w, "X-OC-Mtime: "+err.Error(), http.StatusBadRequest)
					return
				}
			}
			w = &afterStatus{ResponseWriter: w, copy: cp, done: func(h http.Header) {
				if !mtime.IsZero() && tree.SetModTime(dst, mtime) == nil {
					h.Set("X-OC-MTime", "accepted")
				}
				if in, err := tree.Info(dst); err == nil {
					targetHeaders(h, in)
				}
			}}
		}
	case "MKCOL":
		w = &afterStatus{ResponseWriter: w, done: func(h http.Header) {
			if in, err := tree.Info(name); err == nil {
				targetHeaders(h, in)
			}
		}}
	case "PROPFIND", "PROPPATCH":
		if err := checkXMLNamespaces(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.Method == "PROPFIND" {
			d.propfind(w, r, tree, user, prefix, name)
			return
		}
	case http.MethodGet, http.MethodHead:
		if fi, err := tree.Stat(name); err == nil && fi.IsDir() {
			listing(w, r, tree, name)
			return
		}
		ctx = context.WithValue(ctx, getKey{}, w.Header())
	}
	fsys := davFS{t: tree, locks: d.locks(), user: user, prefix: prefix}
	h := &webdav.Handler{
		Prefix:     prefix,
		FileSystem: fsys,
		LockSystem: noLocks{},
		Logger: func(r *http.Request, err error) {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				d.Log.Error(fmt.Sprintf("webdav: %s %s %s: %v", user, r.Method, r.URL.Path, err))
			}
		},
	}
	h.ServeHTTP(w, r.WithContext(ctx))
}

// mutating reports whether a method changes the store: such requests take
// their paths' locks and have their preconditions checked.
func mutating(method string) bool {
	switch method {
	case http.MethodPut, http.MethodDelete, "MOVE", "COPY", "PROPPATCH", "MKCOL":
		return true
	}
	return false
}

// preconditions answers 412 unless the request's conditional headers hold
// for the target as it is now.
func (d *DAV) preconditions(w http.ResponseWriter, r *http.Request, tree *store.Tree, name string) bool {
	h := r.Header
	if h.Get("If-Match") == "" && h.Get("If-None-Match") == "" && h.Get("If-Unmodified-Since") == "" {
		return true
	}
	in, err := tree.Info(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		writeStoreError(w, err)
		return false
	}
	var mtime time.Time
	if err == nil {
		mtime = in.ModTime()
	}
	if !preconditionsHold(h, err == nil, in.ETag, mtime) {
		if err == nil {
			w.Header().Set("ETag", quote(in.ETag))
		}
		http.Error(w, "precondition failed: the file changed since you saw it", http.StatusPreconditionFailed)
		return false
	}
	return true
}

func quote(etag string) string { return `"` + etag + `"` }

// afterStatus runs done, which may add headers, when a request that
// x/net/webdav serves succeeds: after the change, before the answer.
type afterStatus struct {
	http.ResponseWriter
	done func(http.Header)
	ran  bool
	copy *copyPaths // a COPY's, whose failure to write is told as 507
}

func (w *afterStatus) WriteHeader(code int) {
	if w.copy != nil && code == http.StatusInternalServerError &&
		(errors.Is(w.copy.err, store.ErrQuota) || errors.Is(w.copy.err, store.ErrNoSpace)) {
		code = http.StatusInsufficientStorage
	}
	if !w.ran && (code == http.StatusCreated || code == http.StatusNoContent) {
		w.ran = true
		w.done(w.Header())
	}
	w.ResponseWriter.WriteHeader(code)
}

// targetHeaders tell a client that made or moved something its new id and ETag.
func targetHeaders(h http.Header, in store.Info) {
	h.Set("OC-FileId", ocIDOf(in.FileID))
	h.Set("OC-ETag", quote(in.ETag))
	h.Set("ETag", quote(in.ETag))
}

// fileHeaders adds what sync clients read from a GET, HEAD or PUT: the
// ETag under ownCloud's name, the file id, and the digests.
func fileHeaders(h http.Header, in store.Info) {
	h.Set("OC-ETag", quote(in.ETag))
	h.Set("OC-FileId", ocIDOf(in.FileID))
	if in.Sums != nil {
		h.Set("OC-Checksum", "SHA1:"+hex.EncodeToString(in.Sums.SHA1[:]))
		digest := "SHA=" + base64.StdEncoding.EncodeToString(in.Sums.SHA1[:])
		if in.Sums.HasMD5 {
			digest += ",MD5=" + base64.StdEncoding.EncodeToString(in.Sums.MD5[:])
		}
		h.Set("Digest", digest)
	}
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
// cleaned and in NFC.
func destination(r *http.Request, prefix string) (string, bool) {
	u, err := url.Parse(r.Header.Get("Destination"))
	if err != nil || u.Path == "" {
		return "", false
	}
	p, ok := underPrefix(u.Path, prefix)
	if !ok {
		return "", false
	}
	return path.Clean("/" + norm.NFC.String(p)), true
}

// underPrefix is p's part below prefix: "/dav/a" under "/dav" is "/a", but
// "/remote.php/dav/files/alice/x" is not under ".../files/al".
func underPrefix(p, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok || rest != "" && rest[0] != '/' {
		return "", false
	}
	return rest, true
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

// putInfo is what a PUT brings besides its body, and what became of it.
type putInfo struct {
	body    *putBody
	mtime   time.Time // X-OC-Mtime
	sums    []store.Checksum
	existed bool
	err     error      // why the upload was not committed
	result  store.Info // the committed file
}

type putKey struct{}

// newPutInfo reads a PUT's X-OC-Mtime, OC-Checksum and Content-MD5.
func newPutInfo(r *http.Request) (*putInfo, error) {
	up := &putInfo{body: &putBody{ReadCloser: r.Body, want: r.ContentLength}}
	if v := r.Header.Get("X-OC-Mtime"); v != "" {
		t, err := parseUnixTime(v)
		if err != nil {
			return nil, fmt.Errorf("X-OC-Mtime: %w", err)
		}
		up.mtime = t
	}
	if v := r.Header.Get("OC-Checksum"); v != "" {
		c, err := parseOCChecksum(v)
		if err != nil {
			return nil, err
		}
		up.sums = append(up.sums, c)
	}
	if v := r.Header.Get("Content-MD5"); v != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil || len(b) != 16 {
			return nil, fmt.Errorf("Content-MD5 %q is not a base64 MD5 digest", v)
		}
		up.sums = append(up.sums, store.Checksum{Algo: "MD5", Sum: b})
	}
	return up, nil
}

// parseUnixTime reads seconds since 1970, as X-OC-Mtime and the ownCloud
// clients' lastmodified carry them (maybe with a fraction).
func parseUnixTime(v string) (time.Time, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 1<<40 {
		return time.Time{}, fmt.Errorf("%q is not a time in seconds since 1970", v)
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
}

// parseOCChecksum reads an OC-Checksum header: "SHA1:hex", "MD5:hex" or
// "Adler32:hex", as the ownCloud and Nextcloud clients send them.
func parseOCChecksum(v string) (store.Checksum, error) {
	algo, sum, ok := strings.Cut(strings.TrimSpace(v), ":")
	algo = strings.ToUpper(algo)
	b, err := hex.DecodeString(sum)
	want := map[string]int{"SHA1": 20, "MD5": 16, "ADLER32": 4}[algo]
	if !ok || err != nil || want == 0 || len(b) != want {
		return store.Checksum{}, fmt.Errorf("OC-Checksum %q: want SHA1:, MD5: or ADLER32: and a hex digest", v)
	}
	return store.Checksum{Algo: algo, Sum: b}, nil
}

// putStatus gives x/net/webdav's generic answer to a failed PUT (405) its
// real meaning, 507 for a full disk, 400 for a body that did not arrive
// whole or does not match its checksum, and adds to a successful one what
// sync clients read: ETag, file id, and that the date was kept.
type putStatus struct {
	http.ResponseWriter
	put *putInfo
}

func (w *putStatus) WriteHeader(code int) {
	up := w.put
	switch {
	case code == http.StatusMethodNotAllowed && (errors.Is(up.err, store.ErrNoSpace) || errors.Is(up.err, store.ErrQuota)):
		code = http.StatusInsufficientStorage
	case code == http.StatusMethodNotAllowed && (errors.Is(up.err, store.ErrChecksum) || up.body.complete() != nil):
		code = http.StatusBadRequest
	case code == http.StatusCreated:
		fileHeaders(w.Header(), up.result)
		if !up.mtime.IsZero() {
			w.Header().Set("X-OC-MTime", "accepted")
		}
		if up.existed {
			code = http.StatusNoContent
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write sends, with a 400 for a checksum mismatch, the reason.
func (w *putStatus) Write(b []byte) (int, error) { return w.ResponseWriter.Write(b) }

// copyPaths are a COPY's source and destination, so the copy of a file can
// keep its source's date (see davFS.OpenFile), and why a copy failed.
type copyPaths struct {
	src, dst string
	err      error
}

type copyKey struct{}

// getKey holds a GET's response headers, which davFS.OpenFile fills from
// the file it opens.
type getKey struct{}

// replaceKey holds the destination that a COPY or MOVE of a file replaces
// by rename, which davFS.RemoveAll leaves in place.
type replaceKey struct{}

func writeStoreError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, store.ErrNoSpace):
		http.Error(w, "the box's disk is full", http.StatusInsufficientStorage)
	case errors.Is(err, store.ErrQuota):
		http.Error(w, err.Error(), http.StatusInsufficientStorage)
	case errors.Is(err, store.ErrChecksum):
		http.Error(w, err.Error(), http.StatusBadRequest)
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
