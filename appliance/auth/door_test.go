package auth

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/logtext"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/users"
)

// An address is known once an account logged in from it (what lets it
// through a flood at the ports), not after a wrong password nor after a
// public link's password.
func TestKnownAddresses(t *testing.T) {
	d, db := annDoor(t, slog.New(slog.DiscardHandler))
	if d.Password("10.0.0.2", basicPassword, "ann", "wrong") != Wrong || d.Known("10.0.0.2") {
		t.Error("a wrong password made its address known")
	}
	hash, _ := db.Hash("link-password")
	if d.LinkPassword("10.0.0.3", "tok", hash, "link-password") != OK || d.Known("10.0.0.3") {
		t.Error("a public link's password made its address known")
	}
	if d.Password("10.0.0.4", basicPassword, "ann", "ann-password") != OK || !d.Known("10.0.0.4") {
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
	d, db := annDoor(t, slog.New(slog.DiscardHandler))
	rec, err := audit.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Audit(rec)
	for range 3 {
		d.Password("10.0.0.4", basicPassword, "ann", "ann-password")
	}
	hash, _ := db.Hash("link-password")
	d.LinkPassword("10.0.0.5", "tok", hash, "link-password")
	for range MaxFailures {
		d.Password("10.0.0.6", SSHPassword, "root", "guess")
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
	d, db := annDoor(t, slog.New(slog.DiscardHandler))
	key, _ := db.NewTOTP("ann")
	code, _ := totp.GenerateCode(key.Secret(), time.Now())
	if _, err := db.EnableTOTP("ann", key.Secret(), code); err != nil {
		t.Fatal(err)
	}
	const addr = "10.0.0.9"
	for i := range MaxFailures {
		if res := d.Password(addr, Form, "ann", "ann-password"); res != NeedsCode {
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

// countTurns counts the hashes the user database runs.
type countTurns struct{ n atomic.Int32 }

func (c *countTurns) Take(bool, int64) func() { c.n.Add(1); return func() {} }

// annDoor is a door, logging to log, to a users database with ann
// (password "ann-password").
func annDoor(t *testing.T, log *slog.Logger) (*Door, *users.DB) {
	t.Helper()
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
	return New(db, log), db
}

// 200 failed logins with 500 KB names from 50 addresses, over every way
// a client names an account, leave the door holding the names cut to
// users.MaxName, cost no hash (such a name is no one's), and log and
// record them cut: they held 100 MB, and the log grew by 95 MB.
func TestLongNamesNotKept(t *testing.T) {
	var log strings.Builder
	d, db := annDoor(t, sysd.NewLogger(&log))
	var turns countTurns
	db.HashWith(&turns)
	rec, _ := audit.Open(t.TempDir())
	d.Audit(rec)
	huge := "\x1b[31m" + strings.Repeat("a", 500<<10)
	for i := range 200 {
		addr := fmt.Sprintf("10.0.1.%d", i%50)
		var res Result
		switch i % 4 {
		case 0:
			res = d.Password(addr, basicPassword, huge, "guess")
		case 1:
			res = d.Password(addr, Form, huge, "guess")
		case 2:
			res = d.Code(addr, huge, "000000")
		case 3:
			d.KeysRefused(addr, huge)
			res = Wrong
		}
		if res != Wrong && res != Delayed { // past the free guesses, the name's delay (throttle.go)
			t.Fatalf("login %d with a 500 KB name = %v, want Wrong or Delayed", i, res)
		}
	}
	if n := turns.n.Load(); n != 0 {
		t.Errorf("%d hashes ran for names no account can have", n)
	}
	held, failures := 0, 0
	for _, r := range d.bans.addrs {
		for _, f := range r.failures {
			held += len(f.user)
			failures++
		}
	}
	if failures == 0 || failures > 200 || held > 200*(users.MaxName+logtext.Marker+len(" (no key accepted)")) {
		t.Errorf("the bans hold %d failures, %d bytes of names", failures, held)
	}
	if n := log.Len(); n > 200*1000 {
		t.Errorf("200 failed logins logged %d bytes", n)
	}
	rec.Flush()
	if got, _ := rec.Recent(1); len(got) != 1 || !strings.HasPrefix(got[0].User, `\x1b[31maaa`) || len(got[0].User) > users.MaxName+logtext.Marker+len(" (no key accepted)") {
		t.Errorf("recorded %+v", got)
	}
	// A name as long as an account's may be is checked: the bound is no
	// tighter than the accounts'.
	if d.Password("10.0.2.1", basicPassword, strings.Repeat("a", users.MaxName), "guess") != Wrong || turns.n.Load() != 1 {
		t.Errorf("a %d-byte name ran %d hashes, want 1", users.MaxName, turns.n.Load())
	}
}
