package users

import (
	"os"
	"strings"
	"testing"
)

func TestAppPasswords(t *testing.T) {
	db, dir := open(t)
	if err := db.Add("ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
	stamp := db.Stamp("ann")
	pw, ap, err := db.NewAppPassword("ann", "phone")
	if err != nil {
		t.Fatal(err)
	}
	pw2, _, err := db.NewAppPassword("ann", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if !looksLikeAppSecret(pw) || pw == pw2 {
		t.Fatalf("app passwords %q, %q", pw, pw2)
	}
	b, _ := os.ReadFile(dir.Join(File))
	if strings.Contains(string(b), pw) {
		t.Error("users.json holds an app password in clear")
	}
	for _, p := range []string{pw, pw2, "ann-password"} {
		if !ok(db.CheckPassword("ann", p, false, Client)) {
			t.Errorf("%q does not log ann in", p)
		}
	}
	if ok(db.CheckPassword("bob", pw, false, Client)) {
		t.Error("ann's app password logs in another name")
	}
	if db.Stamp("ann") != stamp {
		t.Error("a new app password changed the session stamp")
	}
	if err := db.RevokeAppPassword("ann", ap.ID); err != nil {
		t.Fatal(err)
	}
	if ok(db.CheckPassword("ann", pw, false, Client)) || !ok(db.CheckPassword("ann", pw2, false, Client)) {
		t.Error("revoking one app password did the wrong thing")
	}
	if err := db.RevokeAppPassword("ann", ap.ID); err != ErrNoAppPassword {
		t.Errorf("revoking twice: %v", err)
	}
	if _, _, err := db.NewAppPassword("ann", " \t"); err == nil {
		t.Error("an unnamed app password was made")
	}
	list, _ := db.AppPasswords("ann")
	if len(list) != 1 || list[0].Label != "laptop" {
		t.Errorf("AppPasswords = %+v", list)
	}
	db.SetPassword("ann", "a-new-password")
	if db.Stamp("ann") == stamp {
		t.Error("a password change kept the session stamp")
	}
	if !ok(db.CheckPassword("ann", pw2, false, Client)) {
		t.Error("a password change revoked the app passwords")
	}
	db.Delete("ann")
	if db.Stamp("ann") != "" || ok(db.CheckPassword("ann", pw2, false, Client)) {
		t.Error("a deleted account's app password still works")
	}
}
