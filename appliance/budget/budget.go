// Package budget is the box's one owner of memory. The box promises a
// ceiling (Ceiling, the whole process resident), and two things keep it:
//
//   - the Go runtime's soft limit (Limit), set once at start from the
//     ceiling, which paces the collector so that garbage never takes the
//     room the work needs;
//   - a weighted admission in bytes (Budget), from which every costly
//     operation draws its estimate before it starts: an Argon2id hash, a
//     preview decoded whole, a calendar object parsed or expanded, a zip,
//     a SEARCH, a big PROPFIND, a copy run. An operation that would not fit
//     waits its turn for a bounded time and then gets ErrBusy (503 with
//     Retry-After); one that could never fit gets ErrTooLarge (413 or
//     507). No operation starts, decodes part of something and then fails
//     for want of memory.
//
// A feature added later draws from the same Budget, and so the ceiling
// holds without the feature knowing the others.
package budget

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// The box's memory, in bytes.
const (
	// Ceiling is what the whole process may hold resident: the binary's
	// pages, the runtime, every connection and what the Budget grants.
	Ceiling = 48 << 20
	// RuntimeLimit is the Go runtime's soft limit (debug.SetMemoryLimit):
	// the heap, stacks and the runtime's own, below the ceiling by the
	// binary's pages (about 20 MB resident on a PC, from a 26 MB image)
	// and what is not the runtime's. With the collector at GCPercent, 28
	// MiB let TestSync/memory reach 48.9 MB on a busy machine; 24 held it
	// at 45-47 MB until the previews' faster decoder and encoder (issue
	// 37), after which it peaked at 49.0-49.9 MB; at 22, 45.6-46.7.
	RuntimeLimit = 22 << 20
	// Admission is what the Budget grants at once, for the costly work:
	// room for an Argon2id hash (12 MiB) beside a small preview or a
	// calendar read, or one picture decoded whole (an old 19 MiB hash
	// takes it all). At 20 MiB a hash and a 1024-pixel preview ran
	// together and TestSync/memory peaked at 53.7 MB; at 16, 47.4 MB.
	Admission = 16 << 20
)

// Errors a Take returns; errors.Is finds them in a *Refusal.
var (
	// ErrTooLarge says the operation needs more than the whole budget:
	// it can never run here, and asking again will not help.
	ErrTooLarge = errors.New("needs more memory than the box has for it")
	// ErrBusy says the budget did not have the room in time: ask again
	// later (Retry-After).
	ErrBusy = errors.New("the box is busy with other work that takes memory")
)

// Refusal is a Take that was refused: what asked, for how much, and why.
type Refusal struct {
	Kind  string // what asked: "preview", "calendar", "zip"...
	Need  int64  // bytes asked for
	Total int64  // the budget's size
	Err   error  // ErrTooLarge, ErrBusy, or the context's error
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s: %v (asked %s of %s)", r.Kind, r.Err, mib(r.Need), mib(r.Total))
}

func (r *Refusal) Unwrap() error { return r.Err }

// ForNow reports whether err is a refusal that asking again may pass: the
// budget was busy, or the client went. Not one that could never fit.
func ForNow(err error) bool {
	var r *Refusal
	return errors.As(err, &r) && !errors.Is(err, ErrTooLarge)
}

// RetryAfter is how long a client refused with ErrBusy is told to wait.
const RetryAfter = 5 * time.Second

// Budget is a weighted admission in bytes, on x/sync's
// semaphore.Weighted: waiting takes are served in the order they came, so
// a large one is not passed over forever by small ones. A take waits at
// most Wait, and at most MaxWaiting wait at once (the rest are refused at
// once: a flood does not queue). Budget adds the refusals' kinds and the
// counts the status page shows.
type Budget struct {
	total      int64
	wait       time.Duration
	maxWaiting int64
	sem        *semaphore.Weighted
	waiting    atomic.Int64

	mu    sync.Mutex // the counts
	used  int64
	peak  int64
	kinds map[string]*KindStats
}

// Options tune a Budget; zero values take the defaults.
type Options struct {
	Wait       time.Duration // the longest a take waits (default 15 s)
	MaxWaiting int           // takes waiting at once (default 64)
}

// New is a budget of total bytes.
func New(total int64, o Options) *Budget {
	if o.Wait <= 0 {
		o.Wait = 15 * time.Second
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = 64
	}
	return &Budget{total: total, wait: o.Wait, maxWaiting: int64(o.MaxWaiting),
		sem: semaphore.NewWeighted(total), kinds: map[string]*KindStats{}}
}

// Take draws n bytes for an operation of the given kind, waiting for
// room until ctx ends or the budget's Wait passes, and returns the
// function that gives them back (call it once; later calls do nothing).
// A nil Budget grants everything: a part built without one (a test, a
// command-line tool) runs unbounded.
//
// The release of a large grant (a quarter of the budget or more) runs
// the collector first, so that the memory it freed is free before the
// next large operation touches its own, rather than both resident at
// once while the collector catches up.
func (b *Budget) Take(ctx context.Context, kind string, n int64) (release func(), err error) {
	return b.take(ctx, kind, n, true)
}

// Wait is Take without the budget's own deadline and queue cap (the
// context's deadline still holds), for work that has a queue of its own in
// front and must not be refused: the login door's Argon2id hashes, one
// at a time. Work that needs more than the whole budget (an old 19 MiB
// hash) takes the whole budget: it runs alone.
func (b *Budget) Wait(ctx context.Context, kind string, n int64) (release func(), err error) {
	return b.take(ctx, kind, n, false)
}

// TryTake draws n bytes only if they are there now, for work that has a
// cheaper way when they are not (a download copied in smaller pieces).
func (b *Budget) TryTake(kind string, n int64) (release func(), ok bool) {
	if b == nil {
		return func() {}, true
	}
	n = max(n, 1)
	if n > b.total || !b.sem.TryAcquire(n) {
		return nil, false
	}
	return b.grant(kind, n), true
}

func (b *Budget) take(ctx context.Context, kind string, n int64, bounded bool) (release func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	n = max(n, 1)
	if !bounded {
		n = min(n, b.total)
	}
	if n > b.total {
		return nil, b.refuse(kind, n, ErrTooLarge)
	}
	if !b.sem.TryAcquire(n) { // room now, and no one waiting before it
		waiting := b.waiting.Add(1)
		defer b.waiting.Add(-1)
		if bounded {
			if waiting > b.maxWaiting {
				return nil, b.refuse(kind, n, ErrBusy)
			}
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, b.wait, ErrBusy)
			defer cancel()
		}
		if err := b.sem.Acquire(ctx, n); err != nil {
			return nil, b.refuse(kind, n, context.Cause(ctx))
		}
	}
	return b.grant(kind, n), nil
}

// grant counts a grant of n acquired and returns its release (once).
func (b *Budget) grant(kind string, n int64) (release func()) {
	b.count(kind, n)
	var once sync.Once
	return func() { once.Do(func() { b.give(kind, n) }) }
}

// refuse counts a refusal.
func (b *Budget) refuse(kind string, n int64, why error) error {
	b.mu.Lock()
	b.kind(kind).Refused++
	b.mu.Unlock()
	return &Refusal{Kind: kind, Need: n, Total: b.total, Err: why}
}

// count counts a grant of n.
func (b *Budget) count(kind string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.kind(kind)
	b.used += n
	b.peak = max(b.peak, b.used)
	k.Granted++
	k.InUse += n
	k.Peak = max(k.Peak, k.InUse)
}

// give gives n back, after a collection if it is large.
func (b *Budget) give(kind string, n int64) {
	if n >= b.total/4 {
		runtime.GC()
	}
	b.mu.Lock()
	b.used -= n
	b.kind(kind).InUse -= n
	b.mu.Unlock()
	b.sem.Release(n)
}

// kind is the counters of one kind; b.mu is held.
func (b *Budget) kind(name string) *KindStats {
	k, ok := b.kinds[name]
	if !ok {
		k = &KindStats{Kind: name}
		b.kinds[name] = k
	}
	return k
}

// KindStats are the counts of one kind of operation.
type KindStats struct {
	Kind    string `json:"kind"`
	Granted int64  `json:"granted"` // takes granted since start
	Refused int64  `json:"refused"` // takes refused (too large, busy, or the client gone)
	InUse   int64  `json:"in_use"`  // bytes held now
	Peak    int64  `json:"peak"`    // the most held at once
}

// Stats is the budget as it is now, for the status page and
// /status.json.
type Stats struct {
	Total   int64       `json:"total"`
	InUse   int64       `json:"in_use"`
	Peak    int64       `json:"peak"`
	Waiting int         `json:"waiting"`
	Kinds   []KindStats `json:"kinds"`
}

// Stats reports the budget's use.
func (b *Budget) Stats() Stats {
	if b == nil {
		return Stats{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Stats{Total: b.total, InUse: b.used, Peak: b.peak, Waiting: int(b.waiting.Load())}
	for _, k := range b.kinds {
		st.Kinds = append(st.Kinds, *k)
	}
	sort.Slice(st.Kinds, func(i, j int) bool { return st.Kinds[i].Kind < st.Kinds[j].Kind })
	return st
}

// mib formats bytes for people: "12.0 MiB".
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Status is the process's memory and the budget's use, as /status.json
// and the admin page show them.
type Status struct {
	Ceiling  int64 `json:"ceiling"`       // what the process may hold resident
	Resident int64 `json:"resident"`      // VmRSS now
	Peak     int64 `json:"resident_peak"` // VmHWM since the start
	Budget   Stats `json:"budget"`        // the costly work's grants
}

// Status reports the process's memory and the budget's use.
func (b *Budget) Status() Status {
	st := Status{Ceiling: Ceiling, Budget: b.Stats()}
	st.Resident, st.Peak = Resident()
	return st
}
