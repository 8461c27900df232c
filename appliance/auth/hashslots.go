package auth

import (
	"context"
	"sync"

	"github.com/bonesync/bonesync/appliance/budget"
)

// hashSlots lets one Argon2id hash run at a time: each takes 12 MiB (more
// for a hash made otherwise and not yet upgraded: users.DB.upgrade), and the memory
// ceiling (52 MB for the whole process) has room for one. When
// several wait, those from addresses with no failed logins go first, so that
// a flood of guesses from a few addresses delays the owner's own login by at
// most the hashes already running, not by the whole queue.
type hashSlots struct {
	memory  *budget.Budget // what each hash draws its memory from; nil: none
	mu      sync.Mutex
	busy    bool
	trusted []chan struct{} // waiting, in order
	suspect []chan struct{}
}

// Take waits for the slot, then for the hash's memory from the box's
// budget, and returns the function that gives both back: it is
// users.Turns, how the user database runs every hash it makes. A hash is
// never refused for want of memory: it waits (the slot keeps the queue
// in front of the budget one long).
func (s *hashSlots) Take(suspect bool, memory int64) (release func()) {
	s.acquire(suspect)
	give, err := s.memory.Wait(context.Background(), "login", memory)
	if err != nil { // Wait with no deadline refuses nothing; should it, the hash still runs
		give = func() {}
	}
	return func() {
		give()
		s.release()
	}
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

// release hands the slot to the next waiting, trusted ones first. (The
// budget's release has collected the garbage first, which frees the
// finished hash's memory before the next hash asks for its own: left to
// its own pace, the collector started by the next hash's allocation ran
// concurrently with it, and two hashes' memory were resident at once, a
// 64 MB peak on a loaded machine.)
func (s *hashSlots) release() {
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
