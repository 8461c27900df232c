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
	accounts, dir := open(t)
	if err := accounts.Add("ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
	db := PasskeysOf(accounts)
	handle, err := db.HandleFor("ann")
	if err != nil || len(handle) != 32 {
		t.Fatalf("PasskeyHandleFor = %x, %v", handle, err)
	}
	p := Passkey{ID: "AQID", Name: "phone", RPID: "bonesync.local", Created: time.Now().UTC(), Credential: []byte(`{"id":"AQID"}`)}
	if err := db.Add("ann", handle, p); err != nil {
		t.Fatal(err)
	}
	if err := db.Add("ann", handle, p); err == nil {
		t.Error("the same passkey was kept twice")
	}
	if _, err := db.HandleFor("bob"); err == nil {
		t.Error("a user handle for no account")
	}
	p2 := p
	p2.ID = "BAUG"
	if err := db.Add("ann", bytes.Repeat([]byte{7}, 32), p2); err == nil {
		t.Error("a passkey made with another user handle was kept")
	}
	reopened, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	again := PasskeysOf(reopened)
	if h, err := again.HandleFor("ann"); err != nil || !bytes.Equal(h, handle) {
		t.Errorf("the handle read back = %x, %v; want %x", h, err, handle)
	}
	if name, ok, err := again.Owner(handle); name != "ann" || !ok || err != nil {
		t.Errorf("PasskeyOwner = %q %v %v", name, ok, err)
	}
	if _, ok, _ := again.Owner([]byte{1}); ok {
		t.Error("a handle nobody has has an owner")
	}
	used := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	if err := again.Used("ann", "AQID", []byte(`{"id":"AQID","n":2}`), used); err != nil {
		t.Fatal(err)
	}
	keys, _, _ := db.Of("ann")
	if len(keys) != 1 || !keys[0].LastUsed.Equal(used) || string(keys[0].Credential) != `{"id":"AQID","n":2}` {
		t.Errorf("after a use: %+v", keys)
	}
	if err := db.Remove("ann", "AQID"); err != nil {
		t.Fatal(err)
	}
	if err := db.Remove("ann", "AQID"); !errors.Is(err, ErrNoPasskey) {
		t.Errorf("removing it twice: %v", err)
	}
	if keys, h, _ := db.Of("ann"); len(keys) != 0 || !bytes.Equal(h, handle) {
		t.Errorf("after removing: %d passkeys, handle %x", len(keys), h)
	}
}

// An account deleted and made again with its name has none of the old
// one's passkeys: the old handle names nobody.
func TestPasskeysEndWithTheAccount(t *testing.T) {
	accounts, _ := open(t)
	if err := accounts.Add("ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
	keys := PasskeysOf(accounts)
	handle, _ := keys.HandleFor("ann")
	if err := keys.Add("ann", handle, Passkey{ID: "AQID", Name: "phone", RPID: "bonesync.local", Credential: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := accounts.Delete("ann"); err != nil {
		t.Fatal(err)
	}
	if err := accounts.Add("ann", "new-password"); err != nil {
		t.Fatal(err)
	}
	if name, ok, _ := keys.Owner(handle); ok {
		t.Errorf("the deleted account's passkey names %s", name)
	}
	if list, h, _ := keys.Of("ann"); len(list) != 0 || h != nil {
		t.Errorf("the new ann has %d passkeys and handle %x", len(list), h)
	}
}
