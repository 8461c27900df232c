package boot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/update"
)

// trialFailures is how many times the server of a version on trial may
// exit before it was ever ready: then the box reboots, and U-Boot boots
// the previous version (the trial was used up when it booted).
const trialFailures = 3

// openSlots finds the card's system slots (package update) and says on
// the console what runs and what happened to the last update.
func openSlots(_ context.Context, s *System) error {
	c, err := update.Open(BootMount, StateDir)
	if errors.Is(err, update.ErrNotCard) {
		return nil // booted some other way (a direct kernel boot): no updates
	}
	if err != nil {
		return err
	}
	s.card = c
	st, err := c.Status()
	if err != nil {
		return fmt.Errorf("boot.env: %w", err)
	}
	s.Log.Info("running", "version", Version, "slot", st.Slot)
	switch {
	case st.Trial:
		s.Log.Info("this version is on trial: it becomes the default once it serves; if it does not, the next boot runs the other slot", "other", st.Other)
	case st.FailedTrial != "":
		s.Log.Warn("the update did not start; the box came back to this version by itself", "update", st.FailedTrial)
	case st.OtherIncomplete:
		s.Log.Warn("the other slot holds no bootable system: an update into it did not finish (nothing else changed)", "other", st.Other)
	}
	return nil
}

// onTrial says whether this boot is an update's trial, not yet committed.
func (s *System) onTrial() bool {
	s.trialMu.Lock()
	defer s.trialMu.Unlock()
	return s.card != nil && s.card.Running.Trial && !s.committed
}

// commitTrial makes the running version the default: its server is
// ready (serving, with its benchmark decision loaded).
func (s *System) commitTrial() {
	s.trialMu.Lock()
	defer s.trialMu.Unlock()
	if s.card == nil || !s.card.Running.Trial || s.committed {
		return
	}
	done, err := s.card.Commit()
	if err != nil && !done {
		s.Log.Error("cannot make this slot the default: the next boot runs the previous version", "slot", s.card.Running.Slot, "err", err)
		return
	}
	s.committed = true
	if err != nil {
		s.Log.Warn("this version was not recorded as the highest run: once another version runs, a bundle older than this one is not refused", "version", Version, "err", err)
	}
	if done {
		s.Log.Info("this version serves: its slot is now the default", "version", Version, "slot", s.card.Running.Slot)
	}
}

// giveUpTrial reboots into the previous version.
func (s *System) giveUpTrial(why string) {
	s.Log.Error("the version on trial did not serve: rebooting into the previous version", "version", Version, "why", why)
	s.shutdown(false)
}

// applyUpdate is the console's `update FILE` (the same as /admin/update),
// `update keys`, `update trust KEY` and `update allow-downgrade`.
func (s *System) applyUpdate(args []string) {
	if s.flashing.Load() {
		fmt.Fprintf(s.Console, "update: the eMMC is being flashed from this card: update once it is done\n")
		return
	}
	switch {
	case len(args) == 1 && args[0] == "keys":
		s.updateKeys()
		return
	case len(args) == 1 && args[0] == "allow-downgrade":
		if err := update.AllowDowngrade(StateDir, time.Now()); err != nil {
			fmt.Fprintf(s.Console, "update allow-downgrade: %v\n", err)
			return
		}
		fmt.Fprintf(s.Console, "update: the next bundle may be older than the highest version this box has run, once, within the hour (at the console or /admin/update)\n")
		return
	case len(args) >= 3 && args[0] == "trust":
		k, err := update.Trust(StateDir, strings.Join(args[1:], " "))
		if err != nil {
			fmt.Fprintf(s.Console, "update trust: %v\n", err)
			return
		}
		fmt.Fprintf(s.Console, "update: bundles signed with %s are now taken\n", k.Fingerprint())
		return
	case len(args) != 1:
		fmt.Fprintf(s.Console, "usage: update FILE (a bonesync-bbb.update, e.g. copied to /boot or uploaded to your files: %s/USER/...)\n"+
			"       update keys (the keys bundles must be signed with)\n"+
			"       update allow-downgrade (let the next bundle be older than the highest version run, once)\n"+
			"       update trust ed25519 BASE64 (add one: the .pub beside the key your make image signs with)\n", FilesDir)
		return
	}
	if s.card == nil {
		fmt.Fprintf(s.Console, "update: %v\n", update.ErrNotCard)
		return
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintf(s.Console, "update: %v\n", err)
		return
	}
	defer f.Close()
	m, err := s.card.Apply(f, s.Board.Name, s.Console)
	if err != nil {
		after := "nothing changed"
		if errors.Is(err, update.ErrTouched) {
			after = "the other slot holds no bootable system until an update succeeds"
		}
		fmt.Fprintf(s.Console, "update: %v\nupdate: %s; slot %s, running now, still boots\n", err, after, s.card.Running.Slot)
		return
	}
	fmt.Fprintf(s.Console, "update: rebooting into version %s\n", m.Version)
	s.shutdown(false)
}

// updateKeys lists the keys this box takes bundles from.
func (s *System) updateKeys() {
	built, err := update.ReadKeys(update.BuiltInKeys)
	if err != nil {
		fmt.Fprintf(s.Console, "update keys: %v\n", err)
	}
	owner, err := update.ReadKeys(filepath.Join(StateDir, update.OwnerKeys))
	if err != nil {
		fmt.Fprintf(s.Console, "update keys: %v\n", err)
	}
	for _, k := range built {
		fmt.Fprintf(s.Console, "%s  (this system's maker)\n", k.Fingerprint())
	}
	for _, k := range owner {
		fmt.Fprintf(s.Console, "%s  (added here: %s)\n", k.Fingerprint(), k)
	}
	if len(built)+len(owner) == 0 {
		fmt.Fprintln(s.Console, "update keys: none: no bundle is taken until one is added (update trust ed25519 BASE64)")
	}
}

// slotStatus is the console status line about the system slots.
func (s *System) slotStatus() string {
	if s.card == nil {
		return fmt.Sprintf("version %s (no system slots: not booted by the card's boot script)", Version)
	}
	st, err := s.card.Status()
	if err != nil {
		return fmt.Sprintf("version %s, slot %s (boot.env: %v)", Version, s.card.Running.Slot, err)
	}
	line := fmt.Sprintf("version %s, slot %s", Version, st.Slot)
	if s.onTrial() {
		line += " on trial"
	}
	line += fmt.Sprintf("; next boot: slot %s", st.Default)
	if st.OtherVersion != "" {
		line += fmt.Sprintf("; slot %s holds %s", st.Other, st.OtherVersion)
	}
	if st.FailedTrial != "" {
		line += fmt.Sprintf("; the update to %s did not start", st.FailedTrial)
	}
	if st.OtherIncomplete {
		line += fmt.Sprintf("; slot %s: an update did not finish", st.Other)
	}
	return line
}
