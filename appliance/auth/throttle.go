package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Policy for wrong guesses at one target (an account, or a public link),
// from whatever addresses they come: the bans (bans.go) count per address,
// and an attacker with many addresses is held here instead.
const (
	// FreeGuesses is how many wrong guesses at one target are taken
	// without a delay (typos).
	FreeGuesses = 5
	// firstDelay is the wait after the FreeGuesses-th wrong guess; it
	// doubles with each further one, up to maxDelay.
	firstDelay = time.Second
	maxDelay   = 30 * time.Minute
	// targetSlots bounds the table: every account and link under attack
	// at once, at about 64 bytes each.
	targetSlots = 1024
)

// target is what a guess is at: an account by name, or a link by token.
// The two kinds are told apart, so that an SSH user named like a link
// cannot reach the link's count.
type target [32]byte

func accountTarget(name string) target { return sha256.Sum256([]byte("account\x00" + name)) }
func linkTarget(token string) target   { return sha256.Sum256([]byte("link\x00" + token)) }

// throttle counts wrong guesses per target in a table of fixed size: after
// FreeGuesses, each further guess at the target must wait firstDelay,
// doubled for each wrong one since, and a guess that comes sooner is
// refused at once (no hash is run for it, no goroutine waits). Past
// FreeGuesses one guess at a time is checked per target, so that guesses
// sent together count as much as guesses sent one after another.
// Failures are forgotten after a day without one.
type throttle struct {
	now func() time.Time

	mu sync.Mutex
	// entries hold no pointer (times are durations since base), so the
	// collector never scans the table: a thousand time.Time values would
	// be two thousand pointers it walks at every collection.
	entries *[targetSlots]targetEntry
	base    time.Time // the table's zero time, its first use
}

type targetEntry struct {
	key      target
	used     bool
	failures int
	pending  int           // guesses being checked
	last     time.Duration // the last wrong guess, since base
	until    time.Duration // no guess before this, since base
}

// at is now on the table's clock (monotonic, as time.Time's Sub is).
func (th *throttle) at(now time.Time) time.Duration {
	if th.entries == nil {
		th.entries, th.base = new([targetSlots]targetEntry), now
	}
	return now.Sub(th.base)
}

// delayAfter is the wait after n wrong guesses.
func delayAfter(n int) time.Duration {
	if n < FreeGuesses {
		return 0
	}
	d := firstDelay << min(n-FreeGuesses, 30)
	if d > maxDelay || d <= 0 {
		return maxDelay
	}
	return d
}

// begin reserves a guess at t. It refuses (with how long to wait) while
// t's delay runs, or while another guess at t is checked once the free
// guesses are spent, or when the table is full of targets under attack.
// The caller calls end with whether the guess was wrong.
func (th *throttle) begin(t target) (end func(wrong bool), wait time.Duration) {
	th.mu.Lock()
	defer th.mu.Unlock()
	now := th.now()
	e := th.find(t, now)
	if e == nil {
		return nil, firstDelay
	}
	if left := e.until - th.at(now); left > 0 {
		return nil, left
	}
	if e.failures+e.pending >= FreeGuesses && e.pending > 0 {
		return nil, firstDelay
	}
	e.pending++
	var once sync.Once
	return func(wrong bool) {
		once.Do(func() { th.end(t, wrong) })
	}, 0
}

// end records how a guess begun at t came out.
func (th *throttle) end(t target, wrong bool) {
	th.mu.Lock()
	defer th.mu.Unlock()
	now := th.now()
	e := th.find(t, now)
	if e == nil {
		return
	}
	if e.pending > 0 {
		e.pending--
	}
	if wrong {
		th.fail(e, now)
	}
}

// failed records a wrong guess at t that was let through its delay
// without begin (a trusted one): it counts all the same.
func (th *throttle) failed(t target) {
	th.mu.Lock()
	defer th.mu.Unlock()
	now := th.now()
	if e := th.find(t, now); e != nil {
		th.fail(e, now)
	}
}

func (th *throttle) fail(e *targetEntry, now time.Time) {
	e.failures++
	e.last = th.at(now)
	e.until = e.last + delayAfter(e.failures)
}

// wait is how long a guess at t must wait now.
func (th *throttle) wait(t target) time.Duration {
	th.mu.Lock()
	defer th.mu.Unlock()
	now := th.at(th.now())
	for i := range th.entries {
		if e := &th.entries[i]; e.used && e.key == t {
			return max(e.until-now, 0)
		}
	}
	return 0
}

// find returns t's entry, making one if there is none. A new one takes a
// free place, or one whose failures are forgotten, or else the one with
// the fewest failures (the oldest of those), never one being checked: to
// push a target under attack out, an attacker must first make as many
// wrong guesses at each of a thousand others. nil: every place is being
// checked.
func (th *throttle) find(t target, now time.Time) *targetEntry {
	var victim *targetEntry
	at := th.at(now)
	for i := range th.entries {
		e := &th.entries[i]
		if e.used && at-e.last > forgetAfter && e.pending == 0 {
			*e = targetEntry{} // forgotten
		}
		if e.used && e.key == t {
			return e
		}
		if e.pending > 0 {
			continue
		}
		if victim == nil || !e.used && victim.used ||
			e.used == victim.used && (e.failures < victim.failures ||
				e.failures == victim.failures && e.last < victim.last) {
			victim = e
		}
	}
	if victim != nil {
		*victim = targetEntry{key: t, used: true}
	}
	return victim
}
