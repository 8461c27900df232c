package auth

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/sysd"
)

var discard = slog.New(slog.DiscardHandler)

func TestBanGrows(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	g := newBans(func() time.Time { return now }, sysd.NewLogger(&log))
	const ip = "192.168.1.66"
	for i := 0; i < MaxFailures-1; i++ {
		g.Failed(ip, "sftp", "admin")
	}
	if b, _ := g.Banned(ip); b {
		t.Fatalf("banned after %d failures, want %d", MaxFailures-1, MaxFailures)
	}
	g.Failed(ip, "webdav", "admin")
	if b, left := g.Banned(ip); !b || left != firstBan {
		t.Fatalf("after %d failures Banned = %v, %v, want true, %v", MaxFailures, b, left, firstBan)
	}
	if b, _ := g.Banned("192.168.1.67"); b {
		t.Error("another address is banned too")
	}
	now = now.Add(firstBan + time.Second)
	if b, _ := g.Banned(ip); b {
		t.Fatal("still banned after the ban ran out")
	}
	for i := 0; i < MaxFailures; i++ {
		g.Failed(ip, "sftp", "root")
	}
	if _, left := g.Banned(ip); left != 2*firstBan {
		t.Errorf("second ban lasts %v, want %v", left, 2*firstBan)
	}
	if !strings.Contains(log.String(), "banned addr=192.168.1.66 for=2m0s") || !strings.Contains(log.String(), "login failed proto=webdav user=admin addr=192.168.1.66") {
		t.Errorf("log lacks the ban or the failure:\n%s", log.String())
	}
}

func TestFailuresOutsideWindowForgotten(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	g := newBans(func() time.Time { return now }, discard)
	for i := 0; i < MaxFailures*3; i++ {
		g.Failed("10.0.0.5", "sftp", "x")
		now = now.Add(window / MaxFailures * 2)
	}
	if b, _ := g.Banned("10.0.0.5"); b {
		t.Error("slow failures, fewer than the limit within any window, led to a ban")
	}
}

// Guesses made at once count as much as guesses made one after another, and
// a good login (perhaps as another user) does not wipe the count.
func TestConcurrentGuessesCount(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	g := newBans(func() time.Time { return now }, discard)
	var mu sync.Mutex
	checked := 0
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, ok := g.Begin("10.0.0.7", "webdav", "alice")
			if !ok {
				return
			}
			mu.Lock()
			checked++
			mu.Unlock()
			done(wrongPassword) // every guess is wrong
		}()
	}
	wg.Wait()
	if checked > MaxFailures+maxConcurrent-1 {
		t.Errorf("%d of 40 simultaneous guesses were checked, want at most %d", checked, MaxFailures+maxConcurrent-1)
	}
	if b, _ := g.Banned("10.0.0.7"); !b {
		t.Error("not banned after a burst of failures")
	}
	g2 := newBans(func() time.Time { return now }, discard)
	for i := 0; i < MaxFailures-1; i++ {
		done, _ := g2.Begin("10.0.0.8", "webdav", "alice")
		done(wrongPassword)
	}
	done, _ := g2.Begin("10.0.0.8", "webdav", "mallory")
	done(loggedIn) // a good login as another user
	done, _ = g2.Begin("10.0.0.8", "webdav", "alice")
	done(wrongPassword)
	if b, _ := g2.Banned("10.0.0.8"); !b {
		t.Error("a good login in between reset the failure count")
	}
	// Your own typos are forgiven when you get it right.
	g3 := newBans(func() time.Time { return now }, discard)
	for round := 0; round < 3; round++ {
		for i := 0; i < MaxFailures-1; i++ {
			done, _ := g3.Begin("10.0.0.10", "webdav", "carol")
			done(wrongPassword)
		}
		done, ok := g3.Begin("10.0.0.10", "webdav", "carol")
		if !ok {
			t.Fatalf("round %d: carol refused", round)
		}
		done(loggedIn)
	}
	if b, _ := g3.Banned("10.0.0.10"); b {
		t.Error("a user's own typos, each time followed by the right password, led to a ban")
	}
}

// A legitimate client sending many requests at once is never refused.
func TestConcurrentGoodLoginsWait(t *testing.T) {
	g := newBans(time.Now, discard)
	var wg sync.WaitGroup
	refused := 0
	var mu sync.Mutex
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, ok := g.Begin("10.0.0.9", "webdav", "bob")
			if !ok {
				mu.Lock()
				refused++
				mu.Unlock()
				return
			}
			done(loggedIn)
		}()
	}
	wg.Wait()
	if refused != 0 {
		t.Errorf("%d good logins refused", refused)
	}
}
