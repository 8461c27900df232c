package sysd

import (
	"bytes"
	"io"
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

// Journal wraps w so that each line carries a syslog priority prefix
// ("<3>", sd-daemon(3)), which journald reads as the line's priority:
// errors and WARNING lines stand out in `journalctl -p warning`.
func Journal(w io.Writer) io.Writer { return &prioritised{w: w} }

type prioritised struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (p *prioritised) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := p.buf[:i+1]
		if _, err := io.WriteString(p.w, Priority(string(line))+string(line)); err != nil {
			return 0, err
		}
		p.buf = p.buf[i+1:]
	}
}

// Priority is the sd-daemon prefix for a log line.
func Priority(line string) string {
	l := strings.ToLower(line)
	switch {
	case strings.Contains(l, "error") || strings.Contains(l, "failed") || strings.Contains(l, "damaged") || strings.Contains(l, "cannot"):
		return "<3>"
	case strings.Contains(l, "warning") || strings.Contains(l, "banned") || strings.Contains(l, "refused"):
		return "<4>"
	}
	return "<6>"
}
