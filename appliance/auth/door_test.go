package auth

import (
	"log/slog"
	"testing"

	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
)

// An address is known once an account logged in from it (what lets it
// through a flood at the ports), not after a wrong password nor after a
// public link's password.
func TestKnownAddresses(t *testing.T) {
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Add("ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
	d := New(db, slog.New(slog.DiscardHandler))
	if d.Password("10.0.0.2", "webdav", "ann", "wrong") != Wrong || d.Known("10.0.0.2") {
		t.Error("a wrong password made its address known")
	}
	hash, _ := db.Hash("link-password")
	if d.LinkPassword("10.0.0.3", "tok", hash, "link-password") != OK || d.Known("10.0.0.3") {
		t.Error("a public link's password made its address known")
	}
	if d.Password("10.0.0.4", "webdav", "ann", "ann-password") != OK || !d.Known("10.0.0.4") {
		t.Error("a login did not make its address known")
	}
	if d.Known("10.0.0.5") {
		t.Error("an address never seen is known")
	}
}
