package files

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/store"
)

// mounts are the shares user u receives, in memory.
type mounts []store.Mount

func (m *mounts) Mounts(user string) []store.Mount {
	if user != "u" {
		return nil
	}
	return append([]store.Mount(nil), *m...)
}
func (m *mounts) Mount(user, name string) (store.Mount, bool) {
	for _, x := range m.Mounts(user) {
		if x.Name == name {
			return x, true
		}
	}
	return store.Mount{}, false
}
func (m *mounts) Renamed(user, id, name string) error { return nil }
func (m *mounts) Left(user, id string) error          { return nil }

// sharedBox is the files protocol for u, who receives o's folder Docs
// (a.txt, Sub/keep.txt) as Docs with the permissions perm.
func sharedBox(t *testing.T, perm rights.Set) (*Handler, *store.Tree) {
	t.Helper()
	h := newDAV(t, 0)
	h.Store.(*store.Store).SetTrashPolicy(30*24*time.Hour, 0)
	var m mounts
	h.Store.(*store.Store).SetMounts(&m, func(string) int64 { return 0 })
	o, err := h.Store.Tree("o")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	for _, d := range []string{"Docs", "Docs/Sub"} {
		if err := o.Mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{"Docs/a.txt": "version one", "Docs/Sub/keep.txt": "keep"} {
		u, err := o.Create(p, false)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(u, body)
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}
	in, err := o.Info("Docs")
	if err != nil {
		t.Fatal(err)
	}
	m = append(m, store.Mount{ID: "1", Name: "Docs", Owner: "o", FileID: in.FileID, Path: "/Docs", Perm: perm})
	return h, o
}

func ownerHas(t *testing.T, o *store.Tree, p, want string) {
	t.Helper()
	f, err := o.Open(p)
	if err != nil {
		t.Errorf("the owner's %s: %v", p, err)
		return
	}
	defer f.Close()
	if b, _ := io.ReadAll(f); string(b) != want {
		t.Errorf("the owner's %s = %q, want %q", p, b, want)
	}
}

// A read-only share takes no property and no date; the user's own star
// is theirs to set.
func TestProppatchInReadOnlyShare(t *testing.T) {
	h, o := sharedBox(t, rights.Read)
	dead := `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:tag>written</x:tag></d:prop></d:set></d:propertyupdate>`
	must(t, h, 403, davRequest("PROPPATCH", "/remote.php/dav/files/u/Docs/a.txt", dead))
	must(t, h, 403, davRequest("PROPPATCH", "/remote.php/dav/files/u/Docs", dead))
	date := `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:lastmodified>Mon, 01 Jan 2001 00:00:00 GMT</d:lastmodified></d:prop></d:set></d:propertyupdate>`
	must(t, h, 403, davRequest("PROPPATCH", "/remote.php/dav/files/u/Docs/a.txt", date))
	if in, _ := o.Info("Docs/a.txt"); in.ModTime().Year() == 2001 {
		t.Error("the recipient of a read-only share set the file's date")
	}
	f, err := o.Open("Docs/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if props, _ := fdProps(f); len(props) != 0 {
		t.Errorf("the recipient of a read-only share wrote %v", props)
	}
	f.Close()
	star := `<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>`
	must(t, h, 207, davRequest("PROPPATCH", "/remote.php/dav/files/u/Docs/a.txt", star))
}

// A MOVE the share refuses leaves the destination; one it allows, across
// the share's edge, is a copy and a delete.
func TestMoveAcrossShare(t *testing.T) {
	h, o := sharedBox(t, rights.Read)
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/Mine", ""))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/Mine/m.txt", "mine"))
	must(t, h, 403, davRequest("MOVE", "/remote.php/dav/files/u/Mine", "", "Destination", "https://box/remote.php/dav/files/u/Docs/Sub"))
	ownerHas(t, o, "Docs/Sub/keep.txt", "keep")

	h, o = sharedBox(t, rights.All)
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/Mine", ""))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/Mine/m.txt", "mine"))
	must(t, h, 204, davRequest("MOVE", "/remote.php/dav/files/u/Mine", "", "Destination", "https://box/remote.php/dav/files/u/Docs/Sub"))
	ownerHas(t, o, "Docs/Sub/m.txt", "mine")
	must(t, h, 404, davRequest("GET", "/remote.php/dav/files/u/Mine/m.txt", ""))
	must(t, h, 201, davRequest("MOVE", "/remote.php/dav/files/u/Docs/a.txt", "", "Destination", "https://box/remote.php/dav/files/u/a.txt"))
	if got := must(t, h, 200, davRequest("GET", "/remote.php/dav/files/u/a.txt", "")); got != "version one" {
		t.Errorf("moved out of the share: %q", got)
	}
}

// A shared file's versions are its owner's: listed, read and restored
// through the share (a read-write one).
func TestVersionsOfSharedFile(t *testing.T) {
	h, o := sharedBox(t, rights.All)
	must(t, h, 204, davRequest("PUT", "/remote.php/dav/files/u/Docs/a.txt", "version two"))
	in, err := o.Info("Docs/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	base := "/remote.php/dav/versions/u/versions/" + strconv.FormatUint(in.FileID, 10)
	list := must(t, h, 207, davRequest("PROPFIND", base, versionProps, "Depth", "1"))
	href := first(t, `<d:href>(`+base+`/\d+)</d:href>`, list)
	if got := must(t, h, 200, davRequest("GET", href, "")); got != "version one" {
		t.Errorf("the version reads %q", got)
	}
	name := href[strings.LastIndex(href, "/")+1:]
	must(t, h, 201, davRequest("MOVE", href, "", "Destination", "https://box/remote.php/dav/versions/u/restore/"+name))
	ownerHas(t, o, "Docs/a.txt", "version one")
}

// A lock on a shared file holds for everyone who reaches it: the owner's
// lock against the recipient, the recipient's against the owner; the
// recipient sees it at their own path.
func TestLocksAcrossShare(t *testing.T) {
	h, _ := sharedBox(t, rights.All)
	doors.Store(h, basicDoor{})
	lockBody := `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`
	as := func(user string, r *http.Request) *http.Request {
		r.SetBasicAuth(user, "pw")
		return r
	}
	w := muxed(h, as("o", davRequest("LOCK", "/remote.php/dav/files/o/Docs/a.txt", lockBody)))
	if w.Code != 200 {
		t.Fatalf("owner's LOCK = %d %s", w.Code, w.Body.String())
	}
	token := w.Header().Get("Lock-Token")
	must(t, h, 423, as("u", davRequest("PUT", "/remote.php/dav/files/u/Docs/a.txt", "overwritten")))
	must(t, h, 423, as("u", davRequest("DELETE", "/remote.php/dav/files/u/Docs/a.txt", "")))
	disc := must(t, h, 207, as("u", davRequest("PROPFIND", "/remote.php/dav/files/u/Docs/a.txt",
		`<d:propfind xmlns:d="DAV:"><d:prop><d:lockdiscovery/></d:prop></d:propfind>`, "Depth", "0")))
	if !strings.Contains(disc, "<lockroot><href>/remote.php/dav/files/u/Docs/a.txt</href></lockroot>") {
		t.Errorf("the recipient's lockdiscovery: %s", disc)
	}
	must(t, h, 204, as("o", davRequest("UNLOCK", "/remote.php/dav/files/o/Docs/a.txt", "", "Lock-Token", token)))
	must(t, h, 204, as("u", davRequest("PUT", "/remote.php/dav/files/u/Docs/a.txt", "mine now")))

	// The recipient locks the folder; the owner cannot add to it.
	if w := muxed(h, as("u", davRequest("LOCK", "/remote.php/dav/files/u/Docs", lockBody))); w.Code != 200 {
		t.Fatalf("recipient's LOCK = %d %s", w.Code, w.Body.String())
	}
	must(t, h, 423, as("o", davRequest("PUT", "/remote.php/dav/files/o/Docs/new.txt", "x")))
}

// basicDoor lets in whoever Basic auth names.
type basicDoor struct{}

func (basicDoor) Check(_ auth.Access, w http.ResponseWriter, r *http.Request) (auth.Caller, error) {
	u, _, ok := r.BasicAuth()
	if !ok {
		return auth.Caller{}, auth.ErrAnswered
	}
	return auth.Caller{User: u}, nil
}

// A lock is a claim to write: the recipient of a read-only share cannot
// lock the owner's files (and so lock the owner out of them); of a
// read-write one, can.
func TestLockInReadOnlyShare(t *testing.T) {
	lock := `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`
	h, _ := sharedBox(t, rights.Read)
	must(t, h, 403, davRequest("LOCK", "/remote.php/dav/files/u/Docs/a.txt", lock))
	h, _ = sharedBox(t, rights.All)
	must(t, h, 200, davRequest("LOCK", "/remote.php/dav/files/u/Docs/a.txt", lock))
}
