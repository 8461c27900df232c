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
	// highestFile, in the state directory, is the highest version the box
	// has run: written when a trial boot is committed (Commit), never
	// lowered. The running slot's version counts as run too.
	highestFile = "update-highest-version"
	// allowFile, in the state directory, is the console's allowance of
	// one older bundle (AllowDowngrade): when it ends.
	allowFile = "update-allow-downgrade"
	// allowFor is how long an allowance waits for its bundle.
	allowFor = time.Hour
)

// ErrDowngrade marks a bundle refused for being older than the highest
// version the box has run.
var ErrDowngrade = errors.New("older than the highest version this box has run")

// AllowDowngrade lets the next Apply within allowFor of now take a bundle
// older than the highest version run, once: the console's `update
// allow-downgrade` (never a web page: whoever holds the admin's password
// must not be able to take the box back to an old version's holes).
func AllowDowngrade(dir string, now time.Time) error {
	until := now.Add(allowFor).UTC().Format(time.RFC3339)
	if err := state.WriteFile(filepath.Join(dir, allowFile), []byte(until+"\n"), 0o600); err != nil {
		return fmt.Errorf("allow a downgrade: %w", err)
	}
	return nil
}

// highest is the highest version the box has recorded as run ("" when
// none is).
func highest(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, highestFile))
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
	run, err := parseVersion(v)
	if err != nil {
		return fmt.Errorf("record the highest version run: %w", err)
	}
	old, err := highest(dir)
	if err != nil {
		return err
	}
	if o, err := parseVersion(old); err == nil && o.compare(run) >= 0 {
		return nil
	}
	if err := state.WriteFile(filepath.Join(dir, highestFile), []byte(v+"\n"), 0o644); err != nil {
		return fmt.Errorf("record the highest version run: %w", err)
	}
	return nil
}

// checkVersion refuses a bundle of version v older than the highest
// version run (recorded, or running: the running slot's version), unless
// an allowance stands; allowed says one was needed, and Apply spends it.
func (c *Card) checkVersion(v, running string) (allowed bool, err error) {
	bundle, err := parseVersion(v)
	if err != nil {
		return false, &BadBundle{err}
	}
	recorded, err := highest(c.State)
	if err != nil {
		return false, err
	}
	var floor *version
	floorText := ""
	for _, s := range []string{recorded, running} {
		f, err := parseVersion(s)
		if err != nil || bundle.compare(f) >= 0 {
			continue // no floor to keep, or above it
		}
		if floor == nil || f.compare(*floor) > 0 {
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
		"To install it anyway, type `update allow-downgrade` at the box's console, then send the bundle again within the hour", v, ErrDowngrade, floorText)}
}

// allowance says whether the console's allowance stands.
func (c *Card) allowance() bool {
	b, err := os.ReadFile(filepath.Join(c.State, allowFile))
	if err != nil {
		return false
	}
	until, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	return err == nil && c.clock().Before(until)
}

// spendAllowance removes the allowance, before the bundle it let through
// is written: it is good for one install, whatever becomes of it.
func (c *Card) spendAllowance() error {
	if err := os.Remove(filepath.Join(c.State, allowFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
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
