package guard

import (
	"bytes"
	"context"
	"github.com/bonesync/bonesync/appliance/sysd"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBanGrows(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	g := newGuard(func() time.Time { return now }, sysd.NewLogger(&log))
	const ip = "192.168.1.66"
	for i := 0; i < MaxFailures-1; i++ {
		g.Failed(ip, "sftp", "admin")
	}
	if b, _ := g.Banned(ip); b {
		t.Fatalf("banned after %d failures, want %d", MaxFailures-1, MaxFailures)
	}
	g.Failed(ip, "webdav", "admin")
	if b, left := g.Banned(ip); !b || left != FirstBan {
		t.Fatalf("after %d failures Banned = %v, %v, want true, %v", MaxFailures, b, left, FirstBan)
	}
	if b, _ := g.Banned("192.168.1.67"); b {
		t.Error("another address is banned too")
	}
	now = now.Add(FirstBan + time.Second)
	if b, _ := g.Banned(ip); b {
		t.Fatal("still banned after the ban ran out")
	}
	for i := 0; i < MaxFailures; i++ {
		g.Failed(ip, "sftp", "root")
	}
	if _, left := g.Banned(ip); left != 2*FirstBan {
		t.Errorf("second ban lasts %v, want %v", left, 2*FirstBan)
	}
	if !strings.Contains(log.String(), "banned 192.168.1.66 for 2m0s") || !strings.Contains(log.String(), `webdav user "admin"`) {
		t.Errorf("log lacks the ban or the failure:\n%s", log.String())
	}
}

func TestFailuresOutsideWindowForgotten(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	g := newGuard(func() time.Time { return now }, nil)
	for i := 0; i < MaxFailures*3; i++ {
		g.Failed("10.0.0.5", "sftp", "x")
		now = now.Add(Window / MaxFailures * 2)
	}
	if b, _ := g.Banned("10.0.0.5"); b {
		t.Error("slow failures, fewer than the limit within any window, led to a ban")
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(2, 10*time.Millisecond)
	ctx := context.Background()
	for i := range 2 {
		if !l.Acquire(ctx) {
			t.Fatalf("could not take slot %d of 2", i+1)
		}
	}
	if l.Acquire(ctx) {
		t.Fatal("took a third slot of 2")
	}
	if l.InFlight() != 2 {
		t.Errorf("InFlight = %d, want 2", l.InFlight())
	}
	l.Release()
	if !l.Acquire(ctx) {
		t.Error("no slot after a release")
	}
}

func TestHost(t *testing.T) {
	for in, want := range map[string]string{"1.2.3.4:55": "1.2.3.4", "[fe80::1]:22": "fe80::1", "bare": "bare"} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}

// Guesses made at once count as much as guesses made one after another, and
// a good login (perhaps as another user) does not wipe the count.
func TestConcurrentGuessesCount(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	g := newGuard(func() time.Time { return now }, nil)
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
			done(WrongPassword) // every guess is wrong
		}()
	}
	wg.Wait()
	if checked > MaxFailures+MaxConcurrent-1 {
		t.Errorf("%d of 40 simultaneous guesses were checked, want at most %d", checked, MaxFailures+MaxConcurrent-1)
	}
	if b, _ := g.Banned("10.0.0.7"); !b {
		t.Error("not banned after a burst of failures")
	}
	g2 := newGuard(func() time.Time { return now }, nil)
	for i := 0; i < MaxFailures-1; i++ {
		done, _ := g2.Begin("10.0.0.8", "webdav", "alice")
		done(WrongPassword)
	}
	done, _ := g2.Begin("10.0.0.8", "webdav", "mallory")
	done(LoggedIn) // a good login as another user
	done, _ = g2.Begin("10.0.0.8", "webdav", "alice")
	done(WrongPassword)
	if b, _ := g2.Banned("10.0.0.8"); !b {
		t.Error("a good login in between reset the failure count")
	}
	// Your own typos are forgiven when you get it right.
	g3 := newGuard(func() time.Time { return now }, nil)
	for round := 0; round < 3; round++ {
		for i := 0; i < MaxFailures-1; i++ {
			done, _ := g3.Begin("10.0.0.10", "webdav", "carol")
			done(WrongPassword)
		}
		done, ok := g3.Begin("10.0.0.10", "webdav", "carol")
		if !ok {
			t.Fatalf("round %d: carol refused", round)
		}
		done(LoggedIn)
	}
	if b, _ := g3.Banned("10.0.0.10"); b {
		t.Error("a user's own typos, each time followed by the right password, led to a ban")
	}
}

// A legitimate client sending many requests at once is never refused.
func TestConcurrentGoodLoginsWait(t *testing.T) {
	g := newGuard(time.Now, nil)
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
			done(LoggedIn)
		}()
	}
	wg.Wait()
	if refused != 0 {
		t.Errorf("%d good logins refused", refused)
	}
}
