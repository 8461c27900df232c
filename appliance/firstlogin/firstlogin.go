// Package firstlogin lets the owner log in the first time without the
// serial console: the admin_password and admin_ssh_key settings of the
// config file on the card's FAT partition, written from any computer
// before the first boot, are taken into the user database (and the
// password blanked in the file); with no password set, the one the first
// start makes goes to FIRST-LOGIN.txt beside the config file, which is
// emptied once the password is changed.
//
// FIRST-LOGIN.txt is made at its full size (NoteSize) when the image is
// built and only ever rewritten in place, as boot.env is: the FAT's
// tables and directory are never written, so a power cut at any moment
// cannot leave the partition dirty (creating the file did: Windows then
// offered to scan and fix the card of an owner who had just put it in to
// read the password).
package firstlogin

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
)

// NoteFile is written beside the config file on the card.
const NoteFile = "FIRST-LOGIN.txt"

// NoteSize is the note's size, always: one 4 KiB cluster.
const NoteSize = 4096

// noteHead starts a note that holds a password.
const noteHead = "bonesync: your first login"

// Placeholder is the note as the image builder makes it, and as it is
// once the password was changed.
func Placeholder() []byte { return padded(placeholder, NoteSize) }

const placeholder = "bonesync: no password here.\r\n\r\n" +
	"When the box starts for the first time without admin_password set in\r\n" +
	"bonesync.conf, it writes admin's password into this file (and on the serial\r\n" +
	"console). Once the password is changed, the file is emptied again.\r\n"

// Note is the note b (NoteFile's bytes) when it holds a password, without
// its padding; "" when it holds none. PID 1 shows it on a console a
// computer opened later than the boot (the USB device port's).
func Note(b []byte) string {
	if !strings.HasPrefix(string(b), noteHead) {
		return ""
	}
	return strings.ReplaceAll(strings.TrimRight(string(b), " \r\n\x00"), "\r\n", "\n") + "\n"
}

// padded is text filled out with spaces to size, ending in CR LF; text
// longer than that is cut.
func padded(text string, size int) []byte {
	b := []byte(strings.Repeat(" ", size))
	copy(b, text[:min(len(text), size-2)])
	copy(b[size-2:], "\r\n")
	return b
}

// Card is the card's boot partition as the note and the config file need
// it (update.Card): files rewritten in place, and made new.
type Card interface {
	Root() string // where it is mounted
	// Read reads a file as Rewrite wrote it: beneath the FAT's cache,
	// which does not see those writes.
	Read(name string) ([]byte, error)
	Rewrite(name string, b []byte) error
	CreateFile(name string, b []byte) error
}

// Setup is what the first login needs from the server.
type Setup struct {
	ConfigPath string
	Config     config.Config
	Users      *users.DB
	// Card is the boot partition the config file is on; nil when the box
	// was not booted from a card (the config file is then written as any
	// file, and no note is made: the console or journal has the password).
	Card Card
	Log  *slog.Logger
	// Where to log in, for the note: https://bonesync.local/ ...
	URLs []string
	// Change is how a person changes the password, for the note.
	Change string
}

// Take applies admin_password and admin_ssh_key from the config, then
// blanks the password in the file. It returns a password made for a first
// start (EnsureAdmin), "" if none was made, and writes it to the note.
func (s *Setup) Take() (string, error) {
	if pw := s.Config.AdminPassword; pw != "" {
		// A password that cannot be taken is reported and skipped: the
		// box still starts, with the first start's password if it has
		// none, so the owner is never locked out by a typo.
		if err := s.Users.SetPasswordAny(users.Admin, pw); err != nil {
			s.Log.Error("first login: admin_password not taken", "config", s.ConfigPath, "err", err)
		} else {
			s.Log.Info("first login: admin's password set from admin_password", "config", s.ConfigPath)
		}
	}
	// Blanked whether taken or not (the config may have refused the line
	// too): a password is not left on the card in clear.
	if err := s.blank(); err != nil {
		s.Log.Warn("first login: cannot blank admin_password; delete it there yourself", "config", s.ConfigPath, "err", err)
	}
	// The note is written before the account is stored: a cut between
	// them leaves no account, and the next start makes a new password.
	made, err := s.Users.EnsureAdmin(func(pw string) {
		if s.Card == nil {
			return
		}
		s.Log.Info("first login: writing admin's password to the card", "note", NoteFile)
		if err := s.writeNote(s.note(pw)); err != nil {
			s.Log.Warn("first login: cannot write the note", "note", NoteFile, "err", err)
		} else {
			s.Log.Info("first login: the password is on the card's boot partition until it is changed", "note", NoteFile)
		}
	})
	if err != nil {
		return "", err
	}
	if key := s.Config.AdminSSHKey; key != "" {
		n, err := s.Users.AddKeys(users.Admin, []byte(key))
		if err != nil {
			s.Log.Error("first login: admin_ssh_key not taken", "config", s.ConfigPath, "err", err)
		}
		if n > 0 {
			s.Log.Info("first login: admin_ssh_key added to admin's keys", "config", s.ConfigPath)
		}
	}
	return made, nil
}

// writeNote puts b in the note: in place, where the image made it at its
// size; a card from before that has none, and gets one made (the one
// write here that changes the FAT's directory).
func (s *Setup) writeNote(text string) error {
	fi, err := os.Stat(filepath.Join(s.Card.Root(), s.noteName()))
	if err == nil && fi.Size() >= NoteSize && fi.Size() <= maxNote {
		// At the size it has (an owner may have saved it from a PC).
		return s.Card.Rewrite(s.noteName(), padded(text, int(fi.Size())))
	}
	s.Log.Warn("first login: FIRST-LOGIN.txt is missing or too small to be written in place (a card from before version 0.3, or the file was edited): making it again", "note", NoteFile)
	return s.Card.CreateFile(s.noteName(), padded(text, NoteSize))
}

// maxNote is the largest note rewritten whole in place.
const maxNote = 1 << 20

// Tidy empties the note once admin's password is no longer the one it
// holds. The server calls it at start and then now and then; it writes
// nothing unless the note holds a password.
func (s *Setup) Tidy() {
	if s.Card == nil {
		return
	}
	if b, err := s.Card.Read(s.noteName()); err != nil || Note(b) == "" {
		return
	}
	if gen, err := s.Users.Generated(users.Admin); err != nil || gen {
		return
	}
	if err := s.writeNote(placeholder); err != nil {
		s.Log.Warn("first login: cannot empty the note", "note", NoteFile, "err", err)
		return
	}
	s.Log.Info("first login: admin's password was changed: FIRST-LOGIN.txt emptied", "note", NoteFile)
}

// noteName is the note's name relative to the card's root: beside the
// config file.
func (s *Setup) noteName() string {
	if rel, err := filepath.Rel(s.Card.Root(), filepath.Join(filepath.Dir(s.ConfigPath), NoteFile)); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return NoteFile
}

func (s *Setup) note(password string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\r\n\r\nuser:     %s\r\npassword: %s\r\n\r\n", noteHead, users.Admin, password)
	fmt.Fprintf(&b, "This file is emptied when the password is changed: %s,\r\n"+
		"or put admin_password = NEW in bonesync.conf here and restart the box.\r\n", s.Change)
	// The addresses last, as many as fit: the password must.
	for i, u := range s.URLs {
		line := "  " + u + "\r\n"
		if i == 0 {
			line = "\r\nFiles and the status page:\r\n" + line
		}
		if b.Len()+len(line) > NoteSize-2 {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// blank rewrites the config file with admin_password's value blanked: in
// place on the card (the same length), else as any file is replaced.
func (s *Setup) blank() error {
	raw, err := os.ReadFile(s.ConfigPath)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	out, changed := config.Blank(raw, "admin_password")
	if !changed {
		return nil
	}
	if s.Card != nil {
		rel, err := filepath.Rel(s.Card.Root(), s.ConfigPath)
		if err == nil && !strings.HasPrefix(rel, "..") {
			return s.Card.Rewrite(rel, out)
		}
	}
	st, err := os.Stat(s.ConfigPath)
	if err != nil {
		return err
	}
	return state.WriteFile(s.ConfigPath, out, st.Mode().Perm())
}
