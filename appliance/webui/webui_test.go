package webui

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/bonesync/bonesync/appliance/accounts"
	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/admin/admintest"
	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/datadisk"
	filesdav "github.com/bonesync/bonesync/appliance/files"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// site is the pages and WebDAV, wired as the server wires them, on a TLS
// test server, with the users admin, ann and bob.
type site struct {
	t         *testing.T
	common    *Common
	loginRoom *Login
	account   *Account
	admin     *Admin
	sharing   *Sharing
	book      *shares.Book
	store     *store.Store
	users     *users.DB
	srv       *httptest.Server
	c         *http.Client
	now       time.Time
}

func newSite(t *testing.T) *site {
	t.Helper()
	dir := t.TempDir()
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{users.Admin, "ann", "bob"} {
		if err := db.Add(n, n+"-password"); err != nil {
			t.Fatal(err)
		}
	}
	files, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	files.SetTrashPolicy(30*24*time.Hour, 0)
	log := slog.New(slog.DiscardHandler)
	door := auth.New(db, log)
	door.LoginPage = LoginPage
	dav := &filesdav.Handler{Store: files, Quotas: db, Locks: locks.New(), Log: log, FolderPage: FolderURL}
	s := &site{t: t, now: time.Now()}
	book, err := shares.Open(t.TempDir(), files, db, log)
	if err != nil {
		t.Fatal(err)
	}
	files.SetMounts(book, db.Quota)
	rec, err := audit.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	door.Audit(rec)
	book.Audit = rec
	board := notices.Open(t.TempDir(), log)
	s.store, s.users = files, db
	s.common = &Common{Log: log, Notices: board, Audit: rec}
	pv := &preview.Maker{Store: files, Log: log}
	s.loginRoom = &Login{Common: s.common, WaysIn: door, Apps: db, Passkeys: door.Passkeys()}
	s.account = &Account{Common: s.common, WaysIn: door, Users: db, Passkeys: door.Passkeys(), Keys: users.PasskeysOf(db)}
	s.admin = &Admin{Common: s.common, Sessions: door.Sessions(), Users: db, Store: files,
		Accounts: &accounts.Service{Users: db, Parts: map[string]accounts.Part{"shares": book, "notices": board}}}
	s.book = book
	s.sharing = &Sharing{Common: s.common, Store: files, Users: db, Shares: book}
	door.Sessions().Now = func() time.Time { return s.now }
	mux := front.NewRoutes(door)
	dav.Routes(mux)
	for _, m := range []front.Mount{s.common, s.loginRoom, s.account, s.admin,
		&Files{Common: s.common, Store: files, Users: db, Search: dav, DAV: filesdav.Prefix, Thumbs: true},
		&Photos{Common: s.common, Store: files, Users: db, Previews: pv},
		s.sharing,
		&Public{Common: s.common, WaysIn: door, Shares: book, Store: files, Previews: pv}} {
		m.Routes(mux)
	}
	s.srv = httptest.NewTLSServer(mux)
	t.Cleanup(s.srv.Close)
	s.c = s.srv.Client()
	s.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return s
}

// do sends a request with the given cookie and headers (pairs), and a
// form body if form is not nil.
func (s *site) do(method, path, cookie string, form url.Values, hdr ...string) (*http.Response, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, s.srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" (?:value|content)="([^"]+)"`)
var csrfMeta = regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`)

func cookieOf(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// login logs user in through the form; it returns the session's cookie
// header and its CSRF token.
func (s *site) login(user, pw string) (string, string) {
	s.t.Helper()
	resp, page := s.do("GET", "/login", "", nil)
	lc := cookieOf(resp, loginCookie)
	m := csrfField.FindStringSubmatch(page)
	if lc == nil || m == nil {
		s.t.Fatalf("login page without its token: %s", page)
	}
	resp, page = s.do("POST", "/login", loginCookie+"="+lc.Value, url.Values{"csrf": {m[1]}, "username": {user}, "password": {pw}, "next": {"/files/"}})
	sc := cookieOf(resp, auth.SessionCookie)
	if resp.StatusCode != http.StatusSeeOther || sc == nil {
		s.t.Fatalf("login of %s: %s %s", user, resp.Status, page)
	}
	cookie := auth.SessionCookie + "=" + sc.Value
	_, page = s.do("GET", "/files/", cookie, nil)
	m = csrfMeta.FindStringSubmatch(page)
	if m == nil {
		s.t.Fatalf("files page without a CSRF token: %s", page)
	}
	return cookie, m[1]
}

func TestLoginSessionCookie(t *testing.T) {
	s := newSite(t)
	post := func(cookieFrom, tokenFrom int, pw string) *http.Response {
		var cookies []*http.Cookie
		var tokens []string
		for i := 0; i < 2; i++ {
			resp, page := s.do("GET", "/login", "", nil)
			cookies = append(cookies, cookieOf(resp, loginCookie))
			tokens = append(tokens, csrfField.FindStringSubmatch(page)[1])
		}
		resp, _ := s.do("POST", "/login", loginCookie+"="+cookies[cookieFrom].Value,
			url.Values{"csrf": {tokens[tokenFrom]}, "username": {"ann"}, "password": {pw}})
		return resp
	}
	if resp := post(0, 1, "ann-password"); resp.StatusCode != http.StatusForbidden || cookieOf(resp, auth.SessionCookie) != nil {
		t.Errorf("a login whose token is not its form's: %s, want 403 and no session", resp.Status)
	}
	if resp := post(0, 0, "wrong-password"); resp.StatusCode != http.StatusUnauthorized || cookieOf(resp, auth.SessionCookie) != nil {
		t.Errorf("a wrong password: %s, want 401 and no session", resp.Status)
	}
	resp := post(1, 1, "ann-password")
	sc := cookieOf(resp, auth.SessionCookie)
	if resp.StatusCode != http.StatusSeeOther || sc == nil || !sc.Secure || !sc.HttpOnly || sc.SameSite != http.SameSiteStrictMode || sc.MaxAge <= 0 || sc.Path != "/" || sc.Domain != "" {
		t.Errorf("login: %s, session cookie %+v: want Secure, HttpOnly, SameSite=Strict, expiring, host-only", resp.Status, sc)
	}
}

func TestLoginBansShared(t *testing.T) {
	s := newSite(t)
	var last *http.Response
	for i := 0; i < 30; i++ {
		resp, page := s.do("GET", "/login", "", nil)
		last, _ = s.do("POST", "/login", loginCookie+"="+cookieOf(resp, loginCookie).Value,
			url.Values{"csrf": {csrfField.FindStringSubmatch(page)[1]}, "username": {"ann"}, "password": {fmt.Sprint("guess-", i)}})
		if last.StatusCode == http.StatusTooManyRequests {
			break
		}
	}
	if last.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("30 wrong passwords at the form: %s, want 429 at some point", last.Status)
	}
	req, _ := http.NewRequest("PROPFIND", s.srv.URL+"/dav/", nil)
	req.SetBasicAuth("ann", "ann-password")
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("WebDAV from the address the form banned: %s, want 429", resp.Status)
	}
}

func TestBrowserSentToLoginWebDAVKeepsBasic(t *testing.T) {
	s := newSite(t)
	resp, _ := s.do("GET", "/dav/", "", nil, "Accept", "text/html,application/xhtml+xml")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("GET /dav/ accepting HTML: %s to %q, want 401 with a Basic challenge (KIO accepts HTML)", resp.Status, resp.Header.Get("Location"))
	}
	resp, _ = s.do("GET", "/files/docs/", "", nil, "Accept", "text/html")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") {
		t.Errorf("a browser at /files/: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	resp, _ = s.do("PROPFIND", "/dav/", "", nil, "Depth", "0")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("a WebDAV client at /dav/: %s, want 401 with a Basic challenge", resp.Status)
	}
}

func TestCSRF(t *testing.T) {
	s := newSite(t)
	cookie, tok := s.login("ann", "ann-password")
	put := func(hdr ...string) int {
		resp, _ := s.do("PUT", "/dav/note.txt", cookie, nil, hdr...)
		return resp.StatusCode
	}
	if code := put(); code != http.StatusUnauthorized {
		t.Errorf("a WebDAV PUT with the session cookie and no CSRF token: %d, want 401", code)
	}
	if code := put("X-CSRF-Token", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("a WebDAV PUT with a wrong CSRF token: %d, want 401", code)
	}
	if code := put("X-CSRF-Token", tok, "Origin", "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("a WebDAV PUT from another origin: %d, want 403", code)
	}
	if code := put("X-CSRF-Token", tok); code != http.StatusCreated {
		t.Errorf("a WebDAV PUT from the page: %d, want 201", code)
	}
	// A form another site's page posts, with the cookie a browser would
	// send (were it not SameSite=Strict) and without the token.
	for _, form := range []url.Values{{"action": {"app-new"}, "label": {"evil"}}, {"action": {"app-new"}, "label": {"evil"}, "csrf": {"guess"}}} {
		resp, _ := s.do("POST", "/account", cookie, form, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a cross-site POST %v: %s, want 403", form, resp.Status)
		}
	}
	resp, _ := s.do("POST", "/logout", cookie, url.Values{})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a logout without the token: %s, want 403", resp.Status)
	}
	if apps, _ := s.users.AppPasswords("ann"); len(apps) != 0 {
		t.Errorf("a refused request made app passwords: %v", apps)
	}
	resp, _ = s.do("POST", "/account", cookie, url.Values{"action": {"app-new"}, "label": {"phone"}, "csrf": {tok}}, "Origin", s.srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a POST from the page: %s", resp.Status)
	}
}

func TestSessionEnds(t *testing.T) {
	s := newSite(t)
	open := func(cookie string) bool {
		resp, _ := s.do("GET", "/files/", cookie, nil, "Accept", "text/html")
		return resp.StatusCode == http.StatusOK
	}
	cookie, tok := s.login("ann", "ann-password")
	if !open(cookie) {
		t.Fatal("the session does not open /files/")
	}
	resp, _ := s.do("POST", "/logout", cookie, url.Values{"csrf": {tok}})
	if resp.StatusCode != http.StatusSeeOther || cookieOf(resp, auth.SessionCookie) == nil || cookieOf(resp, auth.SessionCookie).MaxAge >= 0 {
		t.Errorf("logout: %s, want 303 clearing the cookie", resp.Status)
	}
	if open(cookie) {
		t.Error("the cookie still opens /files/ after logout")
	}
	if r, _ := s.do("PROPFIND", "/dav/", cookie, nil, "Depth", "0"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the cookie still opens WebDAV after logout: %s", r.Status)
	}

	cookie, _ = s.login("ann", "ann-password")
	s.now = s.now.Add(auth.IdleFor - time.Minute)
	if !open(cookie) {
		t.Error("a session used within auth.IdleFor ended")
	}
	s.now = s.now.Add(auth.IdleFor + time.Minute)
	if open(cookie) {
		t.Error("a session idle for longer than auth.IdleFor still works")
	}

	cookie, _ = s.login("ann", "ann-password")
	for end := s.now.Add(auth.MaxFor); s.now.Before(end); s.now = s.now.Add(auth.IdleFor / 2) {
		if !open(cookie) {
			t.Fatalf("a session in use ended after %v", s.now.Sub(end.Add(-auth.MaxFor)))
		}
	}
	s.now = s.now.Add(time.Minute)
	if open(cookie) {
		t.Error("a session older than auth.MaxFor still works")
	}

	cookie, _ = s.login("ann", "ann-password")
	s.users.SetPassword("ann", "another-password")
	if open(cookie) {
		t.Error("a session outlived a password change")
	}
}

func TestUsersSeeOnlyTheirFiles(t *testing.T) {
	s := newSite(t)
	ann, annTok := s.login("ann", "ann-password")
	bob, _ := s.login("bob", "bob-password")
	s.do("MKCOL", "/dav/private/", ann, nil, "X-CSRF-Token", annTok)
	req, _ := http.NewRequest("PUT", s.srv.URL+"/dav/private/diary-of-ann.txt", strings.NewReader("dear diary"))
	req.Header.Set("Cookie", ann)
	req.Header.Set("X-CSRF-Token", annTok)
	if resp, err := s.c.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("ann's upload: %v %v", resp, err)
	}
	_, page := s.do("GET", "/files/private/", ann, nil)
	if !strings.Contains(page, "diary-of-ann.txt") {
		t.Fatalf("ann does not see her file:\n%s", page)
	}
	for _, p := range []string{"/files/", "/trash/", "/files/?zip"} {
		resp, page := s.do("GET", p, bob, nil)
		if strings.Contains(page, "diary") || resp.StatusCode != http.StatusOK {
			t.Errorf("bob's %s (%s) shows ann's file", p, resp.Status)
		}
	}
	for _, p := range []string{"/files/private/", "/files/private/diary-of-ann.txt", "/files/private/diary-of-ann.txt?view", "/files/%2E%2E/ann/private/diary-of-ann.txt", "/dav/private/diary-of-ann.txt"} {
		resp, page := s.do("GET", p, bob, nil)
		if strings.Contains(page, "dear diary") || resp.StatusCode != http.StatusNotFound {
			t.Errorf("bob's %s: %s, want 404", p, resp.Status)
		}
	}
}

func TestAppPasswordForWebDAVUntilRevoked(t *testing.T) {
	s := newSite(t)
	cookie, tok := s.login("ann", "ann-password")
	_, page := s.do("POST", "/account", cookie, url.Values{"action": {"app-new"}, "label": {"rclone"}, "csrf": {tok}})
	m := regexp.MustCompile(`<code id="new-app-password">([^<]+)</code>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no app password shown:\n%s", page)
	}
	// It says what to type beside it: the address the browser used, and
	// the user name.
	if !strings.Contains(page, `<code id="new-app-server">`+s.srv.URL+`</code>, user name <code>ann</code>`) {
		t.Errorf("the app password box does not say the server and user name:\n%s", page)
	}
	propfind := func() int {
		req, _ := http.NewRequest("PROPFIND", s.srv.URL+"/dav/", nil)
		req.SetBasicAuth("ann", m[1])
		req.Header.Set("Depth", "0")
		resp, err := s.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := propfind(); code != http.StatusMultiStatus {
		t.Fatalf("PROPFIND with the app password: %d, want 207", code)
	}
	// It opens WebDAV, not the pages: not the login form, and not as the
	// "current password" that changes the password.
	resp, page := s.do("GET", "/login", "", nil)
	lc, lm := cookieOf(resp, loginCookie), csrfField.FindStringSubmatch(page)
	resp, _ = s.do("POST", "/login", loginCookie+"="+lc.Value, url.Values{"csrf": {lm[1]}, "username": {"ann"}, "password": {m[1]}})
	if resp.StatusCode != http.StatusUnauthorized || cookieOf(resp, auth.SessionCookie) != nil {
		t.Errorf("login form with an app password: %s, want 401 and no session", resp.Status)
	}
	resp, _ = s.do("POST", "/account", cookie, url.Values{"action": {"password"}, "current": {m[1]}, "new": {"taken-over-1"}, "again": {"taken-over-1"}, "csrf": {tok}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("password change with an app password as the current one: %s, want 403", resp.Status)
	}
	if ok, _ := s.users.CheckPassword("ann", "ann-password", false, users.Client); !ok {
		t.Error("the account password changed")
	}
	apps, _ := s.users.AppPasswords("ann")
	s.do("POST", "/account", cookie, url.Values{"action": {"app-revoke"}, "id": {apps[0].ID}, "csrf": {tok}})
	if code := propfind(); code != http.StatusUnauthorized {
		t.Errorf("PROPFIND with a revoked app password: %d, want 401", code)
	}
}

func TestNextcloudLoginFlow(t *testing.T) {
	s := newSite(t)
	resp, body := s.do("POST", "/index.php/login/v2", "", nil, "User-Agent", "Mozilla/5.0 (Linux) mirall/3.7.3 (Nextcloud, debian-6.1 ClientArchitecture: x86_64 OsArchitecture: x86_64)")
	var start struct {
		Poll  struct{ Token, Endpoint string }
		Login string
	}
	if err := json.Unmarshal([]byte(body), &start); err != nil || resp.StatusCode != 200 {
		t.Fatalf("login/v2: %s %s", resp.Status, body)
	}
	pollPath := strings.TrimPrefix(start.Poll.Endpoint, s.srv.URL)
	loginPath := strings.TrimPrefix(start.Login, s.srv.URL)
	if pollPath != "/index.php/login/v2/poll" || !strings.HasPrefix(loginPath, "/index.php/login/v2/flow/") {
		t.Fatalf("login/v2 answered %+v", start)
	}
	poll := func() (*http.Response, string) {
		return s.do("POST", pollPath, "", url.Values{"token": {start.Poll.Token}})
	}
	if r, _ := poll(); r.StatusCode != http.StatusNotFound {
		t.Errorf("poll before the grant: %s, want 404", r.Status)
	}
	if r, _ := s.do("GET", loginPath, "", nil); r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/login?next=") {
		t.Errorf("the login link without a session: %s %s", r.Status, r.Header.Get("Location"))
	}
	cookie, tok := s.login("ann", "ann-password")
	_, page := s.do("GET", loginPath, cookie, nil)
	if !strings.Contains(page, "The Nextcloud desktop app at the address <strong>127.0.0.1</strong>") || !strings.Contains(page, "Grant access") {
		t.Errorf("the grant page does not name the app and its address:\n%s", page)
	}
	if r, _ := s.do("POST", loginPath, cookie, url.Values{}); r.StatusCode != http.StatusForbidden {
		t.Errorf("a grant without the CSRF token: %s, want 403", r.Status)
	}
	if r, _ := s.do("POST", loginPath, cookie, url.Values{"csrf": {tok}}); r.StatusCode != http.StatusOK {
		t.Fatalf("grant: %s", r.Status)
	}
	if r, _ := s.do("POST", loginPath, cookie, url.Values{"csrf": {tok}}); r.StatusCode != http.StatusConflict {
		t.Errorf("a second grant: %s, want 409", r.Status)
	}
	if apps, _ := s.users.AppPasswords("ann"); len(apps) != 1 {
		t.Errorf("%d app passwords after two grants, want 1", len(apps))
	}
	r, body := poll()
	var creds struct{ Server, LoginName, AppPassword string }
	if err := json.Unmarshal([]byte(body), &creds); err != nil || r.StatusCode != 200 || creds.LoginName != "ann" || creds.Server != s.srv.URL {
		t.Fatalf("poll after the grant: %s %s", r.Status, body)
	}
	if ok, _ := s.users.CheckPassword("ann", creds.AppPassword, false, users.Client); !ok {
		t.Error("the flow's app password does not log ann in")
	}
	if apps, _ := s.users.AppPasswords("ann"); len(apps) != 1 || !strings.HasPrefix(apps[0].Label, "The Nextcloud desktop app (") {
		t.Errorf("app passwords %+v, want one labelled after the app", apps)
	}
	if r, _ := poll(); r.StatusCode != http.StatusNotFound {
		t.Errorf("a second poll: %s, want 404 (collected once)", r.Status)
	}
}

func TestDownloadRangeAndZip(t *testing.T) {
	s := newSite(t)
	cookie, tok := s.login("ann", "ann-password")
	put := func(p, body string) {
		req, _ := http.NewRequest("PUT", s.srv.URL+"/dav/"+p, strings.NewReader(body))
		req.Header.Set("Cookie", cookie)
		req.Header.Set("X-CSRF-Token", tok)
		if resp, err := s.c.Do(req); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("PUT %s: %v %v", p, resp, err)
		}
	}
	for _, d := range []string{"album/", "album/inner/", "empty/"} {
		s.do("MKCOL", "/dav/"+d, cookie, nil, "X-CSRF-Token", tok)
	}
	want := map[string]string{"album/a.txt": "alpha", "album/inner/b.bin": strings.Repeat("b", 100000), "album/élan.md": "# élan"}
	for p, b := range want {
		put(p, b)
	}
	resp, body := s.do("GET", "/files/album/a.txt", cookie, nil, "Range", "bytes=1-3")
	if resp.StatusCode != http.StatusPartialContent || body != "lph" {
		t.Errorf("Range: %s %q", resp.Status, body)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("a download is not an attachment in a sandbox: %q", cd)
	}
	_, page := s.do("GET", "/files/album/", cookie, nil)
	if !strings.Contains(page, "inner/") || !strings.Contains(page, "97.7 KiB") {
		t.Errorf("the listing lacks the folder or its size:\n%s", page)
	}
	resp, body = s.do("GET", "/files/album/?zip", cookie, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("zip: %s", resp.Status)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		got[f.Name] = string(b)
	}
	for p, b := range want {
		if got[p] != b {
			t.Errorf("zip entry %s = %d bytes, want %d", p, len(got[p]), len(b))
		}
	}
	if len(got) != len(want) {
		t.Errorf("zip holds %d entries, want %d: %v", len(got), len(want), func() []string {
			var n []string
			for k := range got {
				n = append(n, k)
			}
			return n
		}())
	}
	_, page = s.do("GET", "/files/album/%C3%A9lan.md?view", cookie, nil)
	if !strings.Contains(page, "# élan") {
		t.Errorf("the text preview lacks the text:\n%s", page)
	}
}

// The first page and everything it loads stay under 100 KB, so the board
// serves it at once; every asset is the box's own.
func TestPagesSmallAndSelfContained(t *testing.T) {
	s := newSite(t)
	cookie, _ := s.login("ann", "ann-password")
	for _, p := range []string{"/login", "/files/"} {
		c := cookie
		if p == "/login" {
			c = ""
		}
		_, page := s.do("GET", p, c, nil)
		total := len(page)
		for _, m := range regexp.MustCompile(`(?:href|src)="(/ui/[^"]+)"`).FindAllStringSubmatch(page, -1) {
			resp, body := s.do("GET", strings.ReplaceAll(m[1], "&amp;", "&"), "", nil)
			if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
				t.Errorf("%s: %s, Cache-Control %q", m[1], resp.Status, resp.Header.Get("Cache-Control"))
			}
			total += len(body)
		}
		if total > 100_000 {
			t.Errorf("%s with its assets is %d bytes, want under 100 KB", p, total)
		}
		if regexp.MustCompile(`(?:href|src)="(?:https?:)?//`).MatchString(page) {
			t.Errorf("%s loads something from off the box", p)
		}
		t.Logf("%s with its assets: %d bytes", p, total)
	}
}

func TestTrashRestoreAndVersions(t *testing.T) {
	s := newSite(t)
	cookie, tok := s.login("ann", "ann-password")
	put := func(body string) {
		req, _ := http.NewRequest("PUT", s.srv.URL+"/dav/report.txt", strings.NewReader(body))
		req.Header.Set("Cookie", cookie)
		req.Header.Set("X-CSRF-Token", tok)
		if resp, err := s.c.Do(req); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("PUT: %v %v", resp, err)
		}
	}
	put("draft one")
	put("draft two")
	_, page := s.do("GET", "/trash/?path=/report.txt", cookie, nil)
	m := regexp.MustCompile(`data-id="([^"]+)" data-path="/report.txt"`).FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, "earlier version") {
		t.Fatalf("no earlier version of report.txt listed:\n%s", page)
	}
	resp, page := s.do("POST", "/trash/", cookie, url.Values{"csrf": {tok}, "action": {"restore"}, "id": {m[1]}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Restored to /report.txt") || !strings.Contains(page, "The file that was there is now in the trash") {
		t.Fatalf("restore: %s\n%s", resp.Status, page)
	}
	if _, body := s.do("GET", "/files/report.txt", cookie, nil); body != "draft one" {
		t.Errorf("after restoring the version: %q", body)
	}
	s.do("DELETE", "/dav/report.txt", cookie, nil, "X-CSRF-Token", tok)
	_, page = s.do("GET", "/trash/", cookie, nil)
	if !strings.Contains(page, `data-path="/report.txt"`) || !strings.Contains(page, "deleted") {
		t.Errorf("the deleted file is not in the trash:\n%s", page)
	}
	if r, _ := s.do("POST", "/trash/", cookie, url.Values{"action": {"empty"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("emptying the trash without the CSRF token: %s, want 403", r.Status)
	}
	resp, page = s.do("POST", "/trash/", cookie, url.Values{"csrf": {tok}, "action": {"empty"}})
	if resp.StatusCode != http.StatusOK || strings.Contains(page, "data-path=") {
		t.Errorf("empty the trash: %s\n%s", resp.Status, page)
	}
}

func TestLoginNextStaysOnTheBox(t *testing.T) {
	for next, want := range map[string]string{
		"/files/photos/":            "/files/photos/",
		"/files/a%20b/?sort=size":   "/files/a%20b/?sort=size",
		"//evil.example/":           "/files/",
		"/\\evil.example/":          "/files/",
		"/\t/evil.example/":         "/files/",
		"/\n/evil.example/":         "/files/",
		"https://evil.example/":     "/files/",
		"javascript:alert(1)":       "/files/",
		"/%2F/evil.example":         "/files/",
		"files/":                    "/files/",
		"":                          "/files/",
		"/files/#frag":              "/files/",
		"/ok?next=//evil.example/x": "/ok?next=//evil.example/x",
	} {
		if got := localNext(next); got != want {
			t.Errorf("localNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// Starting a flow needs no login: a flood of them pushes out the oldest
// waiting one instead of locking the owner's apps out.
func TestLoginFlowFloodDoesNotLockOut(t *testing.T) {
	s := newSite(t)
	for i := 0; i < maxFlows+10; i++ {
		if r, _ := s.do("POST", flowStart, "", nil); r.StatusCode != http.StatusOK {
			t.Fatalf("flow %d: %s", i, r.Status)
		}
	}
	if n := len(s.loginRoom.flows.m); n != maxFlowsPerSource {
		t.Errorf("%d flows kept from one address, want %d", n, maxFlowsPerSource)
	}
}

// No stranger evicts the owner's pending flow: one address replaces only
// its own, and when many addresses fill the table a newcomer evicts from
// the one holding the most (it took about 64 starts from one address to
// evict the owner's, which then read "expired").
func TestLoginFlowsFairUnderAFlood(t *testing.T) {
	var f loginFlows
	f.m = map[string]*flow{}
	now := time.Now()
	add := func(id, src string) bool {
		now = now.Add(time.Millisecond)
		return f.add(id, &flow{source: src, created: now}, now)
	}
	if !add("owner", "192.168.1.10") {
		t.Fatal("the owner's flow was refused")
	}
	for i := 0; i < 1000; i++ { // one address, over and over
		add(fmt.Sprintf("a%d", i), "10.0.0.66")
	}
	for i := 0; i < 300; i++ { // many addresses, each at its cap: the table full
		for j := 0; j < maxFlowsPerSource+1; j++ {
			add(fmt.Sprintf("d%d-%d", i, j), fmt.Sprintf("10.1.%d.%d", i/200, i%200))
		}
	}
	if len(f.m) < maxFlows {
		t.Fatalf("the table holds %d flows: the test never filled it", len(f.m))
	}
	if f.m["owner"] == nil {
		t.Fatal("a stranger's flood evicted the owner's pending flow")
	}
	if len(f.m) > maxFlows {
		t.Errorf("%d flows kept, more than %d", len(f.m), maxFlows)
	}
	if !add("owner-again", "192.168.1.10") {
		t.Error("the owner could not start another flow under the flood")
	}
}

// The grant page names the app from a fixed list and the address it asked
// from, never the requester's own words.
func TestLoginFlowGrantPageShowsNoFreeText(t *testing.T) {
	s := newSite(t)
	_, body := s.do("POST", flowStart, "", nil, "User-Agent", "Your bank's security check (official)")
	var start struct{ Login string }
	json.Unmarshal([]byte(body), &start)
	cookie, _ := s.login("ann", "ann-password")
	_, page := s.do("GET", strings.TrimPrefix(start.Login, s.srv.URL), cookie, nil)
	if strings.Contains(page, "bank") || !strings.Contains(page, "An app at the address <strong>127.0.0.1</strong>") {
		t.Errorf("the grant page shows the requester's words, or not its address:\n%s", page)
	}
}

// The copies' section: the plan, the last run, "make the first copy"
// showing the password once, then the run going on.
func TestAdminPageCopies(t *testing.T) {
	s := newSite(t)
	var status *copies.Status
	started := 0
	s.admin.System = &admintest.System{
		Plan: "to sftp://nas/backup, daily at 03:30",
		LastCopy: func() (copies.Status, bool) {
			if status == nil {
				return copies.Status{}, false
			}
			return *status, true
		},
		StartCopy: func() (string, error) {
			started++
			status = &copies.Status{Running: &copies.Progress{Started: time.Now(), At: time.Now(), Files: 3}}
			if started == 1 {
				return "the-password-made-once", nil
			}
			return "", copies.ErrRunning
		},
	}
	cookie, csrf := s.login(users.Admin, users.Admin+"-password")
	_, page := s.do("GET", "/admin/", cookie, nil)
	if !strings.Contains(page, "to sftp://nas/backup, daily at 03:30") || !strings.Contains(page, "Make the first copy") || !strings.Contains(page, "No copy made yet.") {
		t.Fatalf("before any copy: %s", page)
	}
	resp, page := s.do("POST", "/admin/", cookie, url.Values{"csrf": {csrf}, "action": {"copy-now"}})
	if resp.StatusCode != 200 || !strings.Contains(page, `<code id="copy-password">the-password-made-once</code>`) || !strings.Contains(page, "3 sent") {
		t.Fatalf("the first copy: %s %s", resp.Status, page)
	}
	_, page = s.do("GET", "/admin/", cookie, nil)
	if strings.Contains(page, "the-password-made-once") || !regexp.MustCompile(`value="copy-now" disabled`).MatchString(page) {
		t.Fatalf("the password is shown again, or the button is not disabled while running")
	}
	resp, page = s.do("POST", "/admin/", cookie, url.Values{"csrf": {csrf}, "action": {"copy-now"}})
	if resp.StatusCode != 409 || !strings.Contains(page, "a copy is already running") {
		t.Fatalf("a second copy: %s", resp.Status)
	}
}

// The admin page shows each disk's writes and, when it reports errors,
// the warning first.
func TestAdminPageShowsTheDisksHealth(t *testing.T) {
	s := newSite(t)
	s.admin.System = &admintest.System{Reports: []health.Report{{Disk: "mmcblk0", Identity: health.Identity{Name: "SL16G"}, Written: 3 << 20,
		Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Sampled: time.Now(),
		Days:     []health.Day{{Date: "2026-11-30", Written: 1 << 20}, {Date: "2026-12-01", Written: 2 << 20}},
		IOErrors: 1, LastIOError: "I/O error, dev mmcblk0, sector 99"}},
	}
	cookie, _ := s.login(users.Admin, users.Admin+"-password")
	resp, page := s.do("GET", "/admin/", cookie, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /admin/ = %s", resp.Status)
	}
	for _, want := range []string{
		`<p class="problem" role="alert">1 I/O errors (the last: I/O error, dev mmcblk0, sector 99). A disk that reports errors may soon lose files`,
		"mmcblk0 (SL16G): ", "since 2026-11-01; WARNING",
		`<tr><td data-label="Day (UTC)">2026-12-01</td><td class="num" data-label="Written">` + humanSize(2<<20) + `</td></tr><tr><td data-label="Day (UTC)">2026-11-30</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the admin page lacks %q", want)
		}
	}
}

// The admin page shows the memory budget: its size, what each kind of
// work was granted and refused.
func TestAdminPageShowsTheMemory(t *testing.T) {
	s := newSite(t)
	mem := budget.New(budget.Admission, budget.Options{})
	release, _ := mem.Take(context.Background(), "preview", 3<<20)
	release()
	mem.Take(context.Background(), "zip", budget.Admission+1)
	s.admin.System = &admintest.System{Budget: mem}
	cookie, _ := s.login(users.Admin, users.Admin+"-password")
	_, page := s.do("GET", "/admin/", cookie, nil)
	for _, want := range []string{
		`id="memory"`, "a budget of " + humanSize(budget.Admission),
		`<tr><td class="name">preview</td><td class="num" data-label="Done">1</td><td class="num" data-label="Turned away">0</td><td class="num" data-label="Most at once">` + humanSize(3<<20) + `</td></tr>`,
		`<tr><td class="name">zip</td><td class="num" data-label="Done">0</td><td class="num" data-label="Turned away">1</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the admin page lacks %q", want)
		}
	}
}

// The admin page says where the files are: on the card, with how to move
// them to a USB disk (on the board), or on the disk, or how far the move is.
func TestAdminPageShowsTheDataDisk(t *testing.T) {
	s := newSite(t)
	var rec datadisk.Record
	adopted := false
	s.admin.System = &admintest.System{BoardName: "beaglebone-black", Data: func() (datadisk.Record, bool) { return rec, adopted }}
	cookie, _ := s.login(users.Admin, users.Admin+"-password")
	page := func() string {
		resp, page := s.do("GET", "/admin/", cookie, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET /admin/ = %s", resp.Status)
		}
		return page
	}
	if p := page(); !strings.Contains(p, "The files are on the SD card.") || !strings.Contains(p, "<code>disk adopt sda</code>") {
		t.Error("the admin page does not say the files are on the card, and how to move them")
	}
	adopted = true
	rec = datadisk.Record{UUID: "206a557e-106d-41ec-bef7-148390201783", Phase: datadisk.Moving, Files: 120, TotalFiles: 300, Bytes: 1 << 20, Total: 4 << 20, Updated: time.Now()}
	if p := page(); !strings.Contains(p, "Data disk: moving the files to the USB disk 206a557e-106d-41ec-bef7-148390201783: 120 of 300 files checked, 25% of the bytes") {
		t.Error("the admin page does not show the move's progress")
	}
	rec.Phase, rec.Size, rec.Switched = datadisk.Switched, 2e9, time.Date(2026, 12, 2, 1, 38, 0, 0, time.UTC)
	if p := page(); !strings.Contains(p, "Data disk: files on the USB disk 206a557e-106d-41ec-bef7-148390201783 (2.0 GB), since 2026-12-02") || strings.Contains(p, "SD card") {
		t.Error("the admin page does not say the files are on the USB disk")
	}
}

// A deleted user's files: listed on the admin page with their trash and
// versions, handed to another user with their dates, then the rest
// removed on the admin's word.
func TestAdminHandsOverADeletedUsersFiles(t *testing.T) {
	s := newSite(t)
	ann, _ := s.store.Tree("ann")
	when := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, content := range []string{"old", "newer"} { // the first is kept as a version
		up, _ := ann.Create("diary.txt", false)
		up.SetModTime(when)
		io.WriteString(up, content)
		if err := up.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ann.Close()
	cookie, csrf := s.login(users.Admin, users.Admin+"-password")
	post := func(v url.Values) (int, string) {
		v.Set("csrf", csrf)
		resp, page := s.do("POST", "/admin/", cookie, v)
		return resp.StatusCode, page
	}
	if code, page := post(url.Values{"action": {"hand-over"}, "user": {"ann"}, "to": {"bob"}}); code != 400 {
		t.Fatalf("a hand-over of a user with an account = %d %s", code, page)
	}
	if code, _ := post(url.Values{"action": {"delete"}, "user": {"ann"}}); code != 200 {
		t.Fatalf("delete ann = %d", code)
	}
	_, page := s.do("GET", "/admin/", cookie, nil)
	row := regexp.MustCompile(`<tr data-departed="ann"><td class="name">ann</td><td class="num" data-label="Files">([^<]+)</td><td class="num" data-label="Trash">([^<]+)</td><td class="num" data-label="Versions">([^<]+)</td>`).FindStringSubmatch(page)
	if row == nil || row[1] != humanSize(5) || row[3] != humanSize(3) {
		t.Fatalf("the departed ann's row: %q", row)
	}
	if code, page := post(url.Values{"action": {"hand-over"}, "user": {"ann"}, "to": {"bob"}}); code != 200 || !strings.Contains(page, `now bob&#39;s, in the folder &#34;Files of ann&#34;`) {
		t.Fatalf("hand-over = %d %s", code, page)
	}
	bob, _ := s.store.Tree("bob")
	defer bob.Close()
	fi, err := bob.Stat("Files of ann/diary.txt")
	if err != nil || fi.Size() != 5 || !fi.ModTime().Equal(when) {
		t.Fatalf("bob's copy of ann's diary: %v %v", fi, err)
	}
	if code, _ := post(url.Values{"action": {"remove-data"}, "user": {"bob"}}); code != 400 {
		t.Fatalf("removing the data of a user with an account = %d", code)
	}
	if code, page := post(url.Values{"action": {"remove-data"}, "user": {"ann"}}); code != 200 || strings.Contains(page, `data-departed="ann"`) {
		t.Fatalf("remove ann's data = %d; still listed: %v", code, strings.Contains(page, `data-departed="ann"`))
	}
	if owners, _ := s.store.Owners(); slices.Contains(owners, "ann") {
		t.Fatalf("ann's data is still in the store: %v", owners)
	}
}

// The copy settings' form: shown with what is in force (never the
// password), its values handed to CopySet, a refusal shown.
func TestAdminPageCopySettings(t *testing.T) {
	s := newSite(t)
	var got admin.CopyForm
	var gotPass string
	s.admin.System = &admintest.System{
		Form: admin.CopyForm{Target: "sftp://me@nas/b", HasPassword: true, At: "03:30", Keep: "7", BwLimit: "0"},
		SetCopy: func(f admin.CopyForm, pw string) error {
			if f.At == "99:99" {
				return errors.New(`copy_at: "99:99" is not HH:MM`)
			}
			got, gotPass = f, pw
			return nil
		},
	}
	cookie, csrf := s.login(users.Admin, users.Admin+"-password")
	_, page := s.do("GET", "/admin/", cookie, nil)
	if !strings.Contains(page, `value="sftp://me@nas/b"`) || !strings.Contains(page, "(set; empty keeps it)") {
		t.Fatalf("the form does not show the settings")
	}
	form := url.Values{"csrf": {csrf}, "action": {"copy-settings"}, "copy_target": {"davs://c@box2/remote.php/dav/files/c/x"},
		"copy_target_password": {"s3cret"}, "copy_at": {"02:00"}, "copy_keep": {"5"}, "copy_bwlimit_kib": {"100"}}
	if resp, _ := s.do("POST", "/admin/", cookie, form); resp.StatusCode != 200 || got.At != "02:00" || got.Keep != "5" || gotPass != "s3cret" {
		t.Fatalf("saved %s: %+v %q", resp.Status, got, gotPass)
	}
	form.Set("copy_at", "99:99")
	if resp, page := s.do("POST", "/admin/", cookie, form); resp.StatusCode != 400 || !strings.Contains(page, "is not HH:MM") {
		t.Fatalf("a bad time: %s", resp.Status)
	}
}

// A file's link on its folder's page is a path on the box whatever its
// name (https:evil.example was a link off it, javascript:x was disabled),
// and /files/%2e%2e/ is the top folder: its zip holds no ../ names.
func TestFileLinksStayOnTheBoxAndZipNamesAreClean(t *testing.T) {
	s := newSite(t)
	cookie, tok := s.login("ann", "ann-password")
	for _, n := range []string{"https:evil.example", "javascript:alert(1)"} {
		req, _ := http.NewRequest("PUT", s.srv.URL+"/dav/"+url.PathEscape(n), strings.NewReader("x"))
		req.Header.Set("Cookie", cookie)
		req.Header.Set("X-CSRF-Token", tok)
		if resp, err := s.c.Do(req); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("PUT %s: %v %v", n, resp, err)
		}
	}
	_, page := s.do("GET", "/files/", cookie, nil)
	for _, want := range []string{`href="./https:evil.example"`, `href="./javascript:alert%281%29"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the files page lacks %s", want)
		}
	}
	if strings.Contains(page, `href="https:evil.example"`) || strings.Contains(page, "ZgotmplZ") {
		t.Error("a file's name became a link off the box, or a disabled one")
	}
	resp, body := s.do("GET", "/files/%2e%2e/?zip", cookie, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("zip of /files/%%2e%%2e/: %s", resp.Status)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename=files.zip`) {
		t.Errorf("the zip is named %q", cd)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "/") || slices.Contains(strings.Split(f.Name, "/"), "..") || slices.Contains(strings.Split(f.Name, "/"), ".") {
			t.Errorf("a zip entry is named %q", f.Name)
		}
	}
}

// The admin page shows the audit log: logins with their protocol and
// address, a failed login, a share and an admin action; a user's page
// does not.
func TestAuditLogOnTheAdminPage(t *testing.T) {
	s := newSite(t)
	tree, _ := s.store.Tree("ann")
	tree.Mkdir("Trip")
	tree.Close()
	resp, page := s.do("GET", "/login", "", nil)
	lc := cookieOf(resp, loginCookie)
	m := csrfField.FindStringSubmatch(page)
	if resp, page := s.do("POST", "/login", loginCookie+"="+lc.Value, url.Values{"csrf": {m[1]}, "username": {"bob"}, "password": {"guess"}, "next": {"/files/"}}); !strings.Contains(page, "Wrong user name or password") {
		t.Fatalf("a wrong password: %s\n%s", resp.Status, page)
	}
	cookie, csrf := s.login("ann", "ann-password")
	s.do("POST", "/shares", cookie, url.Values{"csrf": {csrf}, "action": {"add"}, "path": {"/Trip"}, "kind": {"user"}, "with": {"bob"}, "rights": {"read"}})
	if _, page := s.do("GET", "/admin/", cookie, nil); strings.Contains(page, "Audit log") {
		t.Error("a user who is not admin sees the audit log")
	}
	admin, acsrf := s.login(users.Admin, users.Admin+"-password")
	if resp, page := s.do("POST", "/admin/", admin, url.Values{"csrf": {acsrf}, "action": {"add"}, "user": {"carol"}, "password": {"carol password 1"}}); resp.StatusCode != 200 {
		t.Fatalf("add a user: %s\n%s", resp.Status, page)
	}
	s.common.Audit.Flush() // failed logins are noted from the bans, written a moment later
	_, page = s.do("GET", "/admin/", admin, nil)
	i := strings.Index(page, `id="audit"`)
	if i < 0 {
		t.Fatalf("no audit log on the admin page:\n%s", page)
	}
	section := page[i:]
	section = section[:strings.Index(section, "</section>")]
	for _, want := range []string{
		`<td data-label="What">admin</td><td data-label="User">admin</td><td data-label="From">127.0.0.1 (web)</td><td data-label="Details">added user carol</td>`,
		`<td data-label="What">share</td><td data-label="User">ann</td><td data-label="From"></td><td data-label="Details">shared folder /Trip with bob</td>`,
		`<td data-label="What">login</td><td data-label="User">ann</td><td data-label="From">127.0.0.1 (web)</td>`,
		`<td data-label="What">login failed</td><td data-label="User">bob</td><td data-label="From">127.0.0.1 (web)</td>`,
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, section)
		}
	}
	if a, b := strings.Index(section, "added user carol"), strings.Index(section, "login failed"); a > b {
		t.Error("the audit log is not newest first")
	}
}

// With two-factor login on, the password alone gives no session: the form
// asks for the code, a wrong one is refused, the right one logs in (once).
// Enrolled from the account page, which shows a QR code and the
// recovery codes once.
func TestTwoFactorLogin(t *testing.T) {
	s := newSite(t)
	cookie, csrf := s.login("ann", "ann-password")
	_, page := s.do("POST", "/account", cookie, url.Values{"csrf": {csrf}, "action": {"totp-new"}})
	secret := regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`).FindStringSubmatch(page)
	if secret == nil || !strings.Contains(page, `<svg class="qr"`) {
		t.Fatalf("no QR code and key on the account page:\n%s", page)
	}
	code, _ := totp.GenerateCode(secret[1], time.Now())
	// A session alone cannot tie the account to a phone, nor choose the
	// secret: the password is asked, and the page's secret field is not
	// read (an empty one turned nothing on while saying it had).
	if resp, _ := s.do("POST", "/account", cookie, url.Values{"csrf": {csrf}, "action": {"totp-enable"}, "code": {code}}); resp.StatusCode != 403 {
		t.Errorf("turning it on without the password: %s", resp.Status)
	}
	forged, _ := totp.GenerateCode("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", time.Now())
	if resp, _ := s.do("POST", "/account", cookie, url.Values{"csrf": {csrf}, "action": {"totp-enable"}, "secret": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, "code": {forged}, "current": {"ann-password"}}); resp.StatusCode != 400 {
		t.Errorf("a secret of the page's choosing: %s", resp.Status)
	}
	resp, page := s.do("POST", "/account", cookie, url.Values{"csrf": {csrf}, "action": {"totp-enable"}, "code": {code}, "current": {"ann-password"}})
	if resp.StatusCode != 200 || strings.Count(page, "<li><code>") != 10 {
		t.Fatalf("turning it on: %s\n%s", resp.Status, page)
	}
	recovery := regexp.MustCompile(`<li><code>([a-z0-9-]+)</code>`).FindStringSubmatch(page)[1]

	step := func(user, pw string) (*http.Response, string, string) {
		resp, page := s.do("GET", "/login", "", nil)
		lc := cookieOf(resp, loginCookie)
		m := csrfField.FindStringSubmatch(page)
		resp, page = s.do("POST", "/login", loginCookie+"="+lc.Value, url.Values{"csrf": {m[1]}, "username": {user}, "password": {pw}, "next": {"/files/"}})
		cc := cookieOf(resp, codeCookie)
		if resp.StatusCode != 200 || cc == nil || cookieOf(resp, auth.SessionCookie) != nil || !strings.Contains(page, `action="/login/code"`) {
			t.Fatalf("the password step: %s %v\n%s", resp.Status, resp.Cookies(), page)
		}
		return resp, codeCookie + "=" + cc.Value, cc.Value
	}
	_, cc, tok := step("ann", "ann-password")
	resp, page = s.do("POST", "/login/code", cc, url.Values{"csrf": {tok}, "code": {"000000"}})
	if resp.StatusCode != 401 || cookieOf(resp, auth.SessionCookie) != nil || !strings.Contains(page, "That code is not right") {
		t.Errorf("a wrong code: %s", resp.Status)
	}
	if resp, _ := s.do("POST", "/login/code", cc, url.Values{"csrf": {"forged"}, "code": {recovery}}); cookieOf(resp, auth.SessionCookie) != nil {
		t.Error("a code step without its token logged in")
	}
	resp, _ = s.do("POST", "/login/code", cc, url.Values{"csrf": {tok}, "code": {recovery}})
	if resp.StatusCode != http.StatusSeeOther || cookieOf(resp, auth.SessionCookie) == nil || resp.Header.Get("Location") != "/files/" {
		t.Errorf("the recovery code: %s %v", resp.Status, resp.Header)
	}
	// The same pending login and the same recovery code: spent.
	if resp, _ := s.do("POST", "/login/code", cc, url.Values{"csrf": {tok}, "code": {recovery}}); cookieOf(resp, auth.SessionCookie) != nil {
		t.Error("a finished login logged in again")
	}
	_, cc, tok = step("ann", "ann-password")
	if resp, _ := s.do("POST", "/login/code", cc, url.Values{"csrf": {tok}, "code": {recovery}}); cookieOf(resp, auth.SessionCookie) != nil {
		t.Error("a recovery code logged in twice")
	}
	// WebDAV with the account's password: refused; clients use app passwords.
	req, _ := http.NewRequest("PROPFIND", s.srv.URL+"/dav/", nil)
	req.SetBasicAuth("ann", "ann-password")
	if resp, err := s.c.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("WebDAV with the account's password under two-factor login: %v %v", err, resp.Status)
	}
}

// A user's logins waiting for their code are at most codesPerUser: more
// drop that user's oldest, never another user's.
func TestPendingLoginsPerUser(t *testing.T) {
	var p pendings
	bob := p.add("bob", "/")
	var anns []string
	for range codesPerUser + 1 {
		anns = append(anns, p.add("ann", "/"))
		time.Sleep(time.Millisecond)
	}
	if _, ok := p.get(bob); !ok {
		t.Error("ann's logins evicted bob's")
	}
	if _, ok := p.get(anns[0]); ok {
		t.Error("ann's oldest is still waiting")
	}
	if _, ok := p.get(anns[codesPerUser]); !ok {
		t.Error("ann's newest was dropped")
	}
}

// The login page says where the first password is for where the box
// runs: it sent a PC's user to a serial console and an SD card.
func TestLoginHintFitsWhereItRuns(t *testing.T) {
	s := newSite(t)
	if _, page := s.do("GET", "/login", "", nil); !strings.Contains(page, "printed where the server was started") || strings.Contains(page, "serial console") {
		t.Errorf("on a PC the login page says:\n%s", page)
	}
	s.loginRoom.OnBoard = true
	if _, page := s.do("GET", "/login", "", nil); !strings.Contains(page, "serial console and in FIRST-LOGIN.txt") {
		t.Errorf("on the board the login page says:\n%s", page)
	}
}

// The connect page gives each client the box's address as the browser
// reached it and the user's name, and a button that makes an app password
// for one client and fills it into that client's steps (and no other's).
func TestConnectPage(t *testing.T) {
	s := newSite(t)
	s.account.SFTPPort = 2222
	cookie, csrf := s.login("ann", "ann-password")
	host := strings.TrimPrefix(s.srv.URL, "https://")
	_, page := s.do("GET", "/connect", cookie, nil)
	for _, want := range []string{"davs://" + host + "/dav/", "webdavs://" + host + "/dav/", s.srv.URL + "/dav/",
		"url=" + s.srv.URL + "/remote.php/dav/files/ann/ vendor=nextcloud user=ann pass=APP-PASSWORD --obscure",
		"sshfs -p 2222 ann@127.0.0.1: ~/bonesync", "sftp://ann@127.0.0.1:2222"} {
		if !strings.Contains(html.UnescapeString(page), want) {
			t.Errorf("the connect page lacks %q", want)
		}
	}
	resp, page := s.do("POST", "/connect", cookie, url.Values{"csrf": {csrf}, "client": {"rclone"}})
	m := regexp.MustCompile(`<code id="connect-password">([^<]+)</code>`).FindStringSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("making an app password: %s\n%s", resp.Status, page)
	}
	rclone := regexp.MustCompile(`(?s)<pre data-client="rclone">(.*?)</pre>`).FindStringSubmatch(page)
	desktop := regexp.MustCompile(`(?s)<pre data-client="desktop">(.*?)</pre>`).FindStringSubmatch(page)
	if rclone == nil || !strings.Contains(html.UnescapeString(rclone[1]), "pass="+m[1]+" ") || strings.Contains(desktop[1], m[1]) {
		t.Errorf("the password is not in rclone's steps alone:\n%s\n%s", rclone, desktop)
	}
	if ok, _ := s.users.CheckPassword("ann", m[1], false, users.Client); !ok {
		t.Error("the app password shown does not log in")
	}
	if resp, _ := s.do("POST", "/connect", cookie, url.Values{"csrf": {csrf}, "client": {"evil"}}); resp.StatusCode != 400 {
		t.Errorf("an unknown client: %s", resp.Status)
	}
	if resp, _ := s.do("POST", "/connect", cookie, url.Values{"client": {"rclone"}}); resp.StatusCode == 200 {
		t.Error("an app password made without the page's token")
	}
}
