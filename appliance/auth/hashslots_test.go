package auth

import (
	"testing"
	"time"
)

// One hash at a time; a check from a trusted address goes before those
// from suspect ones that were waiting longer.
func TestHashSlotsTrustedFirst(t *testing.T) {
	var s hashSlots
	s.acquire(true)
	order := make(chan string, 3)
	wait := func(name string, suspect bool) {
		s.acquire(suspect)
		order <- name
		time.Sleep(10 * time.Millisecond)
		s.release()
	}
	waiting := func(n int) { // until n are queued
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
			s.mu.Lock()
			k := len(s.trusted) + len(s.suspect)
			s.mu.Unlock()
			if k == n {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("%d checks never queued", n)
	}
	go wait("guess 1", true)
	go wait("guess 2", true)
	waiting(2)
	go wait("owner", false)
	waiting(3)
	select {
	case n := <-order:
		t.Fatalf("%s ran while the slot was taken", n)
	default:
	}
	s.release()
	if first := <-order; first != "owner" {
		t.Errorf("%s hashed first, want the trusted owner", first)
	}
	<-order
	<-order
}
