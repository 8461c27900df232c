// Package audit is the owner's record of who came in and what changed:
// logins (with protocol and address), failed logins, bans, admin actions,
// shares and updates. It is kept in the state directory as JSON lines, in
// two files of at most MaxFile bytes each (the older is dropped when the
// newer fills), so it never grows past 2 x MaxFile however long the box
// runs or however hard it is attacked; the admin page shows the newest.
// What a client may name (a user name, an address, a path) is escaped and
// cut as the server's log lines are (logtext.Clean) before it is queued,
// kept or written, so a line holds at most about a kilobyte.
//
// A sync client logs in with every request: a login is recorded once per
// user, address and protocol every LoginEvery, so that the record holds
// who and from where, not each request, and an idle box writes nothing.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bonesync/bonesync/appliance/logtext"
)

// The kinds of event.
const (
	Login       = "login"
	LoginFailed = "login failed"
	Banned      = "banned"
	Admin       = "admin"
	Share       = "share"
	Update      = "update"
)

// Event is one line of the record.
type Event struct {
	Time  time.Time `json:"time"`
	Kind  string    `json:"kind"`
	User  string    `json:"user,omitempty"`
	Addr  string    `json:"addr,omitempty"`
	Proto string    `json:"proto,omitempty"`
	What  string    `json:"what,omitempty"`
}

const (
	// MaxFile bounds each of the two files.
	MaxFile = 256 << 10
	// LoginEvery is how often the same login is recorded again.
	LoginEvery = 12 * time.Hour
	file       = "audit.log"
	maxSeen    = 4096
	maxWhat    = 512
	// maxField bounds user, address and protocol: a client sends what it
	// likes. The login door cuts a name at users.MaxName, which with
	// logtext's marker and a note ("(no key accepted)") fits whole.
	maxField = 128
	queued   = 256
)

// Dir is the record's folder under the state directory.
func Dir(state string) string { return filepath.Join(state, "audit") }

// Log is the record. A nil *Log records nothing.
type Log struct {
	// Now is the clock (time.Now if nil).
	Now func() time.Time

	dir   string
	mu    sync.Mutex
	seen  map[string]time.Time // logins recorded lately
	queue chan queuedEvent     // Note's, written by one goroutine
	// dropped counts the events Note could not queue; the next one that
	// is written says so.
	dropped atomic.Int64
	// Failed is told of a write that failed (the caller logs it); nil:
	// nobody is.
	Failed func(error)
}

// Open makes dir if needed and returns the record kept there.
func Open(dir string) (*Log, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	l := &Log{dir: dir, seen: map[string]time.Time{}, queue: make(chan queuedEvent, queued)}
	go l.writeQueued()
	return l, nil
}

// Note records e later, from a goroutine of the log's own, and never
// waits: for callers that hold a lock every request needs (the bans). An
// event that finds the queue full is dropped and counted.
func (l *Log) Note(e Event) {
	if l == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	select {
	case l.queue <- queuedEvent{e: clean(e)}: // a queue of 500 KB names held 128 MB
	default:
		l.dropped.Add(1)
	}
}

// queuedEvent is an event Note queued, or (done set) Flush's marker.
type queuedEvent struct {
	e    Event
	done chan struct{}
}

// Flush waits until every event noted before it is written.
func (l *Log) Flush() {
	if l == nil {
		return
	}
	done := make(chan struct{})
	l.queue <- queuedEvent{done: done}
	<-done
}

func (l *Log) writeQueued() {
	for q := range l.queue {
		if q.done != nil {
			close(q.done)
			continue
		}
		e := q.e
		if n := l.dropped.Swap(0); n > 0 {
			e.What = strings.TrimSpace(fmt.Sprintf("%s (and %d events before it not recorded: too many at once)", e.What, n))
		}
		if err := l.write(e); err != nil && l.Failed != nil {
			l.Failed(err)
		}
	}
}

// clean is e as it is kept: every field a client may name (a user name,
// a path in What) escaped and cut as the log's lines are (logtext.Clean),
// before it is queued, keyed or written.
func clean(e Event) Event {
	e.User, e.Addr, e.Proto = logtext.Clean(e.User, maxField), logtext.Clean(e.Addr, maxField), logtext.Clean(e.Proto, maxField)
	e.Kind, e.What = logtext.Clean(e.Kind, maxField), logtext.Clean(e.What, maxWhat)
	return e
}

func (l *Log) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Record appends e (its Time set if zero). A failure to write is returned
// for the caller to log; the event is then lost, the request it records is
// not refused.
func (l *Log) Record(e Event) error {
	if l == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	return l.write(clean(e))
}

// write appends e, cleaned already (clean once: a cut value cut again
// would say the wrong length).
func (l *Log) write(e Event) error {
	e.Time = e.Time.UTC().Truncate(time.Second)
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	name := filepath.Join(l.dir, file)
	if fi, err := os.Stat(name); err == nil && fi.Size()+int64(len(line))+1 > MaxFile {
		if err := os.Rename(name, name+".1"); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line = append(line, '\n')
	// A line a power cut left unfinished is ended, not continued.
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// LoggedIn records a login unless the same user logged in from the same
// address over the same protocol within LoginEvery.
func (l *Log) LoggedIn(user, addr, proto string) error {
	if l == nil {
		return nil
	}
	e := clean(Event{Kind: Login, User: user, Addr: addr, Proto: proto})
	key := e.User + "\x00" + e.Addr + "\x00" + e.Proto
	now := l.now()
	l.mu.Lock()
	last, ok := l.seen[key]
	if ok && now.Sub(last) < LoginEvery {
		l.mu.Unlock()
		return nil
	}
	if len(l.seen) >= maxSeen {
		clear(l.seen)
	}
	l.seen[key] = now
	l.mu.Unlock()
	e.Time = now
	return l.write(e)
}

// Recent is the newest n events, newest first. It reads both files and
// holds n events at most.
func (l *Log) Recent(n int) ([]Event, error) {
	if l == nil || n <= 0 {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []Event
	for _, name := range []string{file + ".1", file} {
		f, err := os.Open(filepath.Join(l.dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 4096), 64<<10)
		for sc.Scan() {
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) == nil { // a line cut by a power cut is skipped
				all = append(all, e)
			}
			if len(all) > n { // only the newest n are held, not both files
				all = all[1:]
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("audit: %s: %w", name, err)
		}
	}
	slices.Reverse(all)
	return all[:min(n, len(all))], nil
}
