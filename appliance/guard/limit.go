package guard

import (
	"context"
	"time"
)

// Limiter caps the number of handshakes in flight. TLS and SSH share one, so
// the cap holds for the box as a whole.
type Limiter struct {
	slots chan struct{}
	wait  time.Duration
}

// NewLimiter allows n handshakes at once; a new connection waits at most
// wait for a slot, then is dropped.
func NewLimiter(n int, wait time.Duration) *Limiter {
	return &Limiter{slots: make(chan struct{}, max(1, n)), wait: wait}
}

// Acquire waits for a slot; it returns false if none came free in time. On
// true the caller must call Release.
func (l *Limiter) Acquire(ctx context.Context) bool {
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// Release frees a slot taken by Acquire.
func (l *Limiter) Release() { <-l.slots }

// InFlight is the number of handshakes now under way.
func (l *Limiter) InFlight() int { return len(l.slots) }
