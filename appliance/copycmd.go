package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/copies/engine"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/users"
)

// copyDir is the copies' own folder in the state directory.
func copyDir(f *flags) string { return copies.Dir(f.state) }

// copyCmd is `bonesync copy run|key|accept-key|restore`.
func copyCmd(ctx context.Context, f *flags, stdin io.Reader, stdout, stderr io.Writer) error {
	const usage = "usage: bonesync copy [-state DIR] [-config FILE] run|key|accept-key [FINGERPRINT]|restore"
	if len(f.args) == 2 && f.args[0] == "accept-key" {
		return copyAcceptKey(f, f.args[1], stdin, stdout)
	}
	if len(f.args) != 1 {
		return usagef(usage)
	}
	dir := copyDir(f)
	switch f.args[0] {
	case "accept-key":
		return copyAcceptKey(f, "", stdin, stdout)
	case "key":
		pub, err := engine.KeyFile(filepath.Join(dir, "id_ed25519"))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", pub)
		return nil
	case "run":
		return copyRun(ctx, f, stdout, stderr)
	case "restore":
		return copyRestore(ctx, f, stdin, stdout)
	}
	return usagef(usage)
}

// copyAcceptKey is `bonesync copy accept-key [FINGERPRINT]`: the SFTP
// target's new host key, which refused the last run, pinned in place of
// the old one (engine.AcceptHostKey) if offered is its fingerprint, and
// the acceptance kept in the audit log. Without a fingerprint (the
// console's, which nobody wants to type) the change is shown and a yes
// read from stdin takes the key shown.
func copyAcceptKey(f *flags, offered string, stdin io.Reader, stdout io.Writer) error {
	dir := copyDir(f)
	if offered == "" {
		st, ok := copies.ReadStatus(dir)
		if !ok || st.HostKey == nil {
			return errors.New("the last copy found no changed host key: there is none to accept")
		}
		ch := st.HostKey
		fmt.Fprintf(stdout, "The SFTP target %s offers a new host key.\n  pinned:  %s\n  offered: %s\n"+
			"Check on the target that the offered key is its own (there: ssh-keygen -lf on each of its\n"+
			"/etc/ssh/ssh_host_*_key.pub; docs/copies.md). If it is not, another machine may be answering at its address.\nAccept it? Type yes: ",
			ch.Host, ch.Pinned, ch.Offered)
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		fmt.Fprintln(stdout)
		if strings.TrimSpace(line) != "yes" {
			return errors.New("not accepted: the copies stay stopped")
		}
		offered = ch.Offered
	}
	ch, err := engine.AcceptHostKey(dir, offered)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "accepted: the next copy to %s trusts %s\n", ch.Host, ch.Offered)
	rec, err := audit.Open(audit.Dir(f.state))
	if err == nil {
		err = rec.Record(audit.Event{Kind: audit.Admin, Proto: "console",
			What: fmt.Sprintf("accepted the copy target %s's new host key %s (was %s)", ch.Host, ch.Offered, ch.Pinned)})
	}
	if err != nil {
		return fmt.Errorf("the key is accepted, but not recorded in the audit log: %w", err)
	}
	return nil
}

// copySettings are the config's copy settings, with the box's key and its
// record of the target's host key.
func copySettings(f *flags) (copies.Settings, config.Config, error) {
	cfg, probs := config.Load(f.config)
	// The admin page's copy settings over the file's, as the server has them.
	cfg, over := config.Overlay(cfg, copies.SettingsFile(copyDir(f)), "copy_")
	probs = append(probs, over...)
	for _, p := range probs {
		if strings.Contains(p.Msg, "copy_") {
			return copies.Settings{}, cfg, fmt.Errorf("%s", p)
		}
	}
	if cfg.CopyTarget == "" {
		return copies.Settings{}, cfg, fmt.Errorf("no copy target: copy_target in %s, or the admin page (docs/copies.md)", f.config)
	}
	return cfg.Copies(), cfg, nil
}

// copyRun is `bonesync copy run`: one copy, now. The first one makes the
// encryption password and prints it, once.
func copyRun(ctx context.Context, f *flags, stdout, stderr io.Writer) error {
	st, _, err := copySettings(f)
	if err != nil {
		return err
	}
	dir := copyDir(f)
	made, err := copies.MakePassword(dir)
	if err != nil {
		return err
	}
	if made != "" {
		fmt.Fprintf(stdout, "The copies' encryption password is:\n\n    %s\n\n"+
			"Write it down and keep it off this box. It is shown only this once. Without it the\n"+
			"copies cannot be read, by anyone: if this box is lost, only your record of it\n"+
			"opens them (docs/copies.md).\n\n", made)
	}
	if err := st.UseDir(dir); err != nil {
		return err
	}
	if _, err := engine.KeyFile(st.Key); err != nil {
		return err
	}
	_, s, err := openStore(f)
	if err != nil {
		return err
	}
	defer s.Close()
	cals, err := calendars.Open(f.files)
	if err != nil {
		return err
	}
	c := &engine.Copier{Settings: st, Store: s, Extra: cals, Work: dir, Log: sysd.NewLogger(stderr), Memory: copyMemory()}
	r := c.Run(ctx)
	fmt.Fprintf(stdout, "copy to %s: %d files sent (%d bytes), %d errors, in %v\n",
		copies.Redacted(st.Target), r.Files, r.Bytes, r.Errors, r.Ended.Sub(r.Started).Round(1e6))
	return r.Err
}

// copyRestore is `bonesync copy restore`: the copy's files back into the
// store, with their dates, checked against their digests, and each user's
// calendars and contacts; the password is read from stdin.
func copyRestore(ctx context.Context, f *flags, stdin io.Reader, stdout io.Writer) error {
	st, _, err := copySettings(f)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, "The copies' encryption password: ")
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("no password given")
	}
	st.UseDir(copyDir(f)) // its key and known host, if this box has them
	st.Password = strings.TrimSpace(line)
	fmt.Fprintln(stdout)
	db, s, err := openStore(f)
	if err != nil {
		return err
	}
	res, err := engine.Restore(ctx, st, s, copyMemory())
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	cals, err := calendars.Open(f.files)
	if err != nil {
		return err
	}
	for user, zip := range res.Calendars {
		r, err := cals.Restore(user, bytes.NewReader(zip), int64(len(zip)))
		if err != nil {
			return fmt.Errorf("calendars of %s: %w", user, err)
		}
		fmt.Fprintf(stdout, "%s: %d calendar objects restored\n", user, r.Objects)
	}
	for _, u := range res.Users {
		if !db.Exists(u) {
			fmt.Fprintf(stdout, "%s has no account on this box yet: bonesync user add %s\n", u, u)
		}
	}
	fmt.Fprintf(stdout, "restored %d files (%d bytes) of %s; %d checked against their digests\n",
		res.Files, res.Bytes, strings.Join(res.Users, ", "), res.Checked)
	if len(res.Mismatch) > 0 {
		return fmt.Errorf("%d files do not match their digests: %s", len(res.Mismatch), strings.Join(res.Mismatch, ", "))
	}
	return nil
}

// copyMemory bounds `bonesync copy run` and `copy restore`, each a
// process of its own (the console's, or one started at a shell): the
// runtime's soft limit, as the server sets it, and an admission of its
// own, which the run's parts draw from one at a time as they would from
// the server's (copies/engine/memory.go).
func copyMemory() *budget.Budget {
	budget.LimitRuntime()
	return budget.New(budget.Admission, budget.Options{})
}

// openStore opens the users and the store of the state directory, beside
// the server that may be running (store.OpenBeside).
func openStore(f *flags) (*users.DB, *store.Store, error) {
	sd, err := state.Open(f.state)
	if err != nil {
		return nil, nil, err
	}
	db, err := users.Open(sd)
	if err != nil {
		return nil, nil, err
	}
	s, err := store.OpenBeside(f.files)
	if err != nil {
		return nil, nil, err
	}
	return db, s, nil
}
