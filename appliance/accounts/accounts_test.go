package accounts

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// house is a server's parts on one state directory.
type house struct {
	dir   *state.Dir
	db    *users.DB
	files *store.Store
	book  *shares.Book
	board *notices.Board
	svc   *Service
}

func open(t *testing.T, root string) *house {
	t.Helper()
	dir, err := state.Open(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	h := &house{dir: dir}
	if h.db, err = users.Open(dir); err != nil {
		t.Fatal(err)
	}
	if h.files, err = store.Open(filepath.Join(root, "files")); err != nil {
		t.Fatal(err)
	}
	h.files.SetTrashPolicy(30*24*time.Hour, 0)
	log := slog.New(slog.DiscardHandler)
	for _, d := range []string{"shares", "notices"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if h.book, err = shares.Open(filepath.Join(root, "shares"), h.files, h.db, log); err != nil {
		t.Fatal(err)
	}
	h.files.SetMounts(h.book, h.db.Quota)
	h.board = notices.Open(filepath.Join(root, "notices"), log)
	h.svc = &Service{Users: h.db, Log: log, Parts: map[string]Part{"shares": h.book, "notices": h.board}}
	h.db.OnGone(h.svc.Gone)
	t.Cleanup(func() { h.files.Close() })
	return h
}

// give makes bob with a folder shared with alice, a link, an app
// password and a notice.
func (h *house) give(t *testing.T) (token string) {
	t.Helper()
	for _, n := range []string{"bob", "alice"} {
		if !h.db.Exists(n) {
			if err := h.db.Add(n, n+"-password"); err != nil {
				t.Fatal(err)
			}
		}
	}
	tree, err := h.files.Tree("bob")
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	tree.Mkdir("Trip")
	if _, err := h.book.Add("bob", shares.Request{Path: "/Trip", Type: shares.TypeUser, With: "alice"}); err != nil {
		t.Fatal(err)
	}
	link, err := h.book.Add("bob", shares.Request{Path: "/Trip", Type: shares.TypeLink})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.db.NewAppPassword("bob", "phone"); err != nil {
		t.Fatal(err)
	}
	if err := h.board.Post("bob", "share", "1", "hello", "a notice", ""); err != nil {
		t.Fatal(err)
	}
	return link.Token
}

// nothingLeft checks that no part has anything of bob's, and that a new
// bob made now inherits none of it.
func (h *house) nothingLeft(t *testing.T, how, token string) {
	t.Helper()
	if n := len(h.book.By("bob")); n != 0 {
		t.Errorf("%s: %d of bob's shares left in the book", how, n)
	}
	if n := len(h.book.With("alice")); n != 0 {
		t.Errorf("%s: alice still receives %d shares", how, n)
	}
	if list, _ := h.board.List("bob"); len(list) != 0 {
		t.Errorf("%s: bob's notices left: %v", how, list)
	}
	if err := h.db.Add("bob", "a-new-password"); err != nil {
		t.Fatalf("%s: the name cannot be made again: %v", how, err)
	}
	defer h.svc.Delete("bob")
	if _, ok := h.book.Link(token); ok {
		t.Errorf("%s: the old link opens for the new bob", how)
	}
	if apps, _ := h.db.AppPasswords("bob"); len(apps) != 0 {
		t.Errorf("%s: the new bob has the old app passwords: %v", how, apps)
	}
}

// From the admin page (in the server): Service.Delete.
func TestDeleteFromTheServer(t *testing.T) {
	h := open(t, t.TempDir())
	tok := h.give(t)
	if err := h.svc.Delete("bob"); err != nil {
		t.Fatal(err)
	}
	h.nothingLeft(t, "admin page", tok)
	if err := h.svc.Delete(users.Admin); err != ErrAdmin {
		t.Errorf("Delete(admin) = %v, want ErrAdmin", err)
	}
}

// From the command line beside a running server: another process's
// Service, with no parts; the server sees the account gone at its next
// read of the users file.
func TestDeleteFromTheCommandLine(t *testing.T) {
	root := t.TempDir()
	h := open(t, root)
	tok := h.give(t)
	cli, err := users.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Service{Users: cli}).Delete("bob"); err != nil {
		t.Fatal(err)
	}
	if h.db.Exists("bob") { // the server's read that tells OnGone
		t.Fatal("the server still sees bob")
	}
	h.nothingLeft(t, "command line", tok)
}

// From the command line with no server running: the next start ends
// what was bob's (Reconcile).
func TestDeleteWhileStopped(t *testing.T) {
	root := t.TempDir()
	h := open(t, root)
	tok := h.give(t)
	h.files.Close()
	cli, err := users.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Service{Users: cli}).Delete("bob"); err != nil {
		t.Fatal(err)
	}
	again := open(t, root)
	if err := again.svc.Reconcile(); err != nil {
		t.Fatal(err)
	}
	again.nothingLeft(t, "stopped server", tok)
}
