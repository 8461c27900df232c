// Package state is the box's state directory: where each file lives, how it
// is written so that a power cut never leaves a half-written file behind, and
// how a damaged file is reported.
//
// Every write goes to a temporary file in the same directory, is fsynced,
// renamed over the old name, and the directory is fsynced, so a reader sees
// either the old content or the new, never a mixture.
package state

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Names of the files in the state directory. Keeping them in one place lets a
// newcomer see the whole layout at a glance.
const (
	CACert     = "ca.crt"       // the box's root certificate (PEM)
	CAKey      = "ca.key"       // its private key (PKCS#8 PEM, 0600)
	TLSKey     = "tls.key"      // the chosen HTTPS server key (PKCS#8 PEM, 0600)
	TLSCert    = "tls.crt"      // the leaf issued from the CA for TLSKey (PEM)
	SSHHostKey = "ssh_host.key" // the chosen SSH host key (OpenSSH PEM, 0600)
	// The keys of the other family beside the chosen ones (choose.Other),
	// for the clients that cannot take the chosen keys' signatures.
	TLSOtherKey     = "tls-other.key"
	TLSOtherCert    = "tls-other.crt"
	SSHOtherHostKey = "ssh_host-other.key"
	Decision        = "decision.json"
	Report          = "report.json"
	Clock           = "clock" // last time known to be reached, for the clock floor
)

// Dir is a state directory.
type Dir struct {
	Path string
}

// Open creates the directory (0700) if needed and returns it.
func Open(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", path, err)
	}
	d := &Dir{Path: path}
	d.removeStaleTemps()
	return d, nil
}

// removeStaleTemps deletes temp files left by a write that a power cut
// interrupted: they were never renamed, so nothing acknowledged is in them.
// Only those older than a minute go: a younger one may be another
// process's write in progress (the server's, while `bonesync user` runs).
func (d *Dir) removeStaleTemps() {
	stale, _ := filepath.Glob(filepath.Join(d.Path, ".*.tmp-*"))
	for _, p := range stale {
		if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(p)
		}
	}
}

// Join returns the full path of name inside the directory.
func (d *Dir) Join(name string) string { return filepath.Join(d.Path, name) }

// Exists reports whether name is present.
func (d *Dir) Exists(name string) bool {
	_, err := os.Stat(d.Join(name))
	return err == nil
}

// Read returns the content of name. A missing file gives an error for which
// errors.Is(err, fs.ErrNotExist) holds; an empty file (the usual trace of a
// write that was cut off on a file system without ordered data) is reported as
// Damaged.
func (d *Dir) Read(name string) ([]byte, error) {
	b, err := os.ReadFile(d.Join(name))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, &Damaged{Path: d.Join(name), Reason: "file is empty"}
	}
	return b, nil
}

// Write atomically replaces name with data, with the given permission bits.
func (d *Dir) Write(name string, data []byte, perm fs.FileMode) error {
	return WriteFile(d.Join(name), data, perm)
}

// Remove deletes name; a missing file is not an error.
func (d *Dir) Remove(name string) error {
	err := os.Remove(d.Join(name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return SyncDir(d.Path)
}

// WriteFile atomically replaces path with data: temp file in the same
// directory, write, fsync, chmod, rename, fsync of the directory. On any error
// the temp file is removed and the old file, if any, is untouched. A file
// that already holds data with perm is left alone: on an SD card every
// write wears the flash, and a rewrite of the same bytes is one more window
// for a power cut.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if unchanged(path, dir, data, perm) {
		return nil
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	// Restrict before any byte is written, so a private key is never readable.
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if uid, gid, ok := owner(path, dir); ok {
		if err = f.Chown(uid, gid); err != nil {
			return err
		}
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// owner is who a file written by root must belong to: the owner of its
// directory when that is not root (the service's own user: `sudo bonesync
// user passwd` on a Debian install must leave users.json the service's, and
// mends a file an earlier sudo left root's), else the owner of the file it
// replaces. ok is false when there is nothing to change (not root, or all
// root's).
func owner(path, dir string) (uid, gid int, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	if dir == "" {
		dir = "."
	}
	for _, p := range []string{dir, path} {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st, isUnix := fi.Sys().(*syscall.Stat_t); isUnix && (st.Uid != 0 || st.Gid != 0) {
			return int(st.Uid), int(st.Gid), true
		}
	}
	return 0, 0, false
}

// unchanged reports whether path is a regular file with exactly data and
// perm, and the owner it must have.
func unchanged(path, dir string, data []byte, perm fs.FileMode) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != perm || fi.Size() != int64(len(data)) {
		return false
	}
	if uid, gid, ok := owner(path, dir); ok {
		if st, isUnix := fi.Sys().(*syscall.Stat_t); isUnix && (int(st.Uid) != uid || int(st.Gid) != gid) {
			return false
		}
	}
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, data)
}

// SyncDir makes a directory's entries durable (after a rename or a
// remove in it).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	defer d.Close() // dropped: a directory's close after its sync loses nothing
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// Damaged is a file that exists but cannot be used. Its message names the file,
// what is wrong with it and what to do.
type Damaged struct {
	Path   string
	Reason string
	// Advice says what to do; if empty, the error suggests deleting the file
	// so that it is made again.
	Advice string
}

func (e *Damaged) Error() string {
	advice := e.Advice
	if advice == "" {
		advice = "delete it and it will be made again"
	}
	return fmt.Sprintf("%s is damaged (%s): %s", e.Path, e.Reason, advice)
}

// IsDamaged reports whether err is, or wraps, a *Damaged.
func IsDamaged(err error) bool {
	var d *Damaged
	return errors.As(err, &d)
}
