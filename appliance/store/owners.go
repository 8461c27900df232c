package store

// The store as the admin sees it: who has files, what each one's data
// takes, and the files of users who no longer have an account (deleting
// an account leaves its files), handed to another user or removed.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/state"
)

// Owners are the names with files in the store, or a trash: every user
// who has had data here, with an account or not.
func (s *Store) Owners() ([]string, error) {
	var names []string
	for _, dir := range []string{s.dir, filepath.Join(s.own, "trash")} {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the store's users: %w", err)
		}
		for _, e := range entries {
			// lost+found, where the files folder is a file system's root,
			// is fsck's, nobody's: only names an account could have.
			if e.IsDir() && accountName(e.Name()) && !slices.Contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// Usage is what a user's data takes, by kind.
type Usage struct {
	Files    int64 // the tree (what the quota counts)
	Trash    int64 // deleted files kept for restoring
	Versions int64 // the earlier versions of files
}

// UsageOf counts what user's data takes; a user with none has zeros.
func (s *Store) UsageOf(user string) (Usage, error) {
	var u Usage
	if !validUser(user) {
		return u, fmt.Errorf("bad user name %q", user)
	}
	if fi, err := os.Stat(filepath.Join(s.dir, user)); err == nil && fi.IsDir() {
		t, err := s.tree(user, false)
		if err != nil {
			return u, err
		}
		u.Files, err = t.Usage()
		t.Close()
		if err != nil {
			return u, err
		}
	}
	items, err := s.loadTrash(user)
	if err != nil {
		return u, fmt.Errorf("the trash of %s: %w", user, err)
	}
	for _, it := range items {
		if it.Kind == KindVersion {
			u.Versions += it.Size
		} else {
			u.Trash += it.Size
		}
	}
	return u, nil
}

// HandOver moves every file of from, a user with no account (the caller
// knows the accounts), into to's tree as the folder name: a rename on the
// one file system, so the files keep their dates, ids and digests, and a
// power cut leaves them wholly on one side. to's usage grows by them,
// whatever its quota (the admin decided). from's trash and versions stay
// as they are, to be removed with RemoveOwner.
func (s *Store) HandOver(from, to, name string) error {
	if from == to || !validUser(from) {
		return fmt.Errorf("hand %q's files to %q: not another user", from, to)
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("hand %s's files over: bad folder name %q", from, name)
	}
	src := filepath.Join(s.dir, from)
	if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
		return fmt.Errorf("hand %s's files over: %s has no files", from, from)
	}
	old, err := s.tree(from, false)
	if err != nil {
		return err
	}
	moved, err := old.Usage()
	old.Close()
	if err != nil {
		return err
	}
	t, err := s.tree(to, false)
	if err != nil {
		return err
	}
	defer t.Close()
	if _, err := t.root.Lstat(name); err == nil {
		return fmt.Errorf("hand %s's files to %s: %s already has %q: %w", from, to, to, name, fs.ErrExist)
	}
	unlock := t.usageStep()
	sized := t.sizeChange()
	defer sized() // after the records are up: a count in between would see the files twice
	// No replacing: a folder of that name made since the check stays.
	err = unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, filepath.Join(s.dir, to, name), unix.RENAME_NOREPLACE)
	if err == nil {
		t.account(moved)
	}
	unlock()
	if err != nil {
		return fmt.Errorf("hand %s's files to %s: %w", from, to, err)
	}
	s.forgetUsage(from)
	if err := errors.Join(state.SyncDir(filepath.Join(s.dir, to)), state.SyncDir(s.dir)); err != nil {
		return fmt.Errorf("hand %s's files to %s: %w", from, to, err)
	}
	t.touchUp(".", moved)
	return nil
}

// RemoveOwner removes every file of user, a user with no account, with
// their trash and versions.
func (s *Store) RemoveOwner(user string) error {
	if !validUser(user) {
		return fmt.Errorf("bad user name %q", user)
	}
	for _, dir := range []string{filepath.Join(s.dir, user), s.trashPath(user), filepath.Join(s.own, "chunks", user)} {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove %s's files: %w", user, err)
		}
	}
	s.forgetUsage(user)
	s.heldMu.Lock()
	s.heldAt = time.Time{} // count the trash anew
	s.heldMu.Unlock()
	return nil
}

// accountName says whether name is one an account could have (package
// users: a lowercase letter, then lowercase letters, digits, _ and -).
func accountName(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validUser(user string) bool {
	return user != "" && !strings.ContainsAny(user, "/\\\x00") && !strings.HasPrefix(user, ".")
}
