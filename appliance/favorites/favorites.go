// Package favorites keeps each user's favourite files and folders: the
// star the Nextcloud apps and the desktop client set (oc:favorite) and
// list (the favourites view). They are kept by file id, so a favourite
// follows a rename and stays one in the trash, in one small file per user
// (files/.bonesync/favorites/USER.json, a list of ids), written whole and
// synced, and read once per user.
package favorites

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bonesync/bonesync/appliance/state"
)

// Set is the users' favourites.
type Set struct {
	dir string

	mu     sync.Mutex
	byUser map[string]map[uint64]bool
}

// Open returns the favourites kept in dir.
func Open(dir string) *Set {
	return &Set{dir: dir, byUser: map[string]map[uint64]bool{}}
}

func (s *Set) file(user string) (string, error) {
	if user == "" || strings.ContainsAny(user, "/\\\x00") || strings.HasPrefix(user, ".") {
		return "", fmt.Errorf("bad user name %q", user)
	}
	return filepath.Join(s.dir, user+".json"), nil
}

// load reads user's favourites, once. The caller holds s.mu.
func (s *Set) load(user string) (map[uint64]bool, error) {
	if m, ok := s.byUser[user]; ok {
		return m, nil
	}
	name, err := s.file(user)
	if err != nil {
		return nil, err
	}
	m := map[uint64]bool{}
	b, err := os.ReadFile(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("favourites of %s: %w", user, err)
	default:
		var ids []uint64
		if err := json.Unmarshal(b, &ids); err != nil {
			return nil, &state.Damaged{Path: name, Reason: err.Error(), Advice: "delete it to start the favourites anew (the files are untouched)"}
		}
		for _, id := range ids {
			m[id] = true
		}
	}
	s.byUser[user] = m
	return m, nil
}

// Of returns user's favourites, by file id (not to be changed).
func (s *Set) Of(user string) (map[uint64]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(user)
	if err != nil {
		return nil, err
	}
	return maps(m), nil
}

func maps(m map[uint64]bool) map[uint64]bool {
	c := make(map[uint64]bool, len(m))
	for k := range m {
		c[k] = true
	}
	return c
}

// Mark makes the file or folder id one of user's favourites (on) or not.
func (s *Set) Mark(user string, id uint64, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(user)
	if err != nil {
		return err
	}
	if m[id] == on {
		return nil
	}
	next := maps(m)
	if on {
		next[id] = true
	} else {
		delete(next, id)
	}
	if err := s.save(user, next); err != nil {
		return err
	}
	s.byUser[user] = next
	return nil
}

// Forget drops ids from user's favourites: ids no file has any more.
func (s *Set) Forget(user string, ids []uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(user)
	if err != nil {
		return err
	}
	next := maps(m)
	for _, id := range ids {
		delete(next, id)
	}
	if len(next) == len(m) {
		return nil
	}
	if err := s.save(user, next); err != nil {
		return err
	}
	s.byUser[user] = next
	return nil
}

func (s *Set) save(user string, m map[uint64]bool) error {
	name, err := s.file(user)
	if err != nil {
		return err
	}
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return state.WriteJSON(name, ids, 0o600)
}
