// Package store is the users' files: one directory per user, reached only
// through os.Root, so no path, symlink or ".." a client sends can lead
// outside it, and written only through Uploads, which become visible when
// complete and on disk. WebDAV and SFTP both sit on it, so the two protocols
// cannot disagree about what a path means or when a file exists.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Store is the directory holding one subdirectory per user.
type Store struct {
	dir string
}

// Open returns the store at dir, creating it (0700) if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("file store %s: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Tree opens the named user's directory, creating it if needed. The caller
// must Close it.
func (s *Store) Tree(user string) (*Tree, error) {
	if user == "" || strings.ContainsAny(user, "/\\\x00") || user == "." || user == ".." {
		return nil, fmt.Errorf("bad user name %q", user)
	}
	dir := filepath.Join(s.dir, user)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("user directory %s: %w", dir, err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open user directory %s: %w", dir, err)
	}
	return &Tree{root: r, user: user}, nil
}

// RemoveStaleUploads deletes, in every user's tree, the temporary files of
// uploads that a crash or a power cut interrupted. Nothing acknowledged is in
// them. Call it once at start, before serving.
func (s *Store) RemoveStaleUploads() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t, err := s.Tree(e.Name())
		if err != nil {
			return err
		}
		t.removeStaleUploads(".")
		t.Close()
	}
	return nil
}

// Tree is one user's directory. Every method takes a client path: "/a/b",
// "a/b" and "" all mean paths within the tree; nothing can name anything
// outside it.
type Tree struct {
	root *os.Root
	user string
}

// Close releases the tree.
func (t *Tree) Close() error { return t.root.Close() }

// ErrBadName is returned for a path that no client should send: one with a
// NUL, a control character or a backslash in it, or naming an upload's
// temporary file.
var ErrBadName = errors.New("invalid file name")

// Clean turns a client path into a path relative to the tree: "." for the
// top, never starting with "/" or "..". Cleaning is lexical ("a/../b" is "b",
// and "/../.." is "."); os.Root then refuses symlinks that lead out.
func Clean(p string) (string, error) {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "", fmt.Errorf("%q: %w", p, ErrBadName)
		}
	}
	c := path.Clean("/" + p)[1:]
	if c == "" {
		return ".", nil
	}
	for _, part := range strings.Split(c, "/") {
		if isUploadTemp(part) {
			return "", fmt.Errorf("%q: %w", p, ErrBadName)
		}
	}
	return c, nil
}

func (t *Tree) clean(p string) (string, error) { return Clean(p) }

// Stat describes the named file, following symlinks that stay inside.
func (t *Tree) Stat(p string) (fs.FileInfo, error) {
	c, err := t.clean(p)
	if err != nil {
		return nil, err
	}
	return t.root.Stat(c)
}

// Lstat describes the named file without following a final symlink.
func (t *Tree) Lstat(p string) (fs.FileInfo, error) {
	c, err := t.clean(p)
	if err != nil {
		return nil, err
	}
	return t.root.Lstat(c)
}

// Open opens the named file or directory for reading.
func (t *Tree) Open(p string) (*os.File, error) {
	c, err := t.clean(p)
	if err != nil {
		return nil, err
	}
	return t.root.Open(c)
}

// Mkdir makes a directory.
func (t *Tree) Mkdir(p string) error {
	c, err := t.clean(p)
	if err != nil {
		return err
	}
	if c == "." {
		return fs.ErrExist
	}
	if err := t.root.Mkdir(c, 0o755); err != nil {
		return err
	}
	return t.syncDir(path.Dir(c))
}

// Remove removes a file or an empty directory.
func (t *Tree) Remove(p string) error {
	c, err := t.clean(p)
	if err != nil {
		return err
	}
	if c == "." {
		return fs.ErrPermission
	}
	if err := t.root.Remove(c); err != nil {
		return err
	}
	return t.syncDir(path.Dir(c))
}

// RemoveAll removes a file or a directory and everything in it. The top of
// the tree cannot be removed.
func (t *Tree) RemoveAll(p string) error {
	c, err := t.clean(p)
	if err != nil {
		return err
	}
	if c == "." {
		return fs.ErrPermission
	}
	if _, err := t.root.Lstat(c); err != nil {
		return err
	}
	if err := t.root.RemoveAll(c); err != nil {
		return err
	}
	return t.syncDir(path.Dir(c))
}

// Rename moves oldp to newp, replacing a file at newp.
func (t *Tree) Rename(oldp, newp string) error {
	o, err := t.clean(oldp)
	if err != nil {
		return err
	}
	n, err := t.clean(newp)
	if err != nil {
		return err
	}
	if o == "." || n == "." {
		return fs.ErrPermission
	}
	if err := t.root.Rename(o, n); err != nil {
		return err
	}
	if err := t.syncDir(path.Dir(n)); err != nil {
		return err
	}
	if path.Dir(o) != path.Dir(n) {
		return t.syncDir(path.Dir(o))
	}
	return nil
}

// ReadDir lists a directory, leaving out uploads in progress.
func (t *Tree) ReadDir(p string) ([]fs.FileInfo, error) {
	f, err := t.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.Readdir(-1)
	if err != nil {
		return nil, err
	}
	return Visible(entries), nil
}

// Visible drops the temporary files of uploads in progress from a listing.
func Visible(entries []fs.FileInfo) []fs.FileInfo {
	out := entries[:0]
	for _, e := range entries {
		if !isUploadTemp(e.Name()) {
			out = append(out, e)
		}
	}
	return out
}

func (t *Tree) syncDir(c string) error {
	d, err := t.root.Open(c)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
