package update

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
)

// Updates only move forward: Apply refuses a bundle older than the highest
// version the box has run (an old version may have holes fixed since, and
// a stolen signing key, or an old signed bundle, must not take the box
// back to them), unless the owner allows one at the console.
const (
	// HighestFile, in the state directory, is the highest version the box
	// has run: written when a trial boot is committed (Commit), never
	// lowered. The running slot's version counts as run too.
	HighestFile = "update-highest-version"
	// AllowFile, in the state directory, is the console's allowance of
	// one older bundle (AllowDowngrade): when it ends.
	AllowFile = "update-allow-downgrade"
	// AllowFor is how long an allowance waits for its bundle.
	AllowFor = time.Hour
)

// ErrDowngrade marks a bundle refused for being older than the highest
// version the box has run.
var ErrDowngrade = errors.New("older than the highest version this box has run")

// AllowDowngrade lets the next Apply within AllowFor of now take a bundle
// older than the highest version run, once: the console's `update
// allow-downgrade` (never a web page: whoever holds the admin's password
// must not be able to take the box back to an old version's holes).
func AllowDowngrade(dir string, now time.Time) error {
	until := now.Add(AllowFor).UTC().Format(time.RFC3339)
	if err := state.WriteFile(filepath.Join(dir, AllowFile), []byte(until+"\n"), 0o600); err != nil {
		return fmt.Errorf("allow a downgrade: %w", err)
	}
	return nil
}

// Highest is the highest version the box has recorded as run ("" when
// none is).
func Highest(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, HighestFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("the highest version run: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// recordHighest notes v as run, if it is higher than the version recorded
// (or none is, or the one recorded cannot be read as a version).
func recordHighest(dir, v string) error {
	run, err := ParseVersion(v)
	if err != nil {
		return fmt.Errorf("record the highest version run: %w", err)
	}
	old, err := Highest(dir)
	if err != nil {
		return err
	}
	if o, err := ParseVersion(old); err == nil && o.Compare(run) >= 0 {
		return nil
	}
	if err := state.WriteFile(filepath.Join(dir, HighestFile), []byte(v+"\n"), 0o644); err != nil {
		return fmt.Errorf("record the highest version run: %w", err)
	}
	return nil
}

// checkVersion refuses a bundle of version v older than the highest
// version run (recorded, or running: the running slot's version), unless
// an allowance stands; allowed says one was needed, and Apply spends it.
func (c *Card) checkVersion(v, running string) (allowed bool, err error) {
	bundle, err := ParseVersion(v)
	if err != nil {
		return false, &BadBundle{err}
	}
	highest, err := Highest(c.State)
	if err != nil {
		return false, err
	}
	var floor *Version
	floorText := ""
	for _, s := range []string{highest, running} {
		f, err := ParseVersion(s)
		if err != nil || bundle.Compare(f) >= 0 {
			continue // no floor to keep, or above it
		}
		if floor == nil || f.Compare(*floor) > 0 {
			floor, floorText = &f, s
		}
	}
	if floor == nil {
		return false, nil
	}
	if c.allowance() {
		return true, nil
	}
	return false, &BadBundle{fmt.Errorf("version %s is %w (%s): an old version may have holes fixed since. "+
		"To install it anyway, type `update allow-downgrade` at the box's console, then send the bundle again within %v", v, ErrDowngrade, floorText, AllowFor)}
}

// allowance says whether the console's allowance stands.
func (c *Card) allowance() bool {
	b, err := os.ReadFile(filepath.Join(c.State, AllowFile))
	if err != nil {
		return false
	}
	until, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	return err == nil && c.clock().Before(until)
}

// spendAllowance removes the allowance, before the bundle it let through
// is written: it is good for one install, whatever becomes of it.
func (c *Card) spendAllowance() error {
	if err := os.Remove(filepath.Join(c.State, AllowFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spend the downgrade's allowance: %w", err)
	}
	return state.SyncDir(c.State)
}

func (c *Card) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}
