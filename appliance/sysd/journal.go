package sysd

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/bonesync/bonesync/appliance/logtext"
)

// UnderJournal reports whether f is connected to the journal: systemd sets
// JOURNAL_STREAM to the device and inode of the stream it gave the service.
func UnderJournal(f *os.File) bool {
	dev, ino, ok := strings.Cut(os.Getenv("JOURNAL_STREAM"), ":")
	if !ok {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return strconv.FormatUint(uint64(st.Dev), 10) == dev && strconv.FormatUint(st.Ino, 10) == ino
}

// NewLogger is the server's logger: one line per record, the message and
// then any attributes as key=value. Every line's level is explicit: under
// the journal as its syslog priority prefix (sd-daemon(3): <3> error, <4>
// warning, <6> info, <7> debug), which `journalctl -p warning` filters on;
// on a terminal or the board's console as an "error: " or "warning: "
// prefix. Debug lines are dropped.
//
// Every line is bounded and printable, whatever a client sent: the
// message is cut at MaxMessage bytes and each value (a string, an error,
// a group's members, what a LogValuer gives) at MaxValue, with control
// characters escaped (logtext.Clean), so a component may log a client's
// user name or path without knowing how long it is or what it holds.
func NewLogger(w io.Writer) *slog.Logger {
	journal := false
	if f, ok := w.(*os.File); ok {
		journal = UnderJournal(f)
	}
	return slog.New(&lineHandler{w: w, journal: journal, mu: &sync.Mutex{}})
}

// NewConsoleLogger is PID 1's logger on the board's serial console: the
// lines of NewLogger, each after prefix ("bonesync: "), so that they stand
// apart from the kernel's and the server's on the same console.
func NewConsoleLogger(w io.Writer, prefix string) *slog.Logger {
	return slog.New(&lineHandler{w: w, prefix: prefix, mu: &sync.Mutex{}})
}

// NewLoggerKeeping is NewLogger that also keeps the last lines in recent,
// for the admin page.
func NewLoggerKeeping(w io.Writer, recent *Recent) *slog.Logger {
	l := NewLogger(w)
	l.Handler().(*lineHandler).recent = recent
	return l
}

// The bounds of a log line.
const (
	// MaxMessage bounds a record's message: ours, but it may quote a
	// library's words (net/http's ErrorLog) and a line of a child's.
	MaxMessage = 512
	// MaxValue bounds each attribute's value.
	MaxValue = 256
	// maxKey bounds a key (ours) and a group's name.
	maxKey = 64
	// maxLine bounds a whole line, however many attributes it has.
	maxLine = 4 << 10
)

// Recent keeps the newest lines logged, with their time, within
// RecentBytes: a flood of long lines keeps fewer of them, never more
// bytes. (The handler gives it lines of at most maxLine bytes.)
type Recent struct {
	mu    sync.Mutex
	lines []string // oldest first, from head on
	head  int
	size  int // bytes in lines[head:]
}

// RecentBytes is how many bytes of lines Recent keeps.
const RecentBytes = 64 << 10

func (r *Recent) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	r.size += len(line)
	for r.size > RecentBytes {
		r.size -= len(r.lines[r.head])
		r.lines[r.head] = "" // for the collector
		r.head++
	}
	// The kept lines moved to the front now and then, within the same
	// array: it never grows past twice the lines that fit.
	if r.head > len(r.lines)/2 {
		n := copy(r.lines, r.lines[r.head:])
		clear(r.lines[n:])
		r.lines, r.head = r.lines[:n], 0
	}
}

// Lines returns the lines kept, oldest first.
func (r *Recent) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines[r.head:])
}

type lineHandler struct {
	w       io.Writer
	prefix  string // before every line (PID 1's "bonesync: ")
	journal bool
	mu      *sync.Mutex
	attrs   string // WithAttrs's, written out: " key=value..."
	group   string // WithGroup's names, each followed by "."
	recent  *Recent
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	// The level once: the journal's priority tag, or a word on a console
	// and in the recent lines.
	tag, word := "<6>", ""
	switch {
	case r.Level >= slog.LevelError:
		tag, word = "<3>", "error: "
	case r.Level >= slog.LevelWarn:
		tag, word = "<4>", "warning: "
	}
	var b strings.Builder
	b.WriteString(logtext.Clean(r.Message, MaxMessage))
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.group, a)
		return b.Len() < maxLine
	})
	text := logtext.Clean(b.String(), maxLine)
	if h.recent != nil {
		h.recent.add(r.Time.Format("Jan 02 15:04:05 ") + word + text)
	}
	prefix := h.prefix + word
	if h.journal {
		prefix = tag
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, prefix+text+"\n")
	return err
}

// writeAttr writes a as " key=value", cleaned and cut; a group's members
// as " group.key=value", each cut alone.
func writeAttr(b *strings.Builder, group string, a slog.Attr) {
	v := a.Value.Resolve() // a LogValuer's value, which may be a group
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			group += logtext.Clean(a.Key, maxKey) + "."
		}
		for _, m := range v.Group() {
			if b.Len() >= maxLine {
				return
			}
			writeAttr(b, group, m)
		}
		return
	}
	if a.Key == "" && v.Any() == nil {
		return // slog's rule: an empty attribute is left out
	}
	b.WriteString(" ")
	b.WriteString(group)
	b.WriteString(logtext.Clean(a.Key, maxKey))
	b.WriteString("=")
	// A value is quoted only where it would be misread: empty, or
	// holding an "=". Words and quotes stay as they are, for the person
	// reading the console; line breaks are escaped already. A string
	// value is not copied, however long: Clean reads only as far as it
	// cuts. Any other is its text: an error's Error(), a number...
	s := logtext.Clean(v.String(), MaxValue)
	if s == "" || strings.Contains(s, "=") {
		s = `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
	}
	b.WriteString(s)
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	var b strings.Builder
	for _, a := range as {
		writeAttr(&b, h.group, a)
	}
	c.attrs = logtext.Clean(h.attrs+b.String(), maxLine)
	return &c
}

// WithGroup puts the keys of the attributes that follow under name, as
// "name.key".
func (h *lineHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group = h.group + logtext.Clean(name, maxKey) + "."
	return &c
}
