package users

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// A passkey is kept with the account's user handle, read back by a
// database opened afresh (the file, not memory), found by its handle,
// updated at each use and removed; the handle stays the account's, and a
// second handle is refused.
func TestPasskeysKept(t *testing.T) {
	db, dir := open(t)
	if err := db.Add("ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
	handle, err := db.PasskeyHandleFor("ann")
	if err != nil || len(handle) != 32 {
		t.Fatalf("PasskeyHandleFor = %x, %v", handle, err)
	}
	p := Passkey{ID: "AQID", Name: "phone", RPID: "bonesync.local", Created: time.Now().UTC(), Credential: []byte(`{"id":"AQID"}`)}
	if err := db.AddPasskey("ann", handle, p); err != nil {
		t.Fatal(err)
	}
	if err := db.AddPasskey("ann", handle, p); err == nil {
		t.Error("the same passkey was kept twice")
	}
	if _, err := db.PasskeyHandleFor("bob"); err == nil {
		t.Error("a user handle for no account")
	}
	p2 := p
	p2.ID = "BAUG"
	if err := db.AddPasskey("ann", bytes.Repeat([]byte{7}, 32), p2); err == nil {
		t.Error("a passkey made with another user handle was kept")
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := again.PasskeyHandleFor("ann"); err != nil || !bytes.Equal(h, handle) {
		t.Errorf("the handle read back = %x, %v; want %x", h, err, handle)
	}
	if name, ok, err := again.PasskeyOwner(handle); name != "ann" || !ok || err != nil {
		t.Errorf("PasskeyOwner = %q %v %v", name, ok, err)
	}
	if _, ok, _ := again.PasskeyOwner([]byte{1}); ok {
		t.Error("a handle nobody has has an owner")
	}
	used := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	if err := again.PasskeyUsed("ann", "AQID", []byte(`{"id":"AQID","n":2}`), used); err != nil {
		t.Fatal(err)
	}
	keys, _, _ := db.Passkeys("ann")
	if len(keys) != 1 || !keys[0].LastUsed.Equal(used) || string(keys[0].Credential) != `{"id":"AQID","n":2}` {
		t.Errorf("after a use: %+v", keys)
	}
	if err := db.RemovePasskey("ann", "AQID"); err != nil {
		t.Fatal(err)
	}
	if err := db.RemovePasskey("ann", "AQID"); !errors.Is(err, ErrNoPasskey) {
		t.Errorf("removing it twice: %v", err)
	}
	if keys, h, _ := db.Passkeys("ann"); len(keys) != 0 || !bytes.Equal(h, handle) {
		t.Errorf("after removing: %d passkeys, handle %x", len(keys), h)
	}
}
