package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
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

// FilesPrefix is where the web pages show the same files (package webui).
const FilesPrefix = "/files"

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
	// Browser, if set, lets the web pages' session stand for Basic
	// credentials, and sends a browser that has neither to the login page.
	Browser Browser

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

// Browser is the web pages' side of logging in (package webui).
type Browser interface {
	// SessionUser returns the user whose session cookie r carries. A
	// request that may change something (any method but GET, HEAD,
	// OPTIONS and PROPFIND) must also carry the session's CSRF token in
	// the X-CSRF-Token header.
	SessionUser(r *http.Request) (string, bool)
	// LoginURL is the login page, which comes back to next.
	LoginURL(next string) string
	// Routes adds the pages to the HTTPS server's mux.
	Routes(mux *http.ServeMux)
}

// wantsPage says whether r is a browser navigating (rather than a WebDAV
// or sync client): a GET or HEAD that accepts HTML.
func wantsPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.Contains(r.Header.Get("Accept"), "text/html")
}

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
		if d.Browser != nil {
			if user, ok := d.Browser.SessionUser(r); ok {
				return user, true
			}
			if wantsPage(r) {
				// A browser gets the login form, not a Basic-auth dialog
				// it could never log out of.
				http.Redirect(w, r, d.Browser.LoginURL(r.URL.RequestURI()), http.StatusSeeOther)
				return "", false
			}
		}
		challenge(w)
		return "", false
	}
	switch res := d.CheckPassword(r, "webdav", user, pw); res {
	case LoginOK:
		return user, true
	case LoginWrong:
		challenge(w)
	default:
		res.answer(w)
	}
	return "", false
}

// LoginResult is what a password check under the login bans came to.
type LoginResult int

const (
	LoginOK LoginResult = iota
	LoginWrong
	LoginBanned // too many failures from the address: try later
	LoginFault  // the server could not check (its log says why)
)

// answer tells a client a result other than LoginOK and LoginWrong.
func (res LoginResult) answer(w http.ResponseWriter) {
	switch res {
	case LoginBanned:
		w.Header().Set("Retry-After", "60")
		http.Error(w, "too many failed logins from your address; try again later", http.StatusTooManyRequests)
	case LoginFault:
		http.Error(w, "the server cannot check passwords now; its log says why", http.StatusServiceUnavailable)
	}
}

// Message is a result's words for a person at a login form.
func (res LoginResult) Message() string {
	switch res {
	case LoginWrong:
		return "Wrong user name or password."
	case LoginBanned:
		return "Too many failed logins from your address: try again in a few minutes."
	case LoginFault:
		return "The box cannot check passwords now; its log says why."
	}
	return ""
}

// CheckPassword checks user's password (or app password) from r's address
// under the login bans that WebDAV and SFTP share; proto names the way in
// for the log ("webdav", "web").
func (d *DAV) CheckPassword(r *http.Request, proto, user, pw string) LoginResult {
	return d.checkPassword(r, proto, user, pw, d.Users.CheckPassword)
}

// CheckAccountPassword is CheckPassword for the account's own password
// only, no app password (users.DB.CheckAccountPassword): the web pages'
// login form and the account page use it.
func (d *DAV) CheckAccountPassword(r *http.Request, proto, user, pw string) LoginResult {
	return d.checkPassword(r, proto, user, pw, d.Users.CheckAccountPassword)
}

func (d *DAV) checkPassword(r *http.Request, proto, user, pw string, check func(user, pw string, suspect bool) (bool, error)) LoginResult {
	addr := guard.Host(r.RemoteAddr)
	if banned, _ := d.Guard.Banned(addr); banned {
		return LoginBanned
	}
	done, allowed := d.Guard.Begin(addr, proto, user)
	if !allowed {
		return LoginBanned
	}
	ok, err := check(user, pw, d.Guard.Suspect(addr))
	switch {
	case err != nil:
		done(guard.ServerFault)
		d.Log.Error(fmt.Sprintf("%s: login of %q from %s not checked: %v", proto, user, addr, err))
		return LoginFault
	case !ok:
		done(guard.WrongPassword)
		return LoginWrong
	}
	done(guard.LoggedIn)
	return LoginOK
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
				WriteStoreError(w, err) // before a byte is sent (Expect: 100-continue)
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
			// A folder is shown by the web pages.
			http.Redirect(w, r, FilesPrefix+(&url.URL{Path: strings.TrimSuffix(path.Clean("/"+name), "/") + "/"}).EscapedPath(), http.StatusSeeOther)
			return
		}
		// A file is served as data, never as a page of the box's: an
		// uploaded .html or .svg runs no script with the user's session.
		w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'")
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
		WriteStoreError(w, err)
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

// StoreStatus is the HTTP status and the words WebDAV answers a change the
// store refused with (507 for a full disk or quota, 404, 409...).
func StoreStatus(err error) (int, string) {
	switch {
	case errors.Is(err, store.ErrNoSpace):
		return http.StatusInsufficientStorage, "the box's disk is full"
	case errors.Is(err, store.ErrQuota):
		return http.StatusInsufficientStorage, err.Error()
	case errors.Is(err, store.ErrChecksum), errors.Is(err, store.ErrBadName):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound, "not found"
	case errors.Is(err, fs.ErrExist):
		return http.StatusConflict, "exists"
	}
	return http.StatusForbidden, "refused"
}

// WriteStoreError answers a request whose change the store refused, with
// the status WebDAV gives it (507 for a full disk or quota, 404, 409...).
func WriteStoreError(w http.ResponseWriter, err error) {
	code, msg := StoreStatus(err)
	http.Error(w, msg, code)
}
