package shares

import (
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

func newBook(t *testing.T) (*Book, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	st, _ := state.Open(dir)
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"bob", "alice"} {
		db.Add(n, n+"-password")
	}
	files, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	tree, _ := files.Tree("bob")
	tree.Mkdir("Trip")
	tree.Close()
	b, err := Open(t.TempDir(), files, db, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	files.SetMounts(b, db.Quota)
	return b, files
}

// A share past its expiry gives nothing at once and is ended by Expire;
// one whose expiry no state file can hold is refused, the book unchanged.
func TestExpiry(t *testing.T) {
	b, files := newBook(t)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	b.Now = func() time.Time { return now }
	s, err := b.Add("bob", Request{Path: "/Trip", Type: TypeUser, With: "alice", Expires: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.With("alice")) != 1 {
		t.Fatalf("alice's shares: %+v", b.With("alice"))
	}
	if _, err := b.Add("bob", Request{Path: "/Trip", Type: TypeLink, Expires: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("a share to the year 10000 was made")
	}
	now = now.Add(2 * time.Hour)
	if len(b.With("alice")) != 0 {
		t.Error("an expired share still gives alice the folder")
	}
	if n := b.Expire(); n != 1 {
		t.Errorf("Expire ended %d, want 1", n)
	}
	if _, err := b.Get("bob", s.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the expired share after Expire: %v", err)
	}
	tree, _ := files.Tree("alice")
	defer tree.Close()
	if _, err := tree.Stat("/Trip"); err == nil {
		t.Error("alice still sees the folder")
	}
}

// A link's WebDAV finds the live link by its token: what it shares, with
// its rights and its password's hash; past its expiry, nothing.
func TestPublicLink(t *testing.T) {
	b, _ := newBook(t)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	b.Now = func() time.Time { return now }
	s, err := b.Add("bob", Request{Path: "/Trip", Type: TypeLink, Password: "open sesame", Expires: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	m, hash, ok := b.PublicLink(s.Token)
	if !ok || m.Owner != "bob" || m.Path != "/Trip" || m.FileID != s.FileID || int(m.Perm) != s.Perm || hash == "" || hash != s.Hash {
		t.Errorf("PublicLink = %+v %q %v, want bob's /Trip with the link's rights and hash", m, hash, ok)
	}
	if _, _, ok := b.PublicLink("not" + s.Token); ok {
		t.Error("another token found the link")
	}
	now = now.Add(2 * time.Hour)
	if _, _, ok := b.PublicLink(s.Token); ok {
		t.Error("the link past its expiry was found")
	}
}
