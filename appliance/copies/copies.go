// Package copies is the encrypted copy off the box as the rest of the box
// sees it: its settings, its target, its folder in the state directory
// (the encryption password, the runs' lock), when the daily run is due,
// and the last run's status.
//
// The engine that makes a copy (rclone, and the MinIO client for S3
// targets) is package copies/engine, imported only by the server and by
// `bonesync copy`: the config, PID 1's console and the status page read
// this package without linking it (appliance/house_test.go holds it).
package copies

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/state"
)

// Settings say where copies go and how.
type Settings struct {
	// Target is where: a folder (a USB disk's), sftp://USER@HOST[:PORT]/PATH,
	// or webdav(s)://USER@HOST[:PORT]/PATH (a second bonesync box: its
	// WebDAV URL, https://HOST/remote.php/dav/files/USER/PATH, written
	// with davs://).
	Target string
	// TargetPassword is the target's login password, if it takes one (an
	// SFTP server may take the box's key instead: Key).
	TargetPassword string
	// Key is the box's SSH key file for SFTP targets (engine.KeyFile).
	Key string
	// KnownHosts is where an SFTP target's host key is recorded at the
	// first run and checked at every later one; "": not checked.
	KnownHosts string
	// TargetCA is where an HTTPS target's certificate authority is
	// recorded at the first run and trusted alone at every later one; "":
	// the system's roots.
	TargetCA string
	// Password is the encryption password (NewPassword).
	Password string
	// Keep is how many runs' replaced and removed files are kept (old/).
	Keep int
	// BwLimit is the bandwidth limit in KiB/s; 0: none.
	BwLimit int
}

// ErrNoPassword is returned by UseDir before the first `bonesync copy run`
// made the encryption password.
var ErrNoPassword = errors.New("no encryption password yet: bonesync copy run makes it, and shows it once")

// SettingsFile is where the admin page keeps its copy settings, in dir
// (Dir): config lines over the config file's (config.Overlay).
func SettingsFile(dir string) string { return filepath.Join(dir, "settings.conf") }

// Dir is the copies' own folder in the state directory: the encryption
// password, the box's SSH key for SFTP targets, the target's recorded host
// key, and what a run writes before it sends it.
func Dir(stateDir string) string { return filepath.Join(stateDir, "copies") }

// UseDir takes the box's key, the recorded host key and the encryption
// password from dir (Dir); without a password it returns ErrNoPassword.
func (st *Settings) UseDir(dir string) error {
	st.Key, st.KnownHosts = filepath.Join(dir, "id_ed25519"), KnownHosts(dir)
	st.TargetCA = filepath.Join(dir, "target-ca.pem")
	pw, err := ReadPassword(dir)
	st.Password = pw
	return err
}

// KnownHosts is where the SFTP targets' host keys are pinned, in dir
// (Dir): OpenSSH's known_hosts form.
func KnownHosts(dir string) string { return filepath.Join(dir, "known_hosts") }

// ReadPassword is the encryption password kept in dir (Dir): the box's
// one, for every target (a copy to a new target is encrypted with it too);
// ErrNoPassword before the first run made it.
func ReadPassword(dir string) (string, error) {
	pw, err := os.ReadFile(filepath.Join(dir, "password"))
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoPassword
	}
	if err != nil {
		return "", fmt.Errorf("the copies' password: %w", err)
	}
	return strings.TrimSpace(string(pw)), nil
}

// MakePassword makes dir's encryption password if it has none, and
// returns it if it made it ("" if there was one).
func MakePassword(dir string) (string, error) {
	file := filepath.Join(dir, "password")
	if _, err := os.Stat(file); err == nil {
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	pw := NewPassword()
	// Written aside and linked in place: if two first runs race (the
	// console's and the admin page's), one password wins and the other
	// run is told, never shown a password that was not kept.
	tmp := fmt.Sprintf("%s.%d", file, os.Getpid())
	if err := state.WriteFile(tmp, []byte(pw), 0o600); err != nil {
		return "", fmt.Errorf("the copies' password: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, file); err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", ErrRunning
		}
		return "", fmt.Errorf("the copies' password: %w", err)
	}
	if err := state.SyncDir(dir); err != nil {
		return "", fmt.Errorf("the copies' password: %w", err)
	}
	return pw, nil
}

// NewPassword is a new encryption password: 26 letters and digits (130
// bits), easy to write down.
func NewPassword() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Next is the first time after now that is at after a local midnight:
// when the daily run is due.
func Next(now time.Time, at time.Duration) time.Time {
	next := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location()).Add(at)
	if !next.After(now) {
		next = next.AddDate(0, 0, 1)
	}
	return next
}

// Clock is at, a time after midnight, as copy_at is written: HH:MM.
func Clock(at time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(at.Hours()), int(at.Minutes())%60)
}

// ErrRunning is a run asked for while another is going on (the server's
// daily one, the admin page's, the console's): one at a time, box-wide.
var ErrRunning = errors.New("a copy is already running")

// Lock takes the runs' lock in dir (Dir), or says ErrRunning: one run
// at a time, across processes. The caller that holds it for a run sets
// engine.Copier.Held.
func Lock(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the copies' folder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the copies' lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("the copies' lock: %w", err)
	}
	return func() { f.Close() }, nil
}
