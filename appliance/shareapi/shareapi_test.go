package shareapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// basicDoor lets in any user of the test with the password "pw".
type basicDoor struct{}

func (basicDoor) Check(_ auth.Access, w http.ResponseWriter, r *http.Request) (auth.Caller, error) {
	u, p, ok := r.BasicAuth()
	if !ok || p != "pw" {
		http.Error(w, "login", http.StatusUnauthorized)
		return auth.Caller{}, auth.ErrAnswered
	}
	return auth.Caller{User: u}, nil
}

type box struct {
	t     *testing.T
	store *store.Store
	book  *shares.Book
	mux   *front.Routes
	users *users.DB
	books string // the book's folder
}

func newBox(t *testing.T) *box {
	t.Helper()
	dir := t.TempDir()
	st, _ := state.Open(dir)
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"bob", "alice", "carol"} {
		db.Add(n, n+"-password")
	}
	s, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	s.SetTrashPolicy(30*24*time.Hour, 0)
	log := slog.New(slog.DiscardHandler)
	books := t.TempDir()
	book, err := shares.Open(books, s, db, log)
	if err != nil {
		t.Fatal(err)
	}
	s.SetMounts(book, db.Quota)
	b := &box{t: t, store: s, book: book, mux: front.NewRoutes(basicDoor{}), users: db, books: books}
	(&API{Book: book, Store: s, Users: db, Log: log}).Routes(b.mux)
	bob, _ := s.Tree("bob")
	defer bob.Close()
	bob.Mkdir("Trip")
	u, _ := bob.Create("Trip/a.jpg", false)
	u.Write([]byte("AAAA"))
	u.Close()
	return b
}

func (b *box) do(user, method, target, body string, hdr ...string) (int, string) {
	b.t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.SetBasicAuth(user, "pw")
	r.Host = "box.local"
	if body != "" {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	b.mux.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

const api = "/ocs/v2.php/apps/files_sharing/api/v1/shares"

func (b *box) read(user, p string) (string, error) {
	tree, err := b.store.Tree(user)
	if err != nil {
		return "", err
	}
	defer tree.Close()
	f, err := tree.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	return string(data), nil
}

func (b *box) write(user, p, content string) error {
	tree, err := b.store.Tree(user)
	if err != nil {
		return err
	}
	defer tree.Close()
	u, err := tree.Create(p, false)
	if err != nil {
		return err
	}
	u.Write([]byte(content))
	return u.Close()
}

func TestShareWithUserByAPI(t *testing.T) {
	b := newBox(t)
	// The Android app: a form, XML back.
	code, body := b.do("bob", "POST", api, "path=%2FTrip&shareType=0&shareWith=alice&permissions=31", "OCS-APIREQUEST", "true")
	if code != 200 || !strings.Contains(body, "<share_type>0</share_type>") || !strings.Contains(body, "<share_with>alice</share_with>") {
		t.Fatalf("POST share = %d %s", code, body)
	}
	id := between(body, "<id>", "</id>")
	if got, err := b.read("alice", "Trip/a.jpg"); err != nil || got != "AAAA" {
		t.Fatalf("alice reads %q, %v", got, err)
	}
	if err := b.write("alice", "Trip/from-alice.txt", "hi"); err != nil {
		t.Errorf("alice cannot write in a read-write share: %v", err)
	}
	// Listed for bob, and for alice as shared with her, at her path.
	if _, body := b.do("bob", "GET", api+"?path=/Trip&reshares=true&subfiles=false", ""); !strings.Contains(body, "<id>"+id+"</id>") {
		t.Errorf("bob's shares of /Trip: %s", body)
	}
	var got struct {
		OCS struct{ Data []map[string]any }
	}
	_, body = b.do("alice", "GET", api+"?shared_with_me=true&format=json", "")
	json.Unmarshal([]byte(body), &got)
	if len(got.OCS.Data) != 1 || got.OCS.Data[0]["path"] != "/Trip" || got.OCS.Data[0]["uid_owner"] != "bob" {
		t.Errorf("alice's shares: %s", body)
	}
	// The Android app's update: JSON. Read-only now: alice's writes refused.
	code, body = b.do("bob", "PUT", api+"/"+id, `{"permissions":"1"}`, "Content-Type", "application/json")
	if code != 200 || !strings.Contains(body, "<permissions>1</permissions>") {
		t.Fatalf("PUT = %d %s", code, body)
	}
	if err := b.write("alice", "Trip/again.txt", "no"); err == nil {
		t.Error("alice wrote in a read-only share")
	}
	// Only the owner changes it; either ends it.
	if code, _ := b.do("alice", "PUT", api+"/"+id, "permissions=31"); code != 403 {
		t.Errorf("alice changed bob's share: %d", code)
	}
	if code, _ := b.do("carol", "DELETE", api+"/"+id, ""); code != 404 {
		t.Errorf("carol ended a share not hers: %d", code)
	}
	if code, _ := b.do("bob", "DELETE", api+"/"+id, ""); code != 200 {
		t.Errorf("DELETE = %d", code)
	}
	if _, err := b.read("alice", "Trip/a.jpg"); err == nil {
		t.Error("alice still reads after the share ended")
	}
	// Refusals.
	for _, form := range []string{"path=%2Fnothing&shareType=0&shareWith=alice", "path=%2F&shareType=0&shareWith=alice",
		"path=%2FTrip&shareType=0&shareWith=bob", "path=%2FTrip&shareType=0&shareWith=nobody", "path=%2FTrip&shareType=6&shareWith=x@y"} {
		if code, _ := b.do("bob", "POST", api, form); code != 404 && code != 400 {
			t.Errorf("POST %s = %d", form, code)
		}
	}
}

func TestLinkByAPI(t *testing.T) {
	b := newBox(t)
	// The iOS app: a form, JSON back.
	tomorrow := time.Now().AddDate(0, 0, 1).Format("2006-01-02")
	code, body := b.do("bob", "POST", api, "path=%2FTrip&shareType=3&publicUpload=true&password=sesame-long&expireDate="+tomorrow, "Accept", "application/json")
	var got struct {
		OCS struct {
			Data map[string]any
		}
	}
	json.Unmarshal([]byte(body), &got)
	d := got.OCS.Data
	tok, _ := d["token"].(string)
	if code != 200 || len(tok) != 15 || d["url"] != "https://box.local/index.php/s/"+tok || d["permissions"] != float64(15) || d["password"] == nil ||
		!strings.HasPrefix(d["expiration"].(string), tomorrow) {
		t.Fatalf("link = %d %s", code, body)
	}
	if s, ok := b.book.Link(tok); !ok || s.Hash == "" || strings.Contains(s.Hash, "sesame") {
		t.Errorf("the link as kept: %+v", s)
	}
	// Expired: gone.
	b.book.Now = func() time.Time { return time.Now().AddDate(0, 0, 3) }
	if _, ok := b.book.Link(tok); ok {
		t.Error("an expired link still works")
	}
}

func TestSharees(t *testing.T) {
	b := newBox(t)
	_, body := b.do("bob", "GET", "/ocs/v2.php/apps/files_sharing/api/v1/sharees?format=json&search=AL&itemType=file&page=1&perPage=50&lookup=false", "")
	if !strings.Contains(body, `"shareWith":"alice"`) || strings.Contains(body, `"shareWith":"bob"`) || strings.Contains(body, "carol") {
		t.Errorf("sharees for al: %s", body)
	}
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	if j := strings.Index(s, b); j >= 0 {
		return s[:j]
	}
	return ""
}

// A deleted account's shares and links give nothing at once, and end.
func TestDeletedOwnerSharesNothing(t *testing.T) {
	b := newBox(t)
	if code, body := b.do("bob", "POST", api, "path=%2FTrip&shareType=0&shareWith=alice&permissions=31"); code != 200 {
		t.Fatalf("share = %d %s", code, body)
	}
	code, body := b.do("bob", "POST", api, "path=%2FTrip&shareType=3", "Accept", "application/json")
	var got struct{ OCS struct{ Data map[string]any } }
	json.Unmarshal([]byte(body), &got)
	tok, _ := got.OCS.Data["token"].(string)
	if code != 200 || tok == "" {
		t.Fatalf("link = %d %s", code, body)
	}
	if err := b.users.Delete("bob"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.book.Link(tok); ok {
		t.Error("the link of a deleted account still opens")
	}
	if _, err := b.read("alice", "Trip/a.jpg"); err == nil {
		t.Error("alice still reads a deleted account's files")
	}
	// Made again with the same name before the book heard of the
	// deletion: the new bob inherits neither the link nor the share.
	if err := b.users.Add("bob", "bob-password-2"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.book.Link(tok); ok {
		t.Error("the link of a deleted account opens for a new account of its name")
	}
	if _, err := b.read("alice", "Trip/a.jpg"); err == nil {
		t.Error("alice reads the new bob's files through the old bob's share")
	}
	if err := b.book.UserGone("bob"); err != nil || len(b.book.By("bob")) != 0 {
		t.Errorf("UserGone = %v, left %d", err, len(b.book.By("bob")))
	}
}

// A share expiring on 9999-12-31 ends at the start of year 10000, which
// no state file can hold: the request is refused with a 400 naming the
// expiry, and the book keeps every share it had, on disk and after a
// restart. Before, the book's encoder failed, the error was dropped and
// an empty book was written.
func TestFarExpiryKeepsTheBook(t *testing.T) {
	b := newBox(t)
	if code, body := b.do("bob", "POST", api, "path=%2FTrip&shareType=0&shareWith=alice"); code != 200 {
		t.Fatalf("share = %d %s", code, body)
	}
	before, _ := os.ReadFile(filepath.Join(b.books, "shares.json"))
	for _, req := range []struct{ method, target, body string }{
		{"POST", api, "path=%2FTrip&shareType=3&expireDate=9999-12-31"},
		{"POST", api, "path=%2FTrip&shareType=0&shareWith=carol&expireDate=9999-12-31"},
		{"PUT", api + "/1", "expireDate=9999-12-31"},
	} {
		code, body := b.do("bob", req.method, req.target, req.body)
		if code != 400 || !strings.Contains(body, "expiry") || !strings.Contains(body, "9999") {
			t.Errorf("%s %s %s = %d %s, want 400 naming the expiry", req.method, req.target, req.body, code, body)
		}
	}
	after, _ := os.ReadFile(filepath.Join(b.books, "shares.json"))
	if !bytes.Equal(before, after) {
		t.Errorf("the book on disk changed:\n%s\nwas\n%s", after, before)
	}
	again, err := shares.Open(b.books, b.store, b.users, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("the server cannot start on the book it wrote: %v", err)
	}
	if got := again.By("bob"); len(got) != 1 || got[0].With != "alice" {
		t.Errorf("shares after a restart: %+v, want alice's one", got)
	}
	// The last day that can be kept is taken.
	if code, body := b.do("bob", "POST", api, "path=%2FTrip&shareType=3&expireDate=9999-12-30"); code != 200 {
		t.Errorf("a share to 9999-12-30 = %d %s, want 200", code, body)
	}
}

// A book that cannot be written is a 500, and the share is not made.
func TestUnwritableBookIs500(t *testing.T) {
	b := newBox(t)
	if err := os.RemoveAll(b.books); err != nil { // even root cannot write there now
		t.Fatal(err)
	}
	code, body := b.do("bob", "POST", api, "path=%2FTrip&shareType=0&shareWith=alice")
	if code != 500 {
		t.Errorf("share with an unwritable book = %d %s, want 500", code, body)
	}
	if n := len(b.book.By("bob")); n != 0 {
		t.Errorf("%d shares kept in memory, want none", n)
	}
}
