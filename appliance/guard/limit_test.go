package guard

import (
	"context"
	"testing"
	"time"
)

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
