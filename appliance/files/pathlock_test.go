package files

import (
	"testing"
	"time"
)

func TestPathLocks(t *testing.T) {
	var l pathLocks
	unlock := l.lock("u", "/a.txt")
	// Another path, another user: not held up.
	done := make(chan bool)
	go func() { l.lock("u", "/b.txt")(); l.lock("v", "/a.txt")(); done <- true }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a lock on another path waited")
	}
	// The same path in another spelling (NFD, no slash) waits.
	got := make(chan bool)
	go func() { l.lock("u", "a.txt", "/x")(); got <- true }()
	select {
	case <-got:
		t.Fatal("a second lock on the same path did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	<-got
	l.lock("u", "Cafe\u0301")()
	if len(l.paths) != 0 {
		t.Errorf("%d path locks left after every release", len(l.paths))
	}
}
