package firstlogin

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
	"golang.org/x/crypto/argon2"
)

func setup(t *testing.T, conf string) (*Setup, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "bonesync.conf")
	os.WriteFile(path, []byte(conf), 0o640)
	c, probs := config.Load(path)
	if len(probs) > 0 {
		t.Fatalf("config: %v", probs)
	}
	st, err := state.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	return &Setup{ConfigPath: path, Config: c, Users: db, Log: slog.New(slog.DiscardHandler)}, path
}

// admin_password becomes admin's password and is blanked in the file;
// the key is added; no password is made.
func TestTakePassword(t *testing.T) {
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVMr8tZu2Ywlqhs2kHpMzXg6TLpcmJkM8vKE7yyvXgP me@laptop"
	s, path := setup(t, "hostname = box\nadmin_password = 'hunter22 # long'\nadmin_ssh_key = "+key+"\n")
	made, err := s.Take()
	if err != nil || made != "" {
		t.Fatalf("Take = %q, %v", made, err)
	}
	if ok, _ := s.Users.CheckPassword(users.Admin, "hunter22 # long", false); !ok {
		t.Error("admin_password does not log in")
	}
	if gen, _ := s.Users.Generated(users.Admin); gen {
		t.Error("a password the owner set counts as generated")
	}
	list, _ := s.Users.List()
	if len(list) != 1 || list[0].Keys != 1 {
		t.Errorf("users: %+v", list)
	}
	after, _ := os.ReadFile(path)
	if strings.Contains(string(after), "hunter22") || !strings.Contains(string(after), "hostname = box") {
		t.Errorf("the file after Take:\n%s", after)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("the file's mode became %v", st.Mode())
	}
	// The next start takes nothing and keeps the password.
	s2, _ := setup(t, string(after))
	s2.Users = s.Users
	if made, err := s2.Take(); err != nil || made != "" {
		t.Errorf("second Take = %q, %v", made, err)
	}
	if ok, _ := s.Users.CheckPassword(users.Admin, "hunter22 # long", false); !ok {
		t.Error("a second start lost the password")
	}
}

// An Argon2id hash is taken as the hash; a bad one is refused.
func TestTakeHash(t *testing.T) {
	// As Debian's argon2 tool prints it: argon2 salty-salt -id -m 12 -t 3 -e
	enc := base64.RawStdEncoding
	phc := fmt.Sprintf("$argon2id$v=19$m=4096,t=3,p=1$%s$%s", enc.EncodeToString([]byte("salty-salt")),
		enc.EncodeToString(argon2.IDKey([]byte("correct horse"), []byte("salty-salt"), 3, 4096, 1, 32)))
	s, _ := setup(t, "admin_password = "+phc+"\n")
	if _, err := s.Take(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Users.CheckPassword(users.Admin, "correct horse", false); !ok {
		t.Error("the password behind the hash does not log in")
	}
	bad, _ := setup(t, "admin_password = $argon2id$v=19$m=999999,t=1,p=1$c2FsdHktc2FsdA$Y5kzkNfN8Fo8MUeWlZsoHUK1PtpNg2ugKVMBq+BMA7E\n")
	// Refused, reported, and the box still gets an admin it can log in.
	if made, err := bad.Take(); err != nil || made == "" {
		t.Errorf("a hash costing 1 GB: Take = %q, %v; want it refused and a password made", made, err)
	}
	if raw, _ := os.ReadFile(bad.ConfigPath); strings.Contains(string(raw), "argon2id") {
		t.Error("the refused hash was left in the file")
	}
}

// With nothing set, the first start makes a generated password; off a
// card no note is written.
func TestTakeNothing(t *testing.T) {
	s, _ := setup(t, "")
	made, err := s.Take()
	if err != nil || len(made) != 23 {
		t.Fatalf("Take = %q, %v", made, err)
	}
	if gen, _ := s.Users.Generated(users.Admin); !gen {
		t.Error("the first start's password is not marked generated")
	}
	s.Users.SetPassword(users.Admin, "a new password")
	if gen, _ := s.Users.Generated(users.Admin); gen {
		t.Error("a changed password is still marked generated")
	}
	s.Tidy() // no card: nothing to do, nothing to fail
}
