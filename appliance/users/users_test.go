package users

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/state"
)

func open(t *testing.T) (*DB, *state.Dir) {
	t.Helper()
	dir, _ := state.Open(t.TempDir())
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db, dir
}

func TestAdminMadeOnceNeverStoredInClear(t *testing.T) {
	db, dir := open(t)
	var kept, storedWhenKept string
	pw, err := db.EnsureAdmin(func(p string) {
		kept = p
		b, _ := os.ReadFile(dir.Join(File))
		storedWhenKept = string(b)
	})
	if err != nil || len(pw) != 23 {
		t.Fatalf("EnsureAdmin = %q, %v", pw, err)
	}
	// The password is kept for the owner before the account is stored.
	if kept != pw || strings.Contains(storedWhenKept, Admin) {
		t.Errorf("kept %q (made %q); the database then held %q", kept, pw, storedWhenKept)
	}
	b, _ := os.ReadFile(dir.Join(File))
	if strings.Contains(string(b), pw) || !strings.Contains(string(b), "$argon2id$v=19$m=12288,t=3,p=1$") {
		t.Errorf("users.json holds the password in clear or no argon2id hash:\n%s", b)
	}
	if fi, _ := os.Stat(dir.Join(File)); fi.Mode().Perm() != 0o600 {
		t.Errorf("users.json mode %v, want 0600", fi.Mode().Perm())
	}
	if !ok(db.CheckPassword(Admin, pw, false, Client)) || ok(db.CheckPassword(Admin, pw+"x", false, Client)) || ok(db.CheckPassword("nobody", pw, false, Client)) {
		t.Error("CheckPassword is wrong about the admin password")
	}
	if again, _ := db.EnsureAdmin(nil); again != "" {
		t.Error("EnsureAdmin made a second admin")
	}
}

func TestChangesSeenByAnotherProcess(t *testing.T) {
	server, dir := open(t)
	cli, _ := Open(dir) // `bonesync user ...` in another process
	if err := cli.Add("alice", "correct horse"); err != nil {
		t.Fatal(err)
	}
	if !ok(server.CheckPassword("alice", "correct horse", false, Client)) {
		t.Fatal("the server does not see a user added by another process")
	}
	cli.SetPassword("alice", "battery staple")
	if ok(server.CheckPassword("alice", "correct horse", false, Client)) {
		t.Error("the old password still works after passwd (stale cache)")
	}
	if !ok(server.CheckPassword("alice", "battery staple", false, Client)) {
		t.Error("the new password does not work")
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	sp, _ := ssh.NewPublicKey(pub)
	line := ssh.MarshalAuthorizedKey(sp)
	if n, err := cli.AddKeys("alice", append([]byte("# comment\n\n"), line...)); n != 1 || err != nil {
		t.Fatalf("AddKeys = %d, %v", n, err)
	}
	if n, _ := cli.AddKeys("alice", line); n != 0 {
		t.Errorf("adding the same key again added %d", n)
	}
	if !ok(server.CheckKey("alice", sp)) {
		t.Error("the server does not accept the added key")
	}
	cli.Delete("alice")
	if ok(server.CheckPassword("alice", "battery staple", false, Client)) || ok(server.CheckKey("alice", sp)) {
		t.Error("a deleted user can still log in")
	}
}

func TestRejects(t *testing.T) {
	db, _ := open(t)
	for _, name := range []string{"", "Bob", "1bob", "bob/x", "../x", strings.Repeat("a", 33)} {
		if err := db.Add(name, "long enough"); err == nil {
			t.Errorf("Add(%q) succeeded", name)
		}
	}
	if err := db.Add("bob", "short"); err == nil {
		t.Error("a 5-character password was accepted")
	}
	db.Add("bob", "long enough")
	if err := db.Add("bob", "long enough"); err == nil {
		t.Error("adding bob twice succeeded")
	}
	if _, err := db.AddKeys("bob", []byte("ssh-ed25519 notbase64\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("AddKeys(garbage) = %v, want an error naming line 1", err)
	}
	if err := db.SetPassword("nobody", "long enough"); err == nil {
		t.Error("SetPassword on a missing user succeeded")
	}
}

func TestDamagedFile(t *testing.T) {
	_, dir := open(t)
	os.WriteFile(dir.Join(File), []byte("{not json"), 0o600)
	if _, err := Open(dir); !state.IsDamaged(err) || !strings.Contains(err.Error(), dir.Join(File)) {
		t.Errorf("Open(damaged) = %v, want a Damaged error naming the file", err)
	}
}

func TestNewPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		p := NewPassword()
		if len(p) != 23 || strings.Count(p, "-") != 3 || strings.ContainsAny(p, "il01o") || seen[p] {
			t.Fatalf("NewPassword() = %q", p)
		}
		seen[p] = true
	}
}

// ok is a check's answer, failing on a fault of the server's.
func ok(good bool, err error) bool {
	if err != nil {
		panic(err)
	}
	return good
}

// A users file the server cannot read (written by root, 0600, under a
// service that runs as another user) is the server's fault: the check says
// so, it does not answer "wrong password".
func TestUnreadableUsersFileIsAFault(t *testing.T) {
	// Root reads anything: an unparsable file stands for an unreadable one.
	dir, _ := state.Open(t.TempDir())
	db, _ := Open(dir)
	if err := db.Add("alice", "correct horse"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir.Join(File), []byte("{not json"), 0o600)
	if good, err := db.CheckPassword("alice", "correct horse", false, Client); good || err == nil {
		t.Errorf("with a damaged users file: %v, %v; want a fault", good, err)
	}
}

// A hash an earlier version made (19 MiB, 2 passes) still logs in, with its
// own parameters, and is then replaced by one of the box's; one the box could not check within its memory ceiling,
// or that would hold the logins behind it for long, is refused.
func TestHashParameters(t *testing.T) {
	db, dir := open(t)
	salt := []byte("sixteen byte slt")
	phc := func(m, tm uint32, password string) string {
		enc := base64.RawStdEncoding
		sum := argon2.IDKey([]byte(password), salt, tm, m, 1, 32)
		return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=1$%s$%s", m, tm, enc.EncodeToString(salt), enc.EncodeToString(sum))
	}
	if err := db.SetPasswordHash("old", phc(19456, 2, "from an earlier version")); err != nil {
		t.Fatalf("a 19 MiB, 2-pass hash: %v", err)
	}
	if !ok(db.CheckPassword("old", "from an earlier version", false, Client)) || ok(db.CheckPassword("old", "another password", false, Client)) {
		t.Error("a 19 MiB, 2-pass hash is not checked with its own parameters")
	}
	// The login replaced it with a hash of the box's own parameters.
	if b, _ := os.ReadFile(dir.Join(File)); bytes.Contains(b, []byte("m=19456")) || !bytes.Contains(b, []byte("$argon2id$v=19$m=12288,t=3,p=1$")) {
		t.Errorf("after a login the old hash is still stored:\n%s", b)
	}
	again, _ := Open(dir) // another process: only the file
	if !ok(again.CheckPassword("old", "from an earlier version", false, Client)) || ok(again.CheckPassword("old", "another password", false, Client)) {
		t.Error("the upgraded hash does not check the same password")
	}
	for _, params := range []string{"m=24576,t=1,p=1", "m=19456,t=4,p=1", "m=1024,t=11,p=1", "m=4,t=1,p=1"} {
		bad := "$argon2id$v=19$" + params + "$c2l4dGVlbiBieXRlIHNsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		if err := db.SetPasswordHash("bad", bad); err == nil {
			t.Errorf("a hash with %s was taken", params)
		}
	}
}

func TestEmail(t *testing.T) {
	db, dir := open(t)
	if err := db.Add("ann", "a long password"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"ann", "Ann <ann@example.org>", "ann@", "a b@example.org"} {
		if err := db.SetEmail("ann", bad); err == nil {
			t.Errorf("SetEmail(%q) took it", bad)
		}
	}
	if err := db.SetEmail("ann", " ann@example.org "); err != nil {
		t.Fatal(err)
	}
	again, _ := Open(dir)
	if got := again.Email("ann"); got != "ann@example.org" {
		t.Errorf("Email = %q after a reload", got)
	}
	db.SetEmail("ann", "")
	if got := db.Email("ann"); got != "" {
		t.Errorf("cleared Email = %q", got)
	}
	if err := db.SetEmail("nobody", "x@example.org"); err == nil {
		t.Error("an address for no account")
	}
}
