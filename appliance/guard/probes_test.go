package guard

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// A pass lets its probe's address past the per-address caps, for a while
// and a number of connections; without one, or after, the caps hold.
func TestProbePass(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	p := NewProbes()
	p.now = func() time.Time { return now }
	a := NewAdmission("https", Limits{PerAddress: 2, Waiting: 2}, slog.New(slog.DiscardHandler)).Probes(p)
	admit := func(n int) (got int) {
		for range n {
			if a.Admit("10.0.0.9", nil) != nil {
				got++
			}
		}
		return got
	}
	if got := admit(5); got != 2 {
		t.Fatalf("without a pass: %d admitted of 5, want the cap of 2", got)
	}
	if _, err := p.Let("no-such-pass", "10.0.0.9"); !errors.Is(err, errNoPass) {
		t.Errorf("a made-up pass: %v", err)
	}
	token, exp, err := p.Pass()
	if err != nil || !exp.Equal(now.Add(passFor)) {
		t.Fatalf("Pass = %v %v", exp, err)
	}
	al, err := p.Let(token, "10.0.0.9")
	if err != nil || al.Source != "10.0.0.9" || al.Connections != allowConns {
		t.Fatalf("Let = %+v %v", al, err)
	}
	if got := admit(100); got != 100 {
		t.Errorf("with the pass: %d admitted of 100", got)
	}
	other := 0
	for range 3 {
		if a.Admit("10.0.0.10", nil) != nil {
			other++
		}
	}
	if other != 2 {
		t.Errorf("another address: %d admitted of 3, want its cap of 2", other)
	}
	now = now.Add(allowFor)
	if got := admit(3); got != 0 {
		t.Errorf("after the allowance: %d admitted", got)
	}
	now = now.Add(passFor)
	if _, err := p.Let(token, "10.0.0.9"); !errors.Is(err, errNoPass) {
		t.Errorf("an expired pass: %v", err)
	}
	// The allowance is a number of connections too.
	token, _, _ = p.Pass()
	p.Let(token, "10.0.0.9")
	p.allow["10.0.0.9"].left = 3
	if got := admit(10); got != 3 {
		t.Errorf("3 connections left: %d admitted", got)
	}
}

// The allowances are bounded, but a probe that shows its pass again (for
// its second protocol) renews its own whatever the others hold.
func TestProbeAllowancesBounded(t *testing.T) {
	p := NewProbes()
	token, _, _ := p.Pass()
	for i := range maxAllowances {
		if _, err := p.Let(token, fmt.Sprintf("10.0.1.%d", i)); err != nil {
			t.Fatalf("allowance %d: %v", i, err)
		}
	}
	if _, err := p.Let(token, "10.0.2.1"); err == nil {
		t.Error("an allowance past the bound was given")
	}
	if _, err := p.Let(token, "10.0.1.3"); err != nil {
		t.Errorf("a probe's second showing refused: %v", err)
	}
}
