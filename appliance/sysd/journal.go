package sysd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// Recent keeps the last lines logged, with their time.
type Recent struct {
	mu    sync.Mutex
	lines []string
	next  int
}

// recentLines is how many lines Recent keeps.
const recentLines = 200

func (r *Recent) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < recentLines {
		r.lines = append(r.lines, line)
		return
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % recentLines
}

// Lines returns the lines kept, oldest first.
func (r *Recent) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}

type lineHandler struct {
	w       io.Writer
	prefix  string // before every line (PID 1's "bonesync: ")
	journal bool
	mu      *sync.Mutex
	attrs   []slog.Attr
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
	b.WriteString(strings.ReplaceAll(r.Message, "\n", " "))
	add := func(a slog.Attr) bool {
		// A value is quoted only where it would be misread: empty, or
		// holding a line break or an "=". Words and quotes stay as
		// they are, for the person reading the console.
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, "=\n") || v == "" {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	text := b.String()
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

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

// WithGroup is not used: keys stay flat.
func (h *lineHandler) WithGroup(string) slog.Handler { return h }
