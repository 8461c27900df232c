package web

import (
	"hash/maphash"
	"path"
	"sort"
	"sync"
)

// pathLocks serialises the requests that change the same path, so that a
// conditional request's check (If-Match...) and its change are one step:
// two devices uploading over the same version cannot both succeed. Paths
// hash onto a fixed set of mutexes; requests on different paths rarely share
// one, and never deadlock, since a request takes its (at most two) mutexes
// in order.
type pathLocks struct {
	once sync.Once
	seed maphash.Seed
	mu   [256]sync.Mutex
}

// lock takes the locks of user's paths and returns the function that
// releases them.
func (l *pathLocks) lock(user string, paths ...string) (unlock func()) {
	l.once.Do(func() { l.seed = maphash.MakeSeed() })
	var idx []int
	for _, p := range paths {
		i := int(maphash.String(l.seed, user+"\x00"+path.Clean("/"+p)) % uint64(len(l.mu)))
		if !contains(idx, i) {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	for _, i := range idx {
		l.mu[i].Lock()
	}
	return func() {
		for _, i := range idx {
			l.mu[i].Unlock()
		}
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
