package auth

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/bonesync/bonesync/appliance/audit"
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

// The audit log gets each failed login and the ban they earn, and a
// login once however many requests carry it; a public link's password is
// no login of an account.
func TestDoorAudits(t *testing.T) {
	st, _ := state.Open(t.TempDir())
	db, _ := users.Open(st)
	db.Add("ann", "ann-password")
	d := New(db, slog.New(slog.DiscardHandler))
	rec, err := audit.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Audit(rec)
	for range 3 {
		d.Password("10.0.0.4", "https", "ann", "ann-password")
	}
	hash, _ := db.Hash("link-password")
	d.LinkPassword("10.0.0.5", "tok", hash, "link-password")
	for range MaxFailures {
		d.Password("10.0.0.6", "sftp", "root", "guess")
	}
	rec.Flush()
	got, _ := rec.Recent(100)
	kinds := []string{}
	for _, e := range got {
		kinds = append(kinds, e.Kind+" "+e.Addr)
	}
	want := []string{"banned 10.0.0.6", "login failed 10.0.0.6", "login failed 10.0.0.6", "login failed 10.0.0.6", "login failed 10.0.0.6", "login failed 10.0.0.6", "login 10.0.0.4"}
	if strings.Join(kinds, ", ") != strings.Join(want, ", ") {
		t.Errorf("recorded (newest first):\n%v\nwant\n%v", kinds, want)
	}
}

// A thief of the password cannot guess codes for ever: the right password
// between wrong codes forgives none of them (it cleared the failures).
func TestCodesCountTowardsTheBan(t *testing.T) {
	st, _ := state.Open(t.TempDir())
	db, _ := users.Open(st)
	db.Add("ann", "ann-password")
	key, _ := db.NewTOTP("ann")
	code, _ := totp.GenerateCode(key.Secret(), time.Now())
	if _, err := db.EnableTOTP("ann", key.Secret(), code); err != nil {
		t.Fatal(err)
	}
	d := New(db, slog.New(slog.DiscardHandler))
	const addr = "10.0.0.9"
	for i := range MaxFailures {
		if res := d.AccountPassword(addr, "web", "ann", "ann-password"); res != OK {
			t.Fatalf("the password, round %d: %v", i, res)
		}
		if d.Known(addr) {
			t.Fatal("the password alone made the address known")
		}
		d.Code(addr, "ann", "000000")
	}
	if banned, _ := d.Banned(addr); !banned {
		t.Errorf("%d wrong codes, each after the right password, earned no ban", MaxFailures)
	}
}
