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
	db, _ := open(t)
	if err := db.Add("ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
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
	now, _ := totp.GenerateCode(key.Secret(), time.Now())
	codes, err := db.EnableTOTP("ann", key.Secret(), now)
	if err != nil || len(codes) != RecoveryCodes {
		t.Fatalf("EnableTOTP: %v %v", codes, err)
	}
	if ok, _ := db.CheckPassword("ann", "ann-password", false); ok {
		t.Error("the account's password still opens WebDAV and SFTP")
	}
	if ok, _ := db.CheckPassword("ann", app, false); !ok {
		t.Error("the app password no longer works")
	}
	if ok, _ := db.CheckAccountPassword("ann", "ann-password", false); !ok {
		t.Error("the web form's first step refuses the password")
	}
	// The code used to enrol is spent; the next step's is taken once.
	if ok, _ := db.CheckCode("ann", now); ok {
		t.Error("the enrolment's code was taken again")
	}
	next, _ := totp.GenerateCode(key.Secret(), time.Now().Add(30*time.Second))
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
	if ok, _ := db.CheckPassword("ann", "ann-password", false); !ok {
		t.Error("off again, the password does not open clients")
	}
}
