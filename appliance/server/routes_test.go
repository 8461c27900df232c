package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/bonesync/bonesync/appliance/accounts"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/favorites"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/front/routetest"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
	"github.com/bonesync/bonesync/appliance/webui"
)

// walkBox is the server's services as the route walk needs them: the
// real login door and every protocol's handler over a store in a temporary
// folder. Users: bob (no admin), carol (two-factor login), dave.
func walkBox(t *testing.T) *services {
	dir := t.TempDir()
	st, err := state.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	s := &services{log: slog.New(slog.DiscardHandler), locks: locks.New()}
	s.o.State = filepath.Join(dir, "state")
	if s.accounts, err = users.Open(st); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"bob", "carol", "dave"} {
		if err := s.accounts.Add(u, u+"-password"); err != nil {
			t.Fatal(err)
		}
	}
	key, err := s.accounts.NewTOTP("carol")
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(key.Secret(), time.Now())
	if _, err := s.accounts.EnableTOTP("carol", key.Secret(), code); err != nil {
		t.Fatal(err)
	}
	s.door = auth.New(s.accounts, s.log)
	s.door.LoginPage = webui.LoginPage
	s.door.HomePage = webui.FilesPrefix + "/"
	if s.files, err = store.Open(filepath.Join(dir, "files")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.files.Close() })
	if s.pim, err = calendars.Open(s.files.Dir()); err != nil {
		t.Fatal(err)
	}
	s.previews = &preview.Maker{Store: s.files, Log: s.log}
	s.favs = favorites.Open(t.TempDir())
	s.notices = notices.Open(t.TempDir(), s.log)
	if s.shares, err = shares.Open(t.TempDir(), s.files, s.accounts, s.log); err != nil {
		t.Fatal(err)
	}
	s.acct = &accounts.Service{Users: s.accounts, Log: s.log, Parts: map[string]accounts.Part{"shares": s.shares, "notices": s.notices}}
	return s
}

// noCA stands for the box's CA: the walk asks the CA downloads too.
type noCA struct{}

func (noCA) CACert() *x509.Certificate { return &x509.Certificate{Raw: []byte{0x30, 0}} }

// walkIdentities are who the walk sends each request as: no one, bob over
// Basic and with a session (a user who owns none of what the routes
// name, and no admin), dave over Basic with a wrong password, and
// carol's own password over Basic (a two-factor account's, which opens
// nothing alone, and is answered as dave's: no answer tells who has
// two-factor login). Each request comes from an address of its own, so that carol's
// refusals ban no one else.
func walkIdentities(door *auth.Door) []routetest.Identity {
	var n atomic.Int32
	from := func(r *http.Request) {
		i := n.Add(1)
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:4000", i>>16&255, i>>8&255, i&255)
	}
	session := func(user string) func(r *http.Request) {
		return func(r *http.Request) {
			from(r)
			w := httptest.NewRecorder()
			sess := door.Sessions().Start(w, user)
			for _, c := range w.Result().Cookies() {
				r.AddCookie(c)
			}
			r.Header.Set("X-CSRF-Token", sess.CSRF)
		}
	}
	basic := func(user, pw string) func(r *http.Request) {
		return func(r *http.Request) { from(r); r.SetBasicAuth(user, pw) }
	}
	in := func(as ...auth.Access) func(auth.Access) bool {
		return func(a auth.Access) bool {
			for _, b := range as {
				if a == b {
					return true
				}
			}
			return false
		}
	}
	return []routetest.Identity{
		{Name: "anonymous", Prepare: from, Passes: in(auth.Public, auth.Optional, auth.Link)},
		{Name: "bob over Basic", Prepare: basic("bob", "bob-password"), Passes: in(auth.Public, auth.Optional, auth.Link, auth.User, auth.Account)},
		{Name: "bob's session", Prepare: session("bob"), Passes: in(auth.Public, auth.Optional, auth.Link, auth.User, auth.Page, auth.Account)},
		{Name: "dave with a wrong password over Basic", Prepare: basic("dave", "not-daves"), Passes: in(auth.Public, auth.Link)},
		{Name: "carol's own password over Basic", Prepare: basic("carol", "carol-password"), Passes: in(auth.Public, auth.Link),
			Like: "dave with a wrong password over Basic"},
	}
}

// walkSite is the HTTPS port's routes as the server mounts them, the door
// recorded.
func walkSite(t *testing.T) (*front.Routes, *routetest.Recorder, *services) {
	s := walkBox(t)
	rec := &routetest.Recorder{Door: s.door}
	_, mounts := s.mounts(22, 80)
	return front.HTTPSRoutes(noCA{}, "80", rec, mounts...), rec, s
}

// Every route of the HTTPS port declares its access, the declarations are
// the table in testdata/routes.txt (a change to who may reach what shows
// there), nothing the mux serves escapes the registry, and each route,
// requested anonymously, as another user who is no admin (over Basic and
// with a session), with a two-factor account's password over Basic, and
// cross-site, is refused as its declaration says.
func TestEveryRouteDeclaresItsAccess(t *testing.T) {
	rs, rec, s := walkSite(t)
	ids := walkIdentities(s.door)
	if diff := goldenDiff(rs.List()); diff != "" {
		t.Errorf("the routes differ from testdata/routes.txt (-want +got):\n%s", diff)
	}
	for _, p := range routetest.Walk(rs, rec, ids, ids[2]) {
		t.Error(p)
	}
	n := routetest.Count(rs.List())
	var counts []string
	for a := auth.Public; a <= auth.Confirmed; a++ {
		counts = append(counts, fmt.Sprintf("%s %d", a, n[a]))
	}
	t.Logf("%d routes: %s", len(rs.List()), strings.Join(counts, ", "))
}

// A user who is no admin, opening the admin's page in a browser, gets a
// page that says why and links back to the files; a client that reads no
// HTML (the sync clients, the pages' scripts) and a route that is no
// page (the firmware's update) get the same 403 in plain text.
func TestAdminRefusedAsAPage(t *testing.T) {
	rs, _, s := walkSite(t)
	ids := walkIdentities(s.door)
	for _, tc := range []struct {
		as           routetest.Identity
		method, path string
		accept       string
		page         bool
	}{
		{ids[2], "GET", "/admin/", "text/html,application/xhtml+xml,*/*;q=0.8", true},
		{ids[1], "GET", "/admin/", "text/html", true},
		{ids[2], "POST", "/admin/", "text/html", true},
		{ids[2], "GET", "/admin/", "*/*", false},
		{ids[2], "GET", "/admin/bench.json", "", false},
		{ids[2], "PUT", "/admin/update", "text/html", false},
	} {
		r := httptest.NewRequest(tc.method, "https://box.example"+tc.path, nil)
		r.TLS = &tls.ConnectionState{}
		tc.as.Prepare(r)
		r.Header.Set("Accept", tc.accept)
		w := httptest.NewRecorder()
		rs.ServeHTTP(w, r)
		body, typ := w.Body.String(), w.Header().Get("Content-Type")
		what := fmt.Sprintf("%s %s as %s, Accept %q", tc.method, tc.path, tc.as.Name, tc.accept)
		if w.Code != http.StatusForbidden || !strings.Contains(body, "Only the admin may do this.") {
			t.Errorf("%s = %d %q, want 403 saying only the admin may", what, w.Code, body)
			continue
		}
		if isPage := strings.HasPrefix(typ, "text/html"); isPage != tc.page {
			t.Errorf("%s: Content-Type %q, want a page: %v", what, typ, tc.page)
		}
		if tc.page && !strings.Contains(body, `<a href="/files/">`) {
			t.Errorf("%s: the page links nowhere back:\n%s", what, body)
		}
	}
}

// A request with neither credentials nor a session gets what its route
// declares, whatever it accepts: on the WebDAV, CalDAV and API routes a
// 401 with a Basic challenge, even for KDE's KIO, which accepts HTML on
// every request (and was sent the login page as the file's bytes); only
// the web pages send a browser to the login form.
func TestDAVChallengesWhateverItAccepts(t *testing.T) {
	rs, _, s := walkSite(t)
	anonymous := walkIdentities(s.door)[0]
	const kio = "text/html, text/*;q=0.9, image/jpeg;q=0.9, image/png;q=0.9, image/*;q=0.9, */*;q=0.8"
	for _, tc := range []struct{ method, path, accept string }{
		{"GET", "/dav/x", "text/html"},
		{"GET", "/dav/x", kio},
		{"HEAD", "/dav/", kio},
		{"GET", "/remote.php/webdav/x", kio},
		{"GET", "/remote.php/dav/files/bob/x", kio},
		{"GET", "/remote.php/dav/calendars/bob/", kio},
		{"GET", "/ocs/v2.php/cloud/user", kio},
		{"GET", "/index.php/core/preview", kio},
	} {
		r := httptest.NewRequest(tc.method, "https://box.example"+tc.path, nil)
		r.TLS = &tls.ConnectionState{}
		anonymous.Prepare(r)
		r.Header.Set("Accept", tc.accept)
		w := httptest.NewRecorder()
		rs.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s %s, Accept %q, anonymously = %d, WWW-Authenticate %q, Location %q; want 401 with a Basic challenge",
				tc.method, tc.path, tc.accept, w.Code, w.Header().Get("WWW-Authenticate"), w.Header().Get("Location"))
		}
	}
	r := httptest.NewRequest("GET", "https://box.example/files/x", nil)
	r.TLS = &tls.ConnectionState{}
	anonymous.Prepare(r)
	r.Header.Set("Accept", "text/html")
	w := httptest.NewRecorder()
	rs.ServeHTTP(w, r)
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || loc != "/login?next=%2Ffiles%2Fx" {
		t.Errorf("GET /files/x anonymously = %d to %q, want 303 to the login form", w.Code, loc)
	}
}

// goldenDiff compares the routes with testdata/routes.txt: "" when the
// same; UPDATE_ROUTES=1 writes the file.
func goldenDiff(list []front.Route) string {
	got := routetest.Table(list)
	if os.Getenv("UPDATE_ROUTES") != "" {
		if err := os.WriteFile("testdata/routes.txt", []byte(got), 0o644); err != nil {
			return err.Error()
		}
	}
	b, err := os.ReadFile("testdata/routes.txt")
	if err != nil {
		return err.Error()
	}
	want := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		want[l] = true
	}
	var diff []string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if !want[l] {
			diff = append(diff, "+"+l)
		}
		delete(want, l)
	}
	for l := range want {
		diff = append(diff, "-"+l)
	}
	return strings.Join(diff, "\n")
}

// The walk fails a route declared weaker than it is (in the table and at
// the door), a door that lets a route's refused callers through, and a
// pattern the mux serves that was never declared (front's own test makes
// one: TestWalkFindsAnUndeclaredPattern).
func TestTheRouteWalkFails(t *testing.T) {
	rs, rec, s := walkSite(t)
	ids := walkIdentities(s.door)
	// A route registered with a wrong declaration: the admin's page as
	// any user's.
	rs.Handle(auth.User, "GET /admin/secret", func(w http.ResponseWriter, r *http.Request, _ auth.Caller) {})
	if diff := goldenDiff(rs.List()); !strings.Contains(diff, "+user      GET /admin/secret") {
		t.Errorf("the table did not show the new route: %q", diff)
	}
	// A door that checks nothing: every refusal the declarations ask is
	// missed.
	open := &routetest.Recorder{Door: openDoor{}}
	_, mounts := s.mounts(22, 80)
	lax := front.HTTPSRoutes(noCA{}, "80", open, mounts...)
	problems := routetest.Walk(lax, open, ids, ids[2])
	if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), "PUT /admin/update (confirmed) as anonymous: the door let it through: true, want false") {
		t.Errorf("a door that refuses nothing passed the walk: %d problems", len(problems))
	}
	_ = rec
}

// openDoor lets everyone in as bob.
type openDoor struct{}

func (openDoor) Check(auth.Access, http.ResponseWriter, *http.Request) (auth.Caller, error) {
	return auth.Caller{User: "bob"}, nil
}
