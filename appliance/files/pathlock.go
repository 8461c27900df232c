package files

import (
	"path"
	"sort"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// pathLocks serialises the requests that change the same path, so that a
// conditional request's check (If-Match...) and its change are one step:
// two devices uploading over the same version cannot both succeed. Each
// path (per user, cleaned and in NFC, as the store names it) has its own
// mutex while someone holds or waits for it, so a slow upload holds up
// only requests on its own path. A request takes its (at most two) paths in
// order, so two requests never wait for each other.
type pathLocks struct {
	mu    sync.Mutex
	paths map[string]*pathLock
}

type pathLock struct {
	sync.Mutex
	refs int
}

// lock takes the locks of user's paths and returns the function that
// releases them.
func (l *pathLocks) lock(user string, paths ...string) (unlock func()) {
	var keys []string
	for _, p := range paths {
		k := user + "\x00" + path.Clean("/"+norm.NFC.String(p))
		if !containsString(keys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var held []*pathLock
	for _, k := range keys {
		l.mu.Lock()
		if l.paths == nil {
			l.paths = map[string]*pathLock{}
		}
		pl := l.paths[k]
		if pl == nil {
			pl = &pathLock{}
			l.paths[k] = pl
		}
		pl.refs++
		l.mu.Unlock()
		pl.Lock()
		held = append(held, pl)
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, pl := range held {
			pl.Unlock()
			if pl.refs--; pl.refs == 0 {
				delete(l.paths, keys[i])
			}
		}
	}
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
