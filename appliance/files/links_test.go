package files

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/store"
)

// links are the live public links, in memory: a link past its expiry is
// one the book no longer finds (shares.Book.PublicLink, tested there).
type links map[string]struct {
	m    store.Mount
	hash string
}

func (l links) PublicLink(token string) (store.Mount, string, bool) {
	x, ok := l[token]
	return x.m, x.hash, ok
}

// linkBox is the files protocol with o's folder Trip (a.txt, Sub/b.txt)
// and file Trip/a.txt shared by the links "folder" and "file", with the
// rights perm; password, if not "", is the links' password.
func linkBox(t *testing.T, perm rights.Set, password string) (*Handler, *store.Tree) {
	t.Helper()
	h := newDAV(t, 0)
	o, err := h.Store.Tree("o")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	for _, d := range []string{"Trip", "Trip/Sub"} {
		if err := o.Mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{"Trip/a.txt": "version one", "Trip/Sub/b.txt": "bee"} {
		u, err := o.Create(p, false)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(u, body)
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}
	door, _ := doors.Load(h)
	h.LinkDoor = door.(*auth.Door)
	hash := ""
	if password != "" {
		db := h.Quotas.(interface{ Hash(string) (string, error) })
		if hash, err = db.Hash(password); err != nil {
			t.Fatal(err)
		}
	}
	l := links{}
	for token, p := range map[string]string{"folder": "/Trip", "file": "/Trip/a.txt"} {
		in, err := o.Info(p)
		if err != nil {
			t.Fatal(err)
		}
		l[token] = struct {
			m    store.Mount
			hash string
		}{store.Mount{ID: token, Owner: "o", FileID: in.FileID, Path: p, Perm: perm}, hash}
	}
	h.Links = l
	return h, o
}

var guesser atomic.Int32

// linkRequest is a request of a link's WebDAV, with Basic credentials
// unless user is "-", from an address of its own.
func linkRequest(method, target, user, pw, body string, hdr ...string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.TLS = &tls.ConnectionState{}
	n := guesser.Add(1)
	r.RemoteAddr = fmt.Sprintf("198.51.%d.%d:5000", n>>8&255, n&255)
	if user != "-" {
		r.SetBasicAuth(user, pw)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

const lockBody = `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`

const ownerProps = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:getetag/><oc:owner-id/><oc:owner-display-name/><oc:permissions/></d:prop></d:propfind>`

// A read-only link lists and reads what it shares, through either root,
// names no owner, and refuses every change with 403; the owner's files
// stay as they were.
func TestLinkReadOnly(t *testing.T) {
	h, o := linkBox(t, rights.Read, "")
	w := serveDAV(h, linkRequest("PROPFIND", "/public.php/webdav/", "folder", "", ownerProps, "Depth", "1"))
	if w.Code != 207 || !strings.Contains(w.Body.String(), "/public.php/webdav/a.txt") || !strings.Contains(w.Body.String(), "/public.php/webdav/Sub/") {
		t.Fatalf("PROPFIND = %d:\n%s", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), ">o<") {
		t.Errorf("the listing names the owner:\n%s", w.Body)
	}
	w = serveDAV(h, linkRequest("PROPFIND", "/public.php/dav/files/folder/Sub/", "-", "", propfindBody, "Depth", "1"))
	if w.Code != 207 || !strings.Contains(w.Body.String(), "/public.php/dav/files/folder/Sub/b.txt") {
		t.Errorf("PROPFIND by the token in the path = %d:\n%s", w.Code, w.Body)
	}
	if w := serveDAV(h, linkRequest("GET", "/public.php/webdav/a.txt", "folder", "", "")); w.Code != 200 || w.Body.String() != "version one" {
		t.Errorf("GET = %d %q", w.Code, w.Body)
	}
	for _, r := range []*http.Request{
		linkRequest("PUT", "/public.php/webdav/a.txt", "folder", "", "changed"),
		linkRequest("PUT", "/public.php/webdav/new.txt", "folder", "", "new"),
		linkRequest("MKCOL", "/public.php/webdav/New", "folder", "", ""),
		linkRequest("DELETE", "/public.php/webdav/a.txt", "folder", "", ""),
		linkRequest("MOVE", "/public.php/webdav/a.txt", "folder", "", "", "Destination", "https://box/public.php/webdav/Sub/a.txt"),
		linkRequest("PUT", "/public.php/dav/files/folder/a.txt", "-", "", "changed"),
		linkRequest("LOCK", "/public.php/webdav/a.txt", "folder", "", lockBody),
		linkRequest("PROPPATCH", "/public.php/webdav/a.txt", "folder", "", `<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><x:y xmlns:x="urn:x">z</x:y></d:prop></d:set></d:propertyupdate>`),
	} {
		if w := serveDAV(h, r); w.Code != http.StatusForbidden {
			t.Errorf("%s %s = %d, want 403", r.Method, r.URL.Path, w.Code)
		}
	}
	ownerHas(t, o, "Trip/a.txt", "version one")
	if _, err := o.Stat("Trip/new.txt"); err == nil {
		t.Error("a read-only link made a file")
	}
}

// A read-write link changes the owner's files: a new file, a new
// folder, a move and a delete.
func TestLinkReadWrite(t *testing.T) {
	h, o := linkBox(t, rights.Read|rights.Update|rights.Create|rights.Delete, "")
	for _, tc := range []struct {
		r    *http.Request
		want int
	}{
		{linkRequest("PUT", "/public.php/webdav/new.txt", "folder", "", "new"), 201},
		{linkRequest("PUT", "/public.php/dav/files/folder/a.txt", "-", "", "version two"), 204},
		{linkRequest("MKCOL", "/public.php/webdav/New", "folder", "", ""), 201},
		{linkRequest("MOVE", "/public.php/dav/files/folder/new.txt", "-", "", "", "Destination", "https://box/public.php/dav/files/folder/New/new.txt"), 201},
		{linkRequest("DELETE", "/public.php/webdav/Sub", "folder", "", ""), 204},
	} {
		if w := serveDAV(h, tc.r); w.Code != tc.want {
			t.Errorf("%s %s = %d, want %d: %s", tc.r.Method, tc.r.URL.Path, w.Code, tc.want, w.Body)
		}
	}
	ownerHas(t, o, "Trip/a.txt", "version two")
	ownerHas(t, o, "Trip/New/new.txt", "new")
	if _, err := o.Stat("Trip/Sub"); err == nil {
		t.Error("the deleted folder is still the owner's")
	}
	// The Destination is in the link's share, under its own root.
	r := linkRequest("MOVE", "/public.php/webdav/a.txt", "folder", "", "", "Destination", "https://box/dav/a.txt")
	if w := serveDAV(h, r); w.Code != http.StatusBadRequest {
		t.Errorf("MOVE out of the link's root = %d, want 400", w.Code)
	}
}

// A drop takes new files, and shows nothing: no listing, no file, and no
// file replaced.
func TestLinkDrop(t *testing.T) {
	h, o := linkBox(t, rights.Create, "")
	if w := serveDAV(h, linkRequest("PUT", "/public.php/webdav/dropped.txt", "folder", "", "for you")); w.Code != 201 {
		t.Fatalf("PUT into a drop = %d: %s", w.Code, w.Body)
	}
	ownerHas(t, o, "Trip/dropped.txt", "for you")
	for _, r := range []*http.Request{
		linkRequest("PROPFIND", "/public.php/webdav/", "folder", "", propfindBody, "Depth", "1"),
		linkRequest("PROPFIND", "/public.php/dav/files/folder/", "-", "", propfindBody, "Depth", "0"),
		linkRequest("GET", "/public.php/webdav/a.txt", "folder", "", ""),
		linkRequest("PUT", "/public.php/webdav/a.txt", "folder", "", "replaced"),
		linkRequest("DELETE", "/public.php/webdav/a.txt", "folder", "", ""),
		linkRequest("LOCK", "/public.php/webdav/a.txt", "folder", "", lockBody),
	} {
		if w := serveDAV(h, r); w.Code != http.StatusForbidden {
			t.Errorf("%s %s in a drop = %d, want 403: %s", r.Method, r.URL.Path, w.Code, w.Body)
		}
	}
	ownerHas(t, o, "Trip/a.txt", "version one")
}

// A link of a file is that file at the root.
func TestLinkOfAFile(t *testing.T) {
	h, _ := linkBox(t, rights.Read, "")
	if w := serveDAV(h, linkRequest("GET", "/public.php/webdav", "file", "", "")); w.Code != 200 || w.Body.String() != "version one" {
		t.Errorf("GET = %d %q", w.Code, w.Body)
	}
	w := serveDAV(h, linkRequest("PROPFIND", "/public.php/dav/files/file", "-", "", propfindBody, "Depth", "1"))
	if w.Code != 207 || !strings.Contains(w.Body.String(), "<d:href>/public.php/dav/files/file</d:href>") || !strings.Contains(w.Body.String(), "<d:getcontentlength>11<") {
		t.Errorf("PROPFIND = %d:\n%s", w.Code, w.Body)
	}
	if w := serveDAV(h, linkRequest("GET", "/public.php/webdav/Sub/b.txt", "file", "", "")); w.Code != http.StatusNotFound {
		t.Errorf("GET beside the shared file = %d, want 404", w.Code)
	}
}

// A link that is not live (never made, past its expiry, its owner gone)
// is no link: 401 when its token is the user name, 404 in the path; and
// over plain HTTP nothing is taken.
func TestNoSuchLink(t *testing.T) {
	h, _ := linkBox(t, rights.Read, "")
	w := serveDAV(h, linkRequest("PROPFIND", "/public.php/webdav/", "expired", "", propfindBody))
	if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("an unknown token as the user name = %d %q, want 401 and a challenge", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if w := serveDAV(h, linkRequest("PROPFIND", "/public.php/webdav/", "-", "", propfindBody)); w.Code != http.StatusUnauthorized {
		t.Errorf("no credentials = %d, want 401", w.Code)
	}
	if w := serveDAV(h, linkRequest("PROPFIND", "/public.php/dav/files/expired/", "-", "", propfindBody)); w.Code != http.StatusNotFound {
		t.Errorf("an unknown token in the path = %d, want 404", w.Code)
	}
	r := linkRequest("PROPFIND", "/public.php/webdav/", "folder", "", propfindBody)
	r.TLS = nil
	if w := serveDAV(h, r); w.Code != http.StatusUnauthorized {
		t.Errorf("over plain HTTP = %d, want 401", w.Code)
	}
}

// A link's password is asked by Basic (under the token on
// /public.php/webdav, any name on /public.php/dav/files/TOKEN), and its
// wrong guesses count at the door as its page's do: past
// auth.FreeGuesses, the link waits.
func TestLinkPassword(t *testing.T) {
	h, _ := linkBox(t, rights.Read, "open sesame")
	for _, tc := range []struct {
		r    *http.Request
		want int
	}{
		{linkRequest("PROPFIND", "/public.php/webdav/", "folder", "open sesame", propfindBody), 207},
		{linkRequest("PROPFIND", "/public.php/dav/files/folder/", "anonymous", "open sesame", propfindBody), 207},
		{linkRequest("PROPFIND", "/public.php/dav/files/folder/", "-", "", propfindBody), 401},
		{linkRequest("GET", "/public.php/webdav/a.txt", "folder", "", ""), 401},
	} {
		w := serveDAV(h, tc.r)
		if w.Code != tc.want {
			t.Errorf("%s %s as %q = %d, want %d", tc.r.Method, tc.r.URL, tc.r.Header.Get("Authorization"), w.Code, tc.want)
		}
		if tc.want == 401 && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without a challenge", tc.r.Method, tc.r.URL)
		}
	}
	for i := range auth.FreeGuesses - 1 { // the empty password above was the first
		if w := serveDAV(h, linkRequest("GET", "/public.php/webdav/a.txt", "folder", fmt.Sprint("guess", i), "")); w.Code != 401 {
			t.Fatalf("wrong guess %d = %d, want 401", i, w.Code)
		}
	}
	w := serveDAV(h, linkRequest("GET", "/public.php/dav/files/folder/a.txt", "x", "open sesame", ""))
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("the right password while the link waits = %d Retry-After %q, want 429 and a wait", w.Code, w.Header().Get("Retry-After"))
	}
}
