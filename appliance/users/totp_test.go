package users

import (
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

// Two-factor login: enrolled only with a right code; then the account's
// password no longer opens clients (app passwords do), the web form's
// second step takes the current code once and each recovery code once.
func TestTOTP(t *testing.T) {
	db, clock := clockedTOTP(t)
	app, _, _ := db.NewAppPassword("ann", "phone")
	key, err := db.NewTOTP("ann")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key.URL(), "otpauth://totp/bonesync:ann?") {
		t.Errorf("the QR code's address: %s", key.URL())
	}
	if _, err := db.EnableTOTP("ann", key.Secret(), "000000"); err == nil {
		t.Fatal("enrolled with a wrong code")
	}
	if on, _ := db.TOTP("ann"); on {
		t.Fatal("on after a wrong code")
	}
	now := codeAt(t, key.Secret(), *clock, 0)
	codes, err := db.EnableTOTP("ann", key.Secret(), now)
	if err != nil || len(codes) != RecoveryCodes {
		t.Fatalf("EnableTOTP: %v %v", codes, err)
	}
	if ok, _ := db.CheckPassword("ann", "ann-password", false, Client); ok {
		t.Error("the account's password still opens WebDAV and SFTP")
	}
	if ok, _ := db.CheckPassword("ann", app, false, Client); !ok {
		t.Error("the app password no longer works")
	}
	if ok, _ := db.CheckPassword("ann", "ann-password", false, Takes{TwoFactor: true}); !ok {
		t.Error("the web form's first step refuses the password")
	}
	// The code used to enrol is spent; the next step's is taken once.
	if ok, _ := db.CheckCode("ann", now); ok {
		t.Error("the enrolment's code was taken again")
	}
	next := codeAt(t, key.Secret(), *clock, 1)
	if ok, err := db.CheckCode("ann", next); !ok || err != nil {
		t.Errorf("the next code: %v %v", ok, err)
	}
	if ok, _ := db.CheckCode("ann", next); ok {
		t.Error("a code was taken twice")
	}
	for _, bad := range []string{"", "123456", "abcde-fghij", strings.Repeat("9", 100)} {
		if ok, _ := db.CheckCode("ann", bad); ok {
			t.Errorf("%q taken", bad)
		}
	}
	if ok, _ := db.CheckCode("ann", strings.ToUpper(strings.ReplaceAll(codes[3], "-", " "))); !ok {
		t.Error("a recovery code typed in capitals with a space is refused")
	}
	if ok, _ := db.CheckCode("ann", codes[3]); ok {
		t.Error("a recovery code was taken twice")
	}
	if _, left := db.TOTP("ann"); left != RecoveryCodes-1 {
		t.Errorf("%d recovery codes left", left)
	}
	if err := db.DisableTOTP("ann"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.CheckPassword("ann", "ann-password", false, Client); !ok {
		t.Error("off again, the password does not open clients")
	}
}

// clockedTOTP is a database with ann, on a clock the test moves, 10 s
// into a step.
func clockedTOTP(t *testing.T) (*DB, *time.Time) {
	t.Helper()
	db, _ := open(t)
	now := time.Unix(1_800_000_010, 0)
	db.Now = func() time.Time { return now }
	if err := db.Add("ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
	return db, &now
}

// enrol turns two-factor login on for ann at the clock's now, with the
// code of the step enrolAt steps from now, and returns the secret.
func enrol(t *testing.T, db *DB, now time.Time, enrolAt int) string {
	t.Helper()
	key, err := db.NewTOTP("ann")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnableTOTP("ann", key.Secret(), codeAt(t, key.Secret(), now, enrolAt)); err != nil {
		t.Fatalf("enrolling with the code of step %+d: %v", enrolAt, err)
	}
	return key.Secret()
}

// codeAt is secret's code of the step d steps from now.
func codeAt(t *testing.T, secret string, now time.Time, d int) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, now.Add(time.Duration(d)*30*time.Second), totpOpts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every sequence of three logins, each at the enrolment's step or one
// later and with the code of the step before, of now or of the step
// after, is taken exactly when its step is within one of now and later
// than every step taken before (the enrolment's included): each code
// once, and none older than one used.
func TestTOTPSteps(t *testing.T) {
	type try struct{ later, code int } // later: steps after enrolment; code: its step from then
	var tries []try
	for later := range 2 {
		for code := -1; code <= 1; code++ {
			tries = append(tries, try{later, code})
		}
	}
	db, now := clockedTOTP(t)
	start := *now
	for _, enrolAt := range []int{-1, 0, 1} {
		for _, a := range tries {
			for _, b := range tries {
				for _, c := range tries {
					*now = start
					secret := enrol(t, db, start, enrolAt)
					high := step(start) + int64(enrolAt)
					for i, x := range []try{a, b, c} {
						*now = start.Add(time.Duration(x.later) * 30 * time.Second)
						s := step(*now) + int64(x.code)
						want := s > high
						got, err := db.CheckCode("ann", codeAt(t, secret, *now, x.code))
						if err != nil || got != want {
							t.Fatalf("enrolled with step %+d, tries %v: try %d (step %d, last taken %d): CheckCode = %v, %v, want %v",
								enrolAt, []try{a, b, c}, i, s, high, got, err, want)
						}
						if got {
							high = s
						}
					}
				}
			}
		}
	}
	// Two steps off is refused, whatever was taken; so is an enrolment's.
	*now = start
	secret := enrol(t, db, start, 0)
	for _, d := range []int{-2, 2} {
		if ok, _ := db.CheckCode("ann", codeAt(t, secret, start, d)); ok {
			t.Errorf("the code %+d steps from now was taken", d)
		}
		key, _ := db.NewTOTP("ann")
		if _, err := db.EnableTOTP("ann", key.Secret(), codeAt(t, key.Secret(), start, d)); err == nil {
			t.Errorf("enrolled with the code %+d steps from now", d)
		}
	}
}
