package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
)

// backupCalendars is `bonesync backup USER [FILE]`: FILE (default
// USER-calendars.zip; - for stdout) written atomically.
func backupCalendars(f *flags, stdout, stderr io.Writer) error {
	if len(f.args) < 1 || len(f.args) > 2 || users.ValidName(f.args[0]) != nil {
		return usagef("usage: bonesync backup [-state DIR] USER [FILE]")
	}
	user := f.args[0]
	if err := knownUser(f, user); err != nil {
		return err
	}
	out := user + "-calendars.zip"
	if len(f.args) == 2 {
		out = f.args[1]
	}
	s, err := calendars.Open(f.files)
	if err != nil {
		return err
	}
	if out == "-" {
		n, err := s.Backup(user, stdout)
		if err == nil {
			fmt.Fprintf(stderr, "%d objects\n", n)
		}
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".backup-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	n, err := s.Backup(user, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		return fmt.Errorf("backup of %s: %w", user, err)
	}
	fmt.Fprintf(stdout, "%s: %d events, tasks and contacts of %s\n", out, n, user)
	return nil
}

// restoreCalendars is `bonesync restore USER FILE`.
func restoreCalendars(f *flags, stdout io.Writer) error {
	if len(f.args) != 2 || users.ValidName(f.args[0]) != nil {
		return usagef("usage: bonesync restore [-state DIR] USER FILE")
	}
	user, file := f.args[0], f.args[1]
	if err := knownUser(f, user); err != nil {
		return err
	}
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	s, err := calendars.Open(f.files)
	if err != nil {
		return err
	}
	res, err := s.Restore(user, in, st.Size())
	for _, p := range res.Problems {
		fmt.Fprintf(stdout, "refused: %s\n", p)
	}
	fmt.Fprintf(stdout, "%s: %d objects restored for %s (%d replaced one with the same UID), %d refused\n", file, res.Objects, user, res.Replaced, res.Refused)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if res.Refused > 0 {
		return fmt.Errorf("restore: %d objects refused", res.Refused)
	}
	return nil
}

// knownUser refuses a user the state directory does not have.
func knownUser(f *flags, user string) error {
	st, err := state.Open(f.state)
	if err != nil {
		return err
	}
	db, err := users.Open(st)
	if err != nil {
		return err
	}
	if !db.Exists(user) {
		return fmt.Errorf("no user %s in %s (bonesync user add %s first)", user, f.state, user)
	}
	return nil
}
