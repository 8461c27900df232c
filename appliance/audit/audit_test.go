package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/logtext"
)

// However many events come (a flood of failed logins from many
// addresses), the record stays within two files of MaxFile and keeps the
// newest; a line cut by a power cut is skipped, not the whole record.
func TestBounded(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for i := range n {
		if err := l.Record(Event{Kind: LoginFailed, User: "admin", Addr: fmt.Sprintf("10.0.%d.%d", i/256, i%256), Proto: "https"}); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, _ := e.Info()
		total += fi.Size()
		if fi.Size() > MaxFile {
			t.Errorf("%s is %d bytes, over %d", e.Name(), fi.Size(), MaxFile)
		}
	}
	if len(entries) != 2 || total > 2*MaxFile {
		t.Errorf("%d files, %d bytes after %d events", len(entries), total, n)
	}
	recent, err := l.Recent(3)
	if err != nil || len(recent) != 3 || recent[0].Addr != "10.0.78.31" || recent[1].Addr != "10.0.78.30" {
		t.Errorf("the newest events: %+v %v", recent, err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2026-12-02T00:00:00Z","kind":"log`)
	f.Close()
	l.Record(Event{Kind: Admin, User: "admin", What: "after the cut"})
	if recent, _ := l.Recent(2); len(recent) != 2 || recent[0].What != "after the cut" || recent[1].Addr != "10.0.78.31" {
		t.Errorf("after a cut line: %+v", recent)
	}
}

// A sync client's every request is a login: one is recorded per user,
// address and protocol every LoginEvery.
func TestLoginsOncePerWhile(t *testing.T) {
	l, _ := Open(t.TempDir())
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	l.Now = func() time.Time { return now }
	for range 100 {
		l.LoggedIn("alice", "192.168.1.20", "https")
	}
	l.LoggedIn("alice", "192.168.1.20", "sftp")
	l.LoggedIn("alice", "192.168.1.21", "https")
	now = now.Add(LoginEvery)
	l.LoggedIn("alice", "192.168.1.20", "https")
	got, _ := l.Recent(100)
	if len(got) != 4 || got[0].Kind != Login || got[0].Time != now || got[3].Proto != "https" || got[2].Proto != "sftp" {
		t.Errorf("recorded %d logins: %+v", len(got), got)
	}
	var nilLog *Log
	if nilLog.Record(Event{Kind: Admin}) != nil || nilLog.LoggedIn("a", "b", "c") != nil {
		t.Error("a nil record failed")
	}
}

// A client names itself what it likes: a 300 KiB user name is cut, not
// written whole (two of them rotated the whole record away), and its
// escape codes are escaped as in the log.
func TestHugeNamesCut(t *testing.T) {
	l, _ := Open(t.TempDir())
	l.Record(Event{Kind: Admin, User: "admin", What: "kept"})
	for range 3 {
		l.Note(Event{Kind: LoginFailed, User: "\x1b[2J" + strings.Repeat("x", 300<<10), Addr: strings.Repeat("1", 1000), Proto: "https"})
	}
	l.Flush()
	got, err := l.Recent(10)
	if err != nil || len(got) != 4 || got[3].What != "kept" {
		t.Fatalf("after huge names: %d events, %v", len(got), err)
	}
	// ESC is one byte in and four out: 125 of the name's bytes are shown.
	if u := got[0].User; !strings.HasPrefix(u, `\x1b[2Jxxx`) || !strings.HasSuffix(u, fmt.Sprintf("…(+%d bytes)", 300<<10+4-(maxField-3))) {
		t.Errorf("user kept as %q", u)
	}
	if a := got[0].Addr; len(a) > maxField+logtext.Marker {
		t.Errorf("address kept as %d bytes", len(a))
	}
}

// The queue of events to write holds them cut: 256 failed logins with
// 500 KB names held 128 MB.
func TestQueueHoldsCut(t *testing.T) {
	l := &Log{dir: t.TempDir(), seen: map[string]time.Time{}, queue: make(chan queuedEvent, queued)} // no writer: the queue fills
	huge := strings.Repeat("x", 500<<10)
	for range queued + 10 {
		l.Note(Event{Kind: LoginFailed, User: huge, Addr: huge, Proto: huge, What: huge})
	}
	close(l.queue)
	held := 0
	for q := range l.queue {
		held += len(q.e.User) + len(q.e.Addr) + len(q.e.Proto) + len(q.e.What) + len(q.e.Kind)
	}
	if max := queued * (4*maxField + maxWhat + 5*logtext.Marker); held > max {
		t.Errorf("the queue holds %d bytes of text, over %d", held, max)
	}
	if l.dropped.Load() != 10 {
		t.Errorf("dropped %d events, want 10", l.dropped.Load())
	}
}

// Logins are keyed cut: the map of logins seen lately holds no long name.
func TestSeenKeyedCut(t *testing.T) {
	l, _ := Open(t.TempDir())
	huge := strings.Repeat("x", 500<<10)
	for i := range 100 {
		l.LoggedIn(huge, fmt.Sprint("10.0.0.", i), "https")
	}
	for k := range l.seen {
		if len(k) > 3*(maxField+logtext.Marker) {
			t.Fatalf("a login keyed by %d bytes", len(k))
		}
	}
	if got, _ := l.Recent(1000); len(got) != 100 {
		t.Errorf("recorded %d logins, want 100", len(got))
	}
	if got, _ := l.Recent(5); len(got) != 5 || got[0].Addr != "10.0.0.99" {
		t.Errorf("the newest 5: %+v", got)
	}
}
