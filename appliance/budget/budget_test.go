package budget

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"
)

// waitFor returns once n takes wait in b.
func waitFor(b *Budget, n int) {
	for b.Stats().Waiting != n {
		time.Sleep(time.Millisecond)
	}
}

func TestTakeAndRelease(t *testing.T) {
	b := New(100, Options{Wait: time.Hour})
	r1, err := b.Take(context.Background(), "a", 60)
	if err != nil {
		t.Fatal(err)
	}
	// 60 + 50 does not fit: the second waits until the first gives back.
	got := make(chan error)
	go func() {
		r2, err := b.Take(context.Background(), "b", 50)
		if err == nil {
			r2()
		}
		got <- err
	}()
	waitFor(b, 1)
	r1()
	r1() // a second release gives nothing back twice
	if err := <-got; err != nil {
		t.Fatalf("the waiting take = %v, want granted", err)
	}
	st := b.Stats()
	if st.InUse != 0 || st.Peak != 60 || len(st.Kinds) != 2 || st.Kinds[0].Granted != 1 || st.Kinds[1].Granted != 1 {
		t.Errorf("Stats() = %+v, want nothing in use, a peak of 60, one grant of each kind", st)
	}
}

func TestRefusals(t *testing.T) {
	b := New(100, Options{Wait: time.Millisecond, MaxWaiting: 1})
	if _, err := b.Take(context.Background(), "big", 101); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Take(101 of 100) = %v, want ErrTooLarge", err)
	}
	hold, _ := b.Take(context.Background(), "hold", 100)
	if _, err := b.Take(context.Background(), "late", 1); !errors.Is(err, ErrBusy) {
		t.Errorf("Take with the budget full past Wait = %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Take(ctx, "gone", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Take of a client gone = %v, want context.Canceled", err)
	}
	// The queue is bounded: with one waiting, another is refused at once.
	slow := New(100, Options{Wait: time.Hour, MaxWaiting: 1})
	holdSlow, _ := slow.Take(context.Background(), "hold", 100)
	go slow.Take(context.Background(), "first", 1)
	waitFor(slow, 1)
	start := time.Now()
	if _, err := slow.Take(context.Background(), "second", 1); !errors.Is(err, ErrBusy) {
		t.Errorf("Take with the queue full = %v, want ErrBusy at once", err)
	}
	if time.Since(start) > time.Minute {
		t.Error("the refusal waited")
	}
	holdSlow()
	hold()
	if b.Stats().InUse != 0 {
		t.Errorf("in use after every release: %d", b.Stats().InUse)
	}
	var refused int64
	for _, k := range b.Stats().Kinds {
		refused += k.Refused
	}
	if refused != 3 {
		t.Errorf("refusals counted: %d, want 3", refused)
	}
}

// Wait takes more than the whole budget as all of it.
func TestWaitTakesAll(t *testing.T) {
	b := New(10, Options{})
	r, err := b.Wait(context.Background(), "login", 19)
	if err != nil || b.Stats().InUse != 10 {
		t.Fatalf("Wait(19 of 10) = %v, %d in use; want the whole budget", err, b.Stats().InUse)
	}
	r()
}

// Wait has no deadline of its own: it outlasts the budget's Wait.
func TestWaitOutlastsTheDeadline(t *testing.T) {
	b := New(10, Options{Wait: time.Millisecond})
	hold, _ := b.Take(context.Background(), "hold", 10)
	done := make(chan error)
	go func() {
		r, err := b.Wait(context.Background(), "login", 10)
		if err == nil {
			r()
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	hold()
	if err := <-done; err != nil {
		t.Errorf("Wait = %v, want granted once the room came", err)
	}
}

// A large one at the head is not passed over by smaller ones behind it,
// and a head that gives up lets the next in.
func TestOrder(t *testing.T) {
	b := New(10, Options{Wait: time.Hour})
	hold, _ := b.Take(context.Background(), "hold", 5)
	ctx, cancel := context.WithCancel(context.Background())
	bigDone := make(chan error)
	go func() { _, err := b.Take(ctx, "big", 10); bigDone <- err }()
	waitFor(b, 1)
	smallDone := make(chan error)
	go func() {
		r, err := b.Take(context.Background(), "small", 1)
		if err == nil {
			r()
		}
		smallDone <- err
	}()
	waitFor(b, 2)
	select {
	case <-smallDone:
		t.Fatal("a small take passed the large one waiting before it")
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-bigDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the large take = %v, want canceled", err)
	}
	if err := <-smallDone; err != nil {
		t.Errorf("the small take after the large gave up = %v, want granted", err)
	}
	hold()
}

func TestAnswer(t *testing.T) {
	b := New(10, Options{Wait: time.Millisecond})
	_, tooLarge := b.Take(context.Background(), "zip", 11)
	w := httptest.NewRecorder()
	if !Answer(w, tooLarge, 507) || w.Code != 507 {
		t.Errorf("Answer(too large) = %d, want 507", w.Code)
	}
	hold, _ := b.Take(context.Background(), "hold", 10)
	defer hold()
	_, busy := b.Take(context.Background(), "zip", 1)
	w = httptest.NewRecorder()
	if !Answer(w, busy, 507) || w.Code != 503 || w.Header().Get("Retry-After") != "5" {
		t.Errorf("Answer(busy) = %d, Retry-After %q; want 503, 5", w.Code, w.Header().Get("Retry-After"))
	}
	if Answer(httptest.NewRecorder(), errors.New("other"), 507) {
		t.Error("Answer took an error that is no refusal")
	}
}

func TestNilBudgetGrantsAll(t *testing.T) {
	var b *Budget
	r, err := b.Take(context.Background(), "x", 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	r()
}
