// Package firstlogin lets the owner log in the first time without the
// serial console: the admin_password and admin_ssh_key settings of the
// config file on the card's FAT partition, written from any computer
// before the first boot, are taken into the user database (and the
// password blanked in the file); with no password set, the one the first
// start makes goes to FIRST-LOGIN.txt beside the config file, which is
// deleted once the password is changed.
package firstlogin

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/appliance/users"
)

// NoteFile is written beside the config file on the card.
const NoteFile = "FIRST-LOGIN.txt"

// Setup is what the first login needs from the server.
type Setup struct {
	ConfigPath string
	Config     config.Config
	Users      *users.DB
	// Card is the boot partition the config file is on; nil when the box
	// was not booted from a card (the config file is then written as any
	// file, and no note is made: the console or journal has the password).
	Card *update.Card
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
	made, err := s.Users.EnsureAdmin()
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
	if made != "" && s.Card != nil {
		if err := s.Card.CreateFile(s.noteName(), []byte(s.note(made))); err != nil {
			s.Log.Warn("first login: cannot write the note", "note", NoteFile, "err", err)
		} else {
			s.Log.Info("first login: the password is on the card's boot partition until it is changed", "note", NoteFile)
		}
	}
	return made, nil
}

// Tidy deletes the note once admin's password is no longer the one it
// holds. The server calls it at start and then now and then; it writes
// nothing unless the note is there.
func (s *Setup) Tidy() {
	if s.Card == nil {
		return
	}
	if _, err := os.Stat(filepath.Join(s.Card.Dir, s.noteName())); err != nil {
		return
	}
	if gen, err := s.Users.Generated(users.Admin); err != nil || gen {
		return
	}
	if err := s.Card.RemoveFile(s.noteName()); err != nil {
		s.Log.Warn("first login: cannot delete the note", "note", NoteFile, "err", err)
		return
	}
	s.Log.Info("first login: admin's password was changed: FIRST-LOGIN.txt deleted", "note", NoteFile)
}

// noteName is the note's name relative to the card's root: beside the
// config file.
func (s *Setup) noteName() string {
	if rel, err := filepath.Rel(s.Card.Dir, filepath.Join(filepath.Dir(s.ConfigPath), NoteFile)); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return NoteFile
}

func (s *Setup) note(password string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "bonesync: your first login\r\n\r\nuser:     %s\r\npassword: %s\r\n\r\n", users.Admin, password)
	if len(s.URLs) > 0 {
		fmt.Fprintf(&b, "Files and the status page: %s\r\n", strings.Join(s.URLs, "  "))
	}
	fmt.Fprintf(&b, "This file is deleted when the password is changed: %s,\r\n"+
		"or put admin_password = NEW in bonesync.conf here and restart the box.\r\n", s.Change)
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
		rel, err := filepath.Rel(s.Card.Dir, s.ConfigPath)
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
