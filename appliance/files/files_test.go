package files

import (
	"crypto/tls"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/favorites"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// newDAV is the files protocol on a fresh state directory with the user
// "u" (password "password") whose tree holds files/ with n files.
func newDAV(t testing.TB, n int) *Handler {
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
	if err := db.Add("u", "password"); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := s.Tree("u")
	tr.Mkdir("files")
	for i := 0; i < n; i++ {
		u, _ := tr.Create(fmt.Sprintf("files/f%05d.txt", i), false)
		fmt.Fprintf(u, "file %d\n", i)
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close()
	log := slog.New(slog.DiscardHandler)
	favs := favorites.Open(t.TempDir())
	h := &Handler{Store: s, Quotas: db, Favorites: favs, Locks: locks.New(), Log: log}
	doors.Store(h, auth.New(db, log))
	return h
}

// doors are the login doors of the tests' handlers (the front checks
// each route with one, as the server's does).
var doors sync.Map // *Handler: front.Door

// routes are h's routes as the server mounts them, checked by its door.
func routes(h *Handler) *front.Routes {
	d, _ := doors.Load(h)
	rs := front.NewRoutes(d.(front.Door))
	h.Routes(rs)
	return rs
}

func davRequest(method, target, body string, hdr ...string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.TLS = &tls.ConnectionState{}
	r.SetBasicAuth("u", "password")
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

const propfindBody = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/></d:prop></d:propfind>`

func TestPropfindListsEveryFileWithETag(t *testing.T) {
	d := newDAV(t, 50)
	w := httptest.NewRecorder()
	routes(d).ServeHTTP(w, davRequest("PROPFIND", "/dav/files/", propfindBody, "Depth", "1"))
	if w.Code != 207 {
		t.Fatalf("PROPFIND = %d", w.Code)
	}
	if n := strings.Count(w.Body.String(), "<d:getetag>"); n != 51 {
		t.Errorf("%d getetag properties, want 51 (the folder and 50 files)", n)
	}
}

// BenchmarkPropfind1000 is a Depth 1 PROPFIND of a folder of 1,000 files.
func BenchmarkPropfind1000(b *testing.B) {
	d := newDAV(b, 1000)
	time.Sleep(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		routes(d).ServeHTTP(w, davRequest("PROPFIND", "/dav/files/", propfindBody, "Depth", "1"))
		if w.Code != 207 {
			b.Fatal(w.Code)
		}
	}
}

func serveDAV(d *Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	routes(d).ServeHTTP(w, r)
	return w
}

// NFC and NFD spellings of one name are one file for locks and for the
// check that a MOVE's destination is not its source.
func TestSpellingsAreOnePath(t *testing.T) {
	d := newDAV(t, 0)
	nfc, nfd := "/dav/caf%C3%A9", "/dav/cafe%CC%81"
	if w := serveDAV(d, davRequest("MKCOL", nfc, "")); w.Code != 201 {
		t.Fatalf("MKCOL = %d", w.Code)
	}
	serveDAV(d, davRequest("PUT", nfc+"/inside.txt", "keep me"))
	if w := serveDAV(d, davRequest("MOVE", nfd, "", "Destination", "https://example"+nfc, "Overwrite", "T")); w.Code != 403 {
		t.Errorf("MOVE of a folder onto its other spelling = %d, want 403", w.Code)
	}
	if w := serveDAV(d, davRequest("GET", nfc+"/inside.txt", "")); w.Code != 200 || w.Body.String() != "keep me" {
		t.Fatalf("after the MOVE the folder's file is %d %q", w.Code, w.Body.String())
	}
	lock := `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`
	if w := serveDAV(d, davRequest("LOCK", nfc+"/inside.txt", lock)); w.Code != 200 {
		t.Fatalf("LOCK = %d", w.Code)
	}
	if w := serveDAV(d, davRequest("PUT", nfd+"/inside.txt", "overwritten")); w.Code != 423 {
		t.Errorf("PUT to the other spelling of a locked file = %d, want 423", w.Code)
	}
}

// A shared lock on each of two files: deleting their folder needs a token
// for each.
func TestDeleteNeedsEveryLockedMember(t *testing.T) {
	d := newDAV(t, 2)
	shared := `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`
	w := serveDAV(d, davRequest("LOCK", "/dav/files/f00000.txt", shared))
	serveDAV(d, davRequest("LOCK", "/dav/files/f00001.txt", shared))
	tok := w.Header().Get("Lock-Token")
	if w := serveDAV(d, davRequest("DELETE", "/dav/files", "", "If", "</dav/files/f00000.txt> ("+tok+")")); w.Code != 423 {
		t.Errorf("DELETE with one of two files' tokens = %d, want 423", w.Code)
	}
}

func TestPropfindProperties(t *testing.T) {
	d := newDAV(t, 1)
	patch := `<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:Z="urn:z"><d:set><d:prop><Z:color>blue &amp; green</Z:color></d:prop></d:set></d:propertyupdate>`
	if w := serveDAV(d, davRequest("PROPPATCH", "/dav/files/f00000.txt", patch)); w.Code != 207 {
		t.Fatalf("PROPPATCH = %d", w.Code)
	}
	w := serveDAV(d, davRequest("PROPFIND", "/dav/files/f00000.txt", "", "Depth", "0"))
	for _, want := range []string{`<color xmlns="urn:z">blue &amp; green</color>`, "<d:getcontentlength>7</d:getcontentlength>", "<d:getetag>\""} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("allprop lacks %s:\n%s", want, w.Body.String())
		}
	}
	w = serveDAV(d, davRequest("PROPFIND", "/dav/files/", `<propfind xmlns="DAV:" xmlns:oc="http://owncloud.org/ns"><prop><getetag/><oc:checksums/><oc:permissions/><quota-used-bytes/><nothing xmlns="urn:n"/></prop></propfind>`, "Depth", "1"))
	body := w.Body.String()
	if w.Code != 207 || strings.Count(body, "<d:response>") != 2 || !strings.Contains(body, "<d:getetag>\"") ||
		!strings.Contains(body, `<oc:checksums><oc:checksum>SHA1:`) ||
		!strings.Contains(body, `<oc:permissions>RGDNVCK</oc:permissions>`) ||
		!strings.Contains(body, "<d:quota-used-bytes>") || !strings.Contains(body, `<nothing xmlns="urn:n"/></d:prop><d:status>HTTP/1.1 404 Not Found`) {
		t.Errorf("PROPFIND Depth 1 = %d:\n%s", w.Code, body)
	}
	if w := serveDAV(d, davRequest("PROPFIND", "/dav/missing", "")); w.Code != 404 {
		t.Errorf("PROPFIND of a missing path = %d", w.Code)
	}
	if w := serveDAV(d, davRequest("PROPFIND", "/dav/files/", "", "Depth", "2")); w.Code != 400 {
		t.Errorf("PROPFIND Depth 2 = %d", w.Code)
	}
}

// A COPY or MOVE onto a folder that holds the source is refused before
// anything is removed: overwriting the destination would take the source
// with it.
func TestMoveOntoAncestorRefused(t *testing.T) {
	d := newDAV(t, 2)
	serveDAV(d, davRequest("MKCOL", "/dav/files/sub", ""))
	serveDAV(d, davRequest("PUT", "/dav/files/sub/x.txt", "x"))
	for _, m := range []string{"MOVE", "COPY"} {
		for _, dst := range []string{"/dav/files", "/dav/"} {
			if w := serveDAV(d, davRequest(m, "/dav/files/sub", "", "Destination", dst)); w.Code != 403 {
				t.Errorf("%s /dav/files/sub onto %s = %d, want 403", m, dst, w.Code)
			}
		}
	}
	if w := serveDAV(d, davRequest("GET", "/dav/files/f00001.txt", "")); w.Code != 200 {
		t.Errorf("a file beside the source after the refused moves: %d", w.Code)
	}
	if w := serveDAV(d, davRequest("GET", "/dav/files/sub/x.txt", "")); w.Code != 200 {
		t.Errorf("the source after the refused moves: %d", w.Code)
	}
}

// cutBody is a request body that breaks after some bytes, as a dropped
// connection does.
type cutBody struct{ n int }

func (b *cutBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := min(len(p), b.n)
	b.n -= n
	return n, nil
}

// A PUT whose body is cut short is the client's failure (400), and the
// file keeps its old content.
func TestInterruptedPut(t *testing.T) {
	d := newDAV(t, 1)
	r := davRequest("PUT", "/dav/files/f00000.txt", "")
	r.Body = io.NopCloser(&cutBody{n: 5})
	r.ContentLength = 100
	if w := serveDAV(d, r); w.Code != 400 {
		t.Errorf("a PUT cut short = %d, want 400", w.Code)
	}
	if w := serveDAV(d, davRequest("GET", "/dav/files/f00000.txt", "")); w.Body.String() != "file 0\n" {
		t.Errorf("after a PUT cut short the file holds %q", w.Body.String())
	}
}

// A Destination header on a method that takes none is not looked at: no
// lock on it stands in the way.
func TestDestinationOnlyForCopyAndMove(t *testing.T) {
	d := newDAV(t, 2)
	lock := `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`
	if w := serveDAV(d, davRequest("LOCK", "/dav/files/f00001.txt", lock)); w.Code != 200 {
		t.Fatalf("LOCK = %d", w.Code)
	}
	if w := serveDAV(d, davRequest("PUT", "/dav/files/f00000.txt", "new", "Destination", "/dav/files/f00001.txt")); w.Code != 204 {
		t.Errorf("PUT with a stray Destination onto a locked file = %d, want 204", w.Code)
	}
}

// A lock's owner written with the client's own prefix is echoed as XML
// that parses wherever it is written: in the LOCK answer and in a
// PROPFIND of the folder.
func TestLockOwnerSelfContained(t *testing.T) {
	d := newDAV(t, 1)
	lock := `<?xml version="1.0"?><x:lockinfo xmlns:x="DAV:"><x:lockscope><x:exclusive/></x:lockscope><x:locktype><x:write/></x:locktype><x:owner><x:href>mailto:ann@example</x:href></x:owner></x:lockinfo>`
	w := serveDAV(d, davRequest("LOCK", "/dav/files/f00000.txt", lock))
	if w.Code != 200 {
		t.Fatalf("LOCK = %d %s", w.Code, w.Body)
	}
	answers := map[string]string{"LOCK": w.Body.String()}
	answers["PROPFIND"] = serveDAV(d, davRequest("PROPFIND", "/dav/files/", "", "Depth", "1")).Body.String()
	for what, body := range answers {
		var v struct{}
		if err := xml.Unmarshal([]byte(body), &v); err != nil || !strings.Contains(body, "mailto:ann@example") {
			t.Errorf("the %s answer with the owner does not parse (%v):\n%s", what, err, body)
		}
	}
}

// A name that is not UTF-8 is refused: no XML answer could carry it.
func TestNameNotUTF8Refused(t *testing.T) {
	d := newDAV(t, 0)
	if w := serveDAV(d, davRequest("PUT", "/dav/files/%FFbad.txt", "x")); w.Code != 400 {
		t.Errorf("PUT of a name that is not UTF-8 = %d, want 400", w.Code)
	}
}

// A lock's owner is kept and sent back with it: a name or a URL, not up to
// the request's megabyte (256 locks of 1 MiB each were 256 MiB).
func TestLockOwnerBounded(t *testing.T) {
	d := newDAV(t, 1)
	lock := func(owner string) int {
		body := `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>` + owner + `</d:owner></d:lockinfo>`
		return serveDAV(d, davRequest("LOCK", "/dav/files/f00000.txt", body)).Code
	}
	if code := lock("https://example.com/~ann"); code != 200 {
		t.Errorf("LOCK with a short owner = %d", code)
	}
	if code := lock(strings.Repeat("x", 64<<10)); code != 400 {
		t.Errorf("LOCK with a 64 KiB owner = %d, want 400", code)
	}
}
