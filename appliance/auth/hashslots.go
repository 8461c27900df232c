package auth

import (
	"runtime"
	"sync"
)

// hashSlots lets one Argon2id hash run at a time: each takes 12 MiB (more
// for a hash made otherwise and not yet upgraded: users.DB.upgrade), and the memory
// ceiling (52 MB for the whole process) has room for one. When
// several wait, those from addresses with no failed logins go first, so that
// a flood of guesses from a few addresses delays the owner's own login by at
// most the hashes already running, not by the whole queue.
type hashSlots struct {
	mu      sync.Mutex
	busy    bool
	trusted []chan struct{} // waiting, in order
	suspect []chan struct{}
}

// Take waits for the slot and returns the function that gives it back: it
// is users.Turns, how the user database runs every hash it makes.
func (s *hashSlots) Take(suspect bool) (release func()) {
	s.acquire(suspect)
	return s.release
}

// acquire waits for the slot.
func (s *hashSlots) acquire(suspect bool) {
	s.mu.Lock()
	if !s.busy {
		s.busy = true
		s.mu.Unlock()
		return
	}
	turn := make(chan struct{})
	if suspect {
		s.suspect = append(s.suspect, turn)
	} else {
		s.trusted = append(s.trusted, turn)
	}
	s.mu.Unlock()
	<-turn // the slot is handed over busy
}

// release hands the slot to the next waiting, trusted ones first.
//
// It first collects the garbage, which frees the finished hash's memory
// before the next hash asks for its own. Left to its own pace, the
// collector started by the next hash's allocation runs concurrently with
// it, so the old block was often still resident when the new one was
// touched: two hashes' memory at once, a 64 MB peak on a loaded machine.
// A collection of the server's small heap costs far less than the hash.
func (s *hashSlots) release() {
	runtime.GC()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range []*[]chan struct{}{&s.trusted, &s.suspect} {
		if len(*q) > 0 {
			next := (*q)[0]
			*q = (*q)[1:]
			close(next)
			return
		}
	}
	s.busy = false
}
