package firstlogin

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
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
	if ok, _ := s.Users.CheckPassword(users.Admin, "hunter22 # long", false, users.Client); !ok {
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
	if ok, _ := s.Users.CheckPassword(users.Admin, "hunter22 # long", false, users.Client); !ok {
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
	if ok, _ := s.Users.CheckPassword(users.Admin, "correct horse", false, users.Client); !ok {
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

// fakeCard is a boot partition in a folder, counting how files were
// written: in place (Rewrite, which never changes a size) or made new.
type fakeCard struct {
	dir               string
	rewrites, creates int
}

func (c *fakeCard) Root() string { return c.dir }

func (c *fakeCard) Rewrite(name string, b []byte) error {
	fi, err := os.Stat(filepath.Join(c.dir, name))
	if err != nil || fi.Size() != int64(len(b)) {
		return fmt.Errorf("not in place: %v", err)
	}
	c.rewrites++
	return os.WriteFile(filepath.Join(c.dir, name), b, 0o644)
}

func (c *fakeCard) Read(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(c.dir, name))
}

func (c *fakeCard) CreateFile(name string, b []byte) error {
	c.creates++
	return os.WriteFile(filepath.Join(c.dir, name), b, 0o644)
}

// The note is rewritten in place in the file the image made (its FAT
// entry never changes: a cut cannot leave the partition dirty), holds the
// password, and is emptied in place once the password is changed. It was
// created, and deleted, which wrote the FAT's tables.
func TestNoteInPlace(t *testing.T) {
	s, path := setup(t, "hostname = box\n")
	card := &fakeCard{dir: filepath.Dir(path)}
	os.WriteFile(filepath.Join(card.dir, NoteFile), Placeholder(), 0o644)
	s.Card = card
	s.URLs = []string{"https://box.local/", strings.Repeat("https://[fe80::1]/", 300)}
	made, err := s.Take()
	if err != nil || made == "" {
		t.Fatalf("Take = %q, %v", made, err)
	}
	note, _ := os.ReadFile(filepath.Join(card.dir, NoteFile))
	if card.rewrites != 1 || card.creates != 0 || len(note) != NoteSize {
		t.Errorf("the note: %d rewrites, %d made new, %d bytes", card.rewrites, card.creates, len(note))
	}
	if !strings.HasPrefix(string(note), noteHead) || !strings.Contains(string(note), "password: "+made+"\r\n") || !strings.Contains(string(note), "https://box.local/") {
		t.Errorf("the note does not hold the password and the address:\n%s", note)
	}
	s.Tidy() // the password is still the one made: nothing changes
	if card.rewrites != 1 {
		t.Error("the note was emptied while its password was still admin's")
	}
	if err := s.Users.SetPassword(users.Admin, "a new password 1"); err != nil {
		t.Fatal(err)
	}
	s.Tidy()
	s.Tidy() // once is enough
	note, _ = os.ReadFile(filepath.Join(card.dir, NoteFile))
	if card.rewrites != 2 || card.creates != 0 || strings.Contains(string(note), made) || string(note) != string(Placeholder()) {
		t.Errorf("after the change: %d rewrites, %d made new; the note:\n%s", card.rewrites, card.creates, note)
	}
}

// A card made before the image held the note gets one made, at its full
// size, so that every later write is in place.
func TestNoteOnAnOldCard(t *testing.T) {
	s, path := setup(t, "hostname = box\n")
	card := &fakeCard{dir: filepath.Dir(path)}
	s.Card = card
	if _, err := s.Take(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(card.dir, NoteFile)); err != nil || fi.Size() != NoteSize || card.creates != 1 {
		t.Errorf("the note on an old card: %v, %d made", err, card.creates)
	}
}

// A note an owner saved from a PC, larger now: still rewritten in place,
// at the size it has.
func TestNoteEditedOnAPC(t *testing.T) {
	s, path := setup(t, "hostname = box\n")
	card := &fakeCard{dir: filepath.Dir(path)}
	os.WriteFile(filepath.Join(card.dir, NoteFile), append(Placeholder(), "my own notes\r\n"...), 0o644)
	s.Card = card
	made, err := s.Take()
	if err != nil {
		t.Fatal(err)
	}
	note, _ := os.ReadFile(filepath.Join(card.dir, NoteFile))
	if card.rewrites != 1 || card.creates != 0 || len(note) != NoteSize+14 || !strings.Contains(string(note), made) {
		t.Errorf("an edited note: %d rewrites, %d made new, %d bytes", card.rewrites, card.creates, len(note))
	}
}

func TestNote(t *testing.T) {
	if got := Note(nil); got != "" {
		t.Errorf("no note: Note = %q", got)
	}
	if got := Note(Placeholder()); got != "" {
		t.Errorf("the placeholder: Note = %q", got)
	}
	s := &Setup{URLs: []string{"https://bonesync.local/"}, Change: "the console's user passwd admin"}
	got := Note(padded(s.note("abc-def"), NoteSize))
	if !strings.Contains(got, "password: abc-def\n") || strings.Contains(got, "\r") || strings.HasSuffix(got, " \n") {
		t.Errorf("a note with a password: Note = %q", got)
	}
}
