package store

// Finding a file by its id.
//
// The Nextcloud apps ask for a preview, a file's versions or a share by
// the file id a listing gave them (oc:fileid), not by path. The id lives
// on the file itself (meta.go), in no index: a rename or a new version
// needs no second write, and a power cut cannot leave an index out of
// step with the tree. To find a file by its id, the store keeps a bounded
// table of where listings saw ids (Seen), checks that the place it
// remembers still holds that id, and otherwise walks the user's tree
// (Find), remembering all it passes. A listing comes before the requests
// that name its ids, so the walk is the exception: after a restart, or for
// an id that is gone, which is then remembered as gone until the tree
// changes.

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// seenMax bounds each of the two generations of the table: at most twice
// as many places are remembered, about 100 bytes each.
const seenMax = 4096

type seenKey struct {
	user string
	id   uint64
}

// sightings is where ids were seen: two generations, the older dropped
// when the newer is full, so the places seen last are kept.
type sightings struct {
	mu       sync.Mutex
	cur, old map[seenKey]string
	gone     map[seenKey]string // ids a walk did not find, with the top folder's ETag then
	walking  map[string]*sync.Mutex
}

func (s *sightings) put(k seenKey, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || len(s.cur) >= seenMax {
		s.old, s.cur = s.cur, make(map[seenKey]string, 64)
	}
	s.cur[k] = p
	delete(s.gone, k)
}

func (s *sightings) get(k seenKey) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.cur[k]; ok {
		return p, true
	}
	p, ok := s.old[k]
	return p, ok
}

// walkLock is held while a user's tree is walked for an id: a second
// lookup waits, then most likely finds the id remembered.
func (s *sightings) walkLock(user string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.walking == nil {
		s.walking = map[string]*sync.Mutex{}
	}
	l := s.walking[user]
	if l == nil {
		l = new(sync.Mutex)
		s.walking[user] = l
	}
	return l
}

// missing reports whether a walk did not find k while the top folder had
// the ETag top (nothing changed since); notFound records such a walk.
func (s *sightings) missing(k seenKey, top string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone[k] == top && top != ""
}

func (s *sightings) notFound(k seenKey, top string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone == nil || len(s.gone) >= seenMax {
		s.gone = map[seenKey]string{}
	}
	s.gone[k] = top
}

// Seen remembers that the file or folder p ("/a/b", as a listing of the
// tree names it) has the id id, so that Find need not walk for it. A wrong
// or stale sighting costs a walk, never a wrong answer: Find checks.
func (t *Tree) Seen(p string, id uint64) {
	t.s.seen.put(seenKey{t.user, id}, strings.TrimPrefix(p, "/"))
}

// Find returns the path ("/a/b") and description of the file or folder
// with the id id, or an error wrapping fs.ErrNotExist.
func (t *Tree) Find(id uint64) (string, Info, error) {
	k := seenKey{t.user, id}
	if p, ok := t.s.seen.get(k); ok {
		if in, err := t.Info(p); err == nil && in.FileID == id {
			return "/" + trimDot(p), in, nil
		}
	}
	l := t.s.seen.walkLock(t.user)
	l.Lock()
	defer l.Unlock()
	if p, ok := t.s.seen.get(k); ok { // found by the walk waited for
		if in, err := t.Info(p); err == nil && in.FileID == id {
			return "/" + trimDot(p), in, nil
		}
	}
	top, err := t.Info(".")
	if err != nil {
		return "", Info{}, err
	}
	notFound := fmt.Errorf("file id %d: %w", id, fs.ErrNotExist)
	if t.s.seen.missing(k, top.ETag) {
		return "", Info{}, notFound
	}
	var found string
	var foundInfo Info
	errFound := fmt.Errorf("found")
	err = t.Walk("/", func(p string, in Info) error {
		t.s.seen.put(seenKey{t.user, in.FileID}, p[1:])
		if in.FileID == id {
			found, foundInfo = p, in
			return errFound
		}
		return nil
	})
	if found != "" {
		return found, foundInfo, nil
	}
	if err != nil && err != errFound {
		return "", Info{}, err
	}
	t.s.seen.notFound(k, top.ETag)
	return "", Info{}, notFound
}

func trimDot(c string) string {
	if c == "." {
		return ""
	}
	return c
}

// Walk calls fn for every file and folder below the folder p (not p
// itself), a folder before what it holds, with paths that start at the
// top of the tree ("/a/b"). Symlinks are not followed, and the temporary
// files of uploads are skipped. A folder that cannot be read is skipped;
// an error from fn stops the walk and is returned. fs.SkipDir from fn for
// a folder skips what it holds.
func (t *Tree) Walk(p string, fn func(p string, in Info) error) error {
	c, err := t.clean(p)
	if err != nil {
		return err
	}
	return t.walk("/"+trimDot(c), fn)
}

func (t *Tree) walk(p string, fn func(p string, in Info) error) error {
	dir, err := t.OpenDir(p)
	if err != nil {
		return nil
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		dir.Close()
		return nil
	}
	var sub []string
	for _, n := range names {
		if IsInternal(n) {
			continue
		}
		child := path.Join(p, n)
		in, ok, err := t.InfoIn(dir, n)
		if !ok && err == nil {
			fi, lerr := t.Lstat(child)
			if lerr != nil || fi.Mode()&fs.ModeSymlink != 0 {
				continue
			}
			in, err = t.Info(child)
		}
		if err != nil {
			continue // gone since the listing
		}
		switch err := fn(child, in); {
		case err == fs.SkipDir:
			continue
		case err != nil:
			dir.Close()
			return err
		}
		if in.IsDir() {
			sub = append(sub, child)
		}
	}
	dir.Close() // before going down: one folder open at a time
	for _, s := range sub {
		if err := t.walk(s, fn); err != nil {
			return err
		}
	}
	return nil
}
