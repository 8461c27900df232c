package sysd

import (
	"bytes"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/logtext"
)

// notifySocket listens on a real unixgram NOTIFY_SOCKET, as systemd does.
func notifySocket(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return c
}

func recv(t *testing.T, c *net.UnixConn, wait time.Duration) (string, bool) {
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(wait))
	n, err := c.Read(buf)
	if err != nil {
		return "", false
	}
	return string(buf[:n]), true
}

func TestNotifySequence(t *testing.T) {
	c := notifySocket(t)
	Status("benchmarking tls ecdsa-p384 X25519 2/13: 1 client, full")
	Ready(map[string]string{"ssh": "[::]:2222", "https": "[::]:443"})
	Status("serving")
	Stopping()
	want := []string{"STATUS=benchmarking tls ecdsa-p384 X25519 2/13: 1 client, full", "READY=1\nX_BONESYNC_LISTEN=https=[::]:443 ssh=[::]:2222", "STATUS=serving", "STOPPING=1"}
	for i, w := range want {
		got, ok := recv(t, c, time.Second)
		if !ok || got != w {
			t.Fatalf("message %d = %q, want %q", i, got, w)
		}
	}
}

func TestNoSystemdIsQuiet(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	Ready(nil) // must not panic or block
	if ln, err := Listeners(roles); ln != nil || err != nil {
		t.Errorf("Listeners() without LISTEN_FDS = %v, %v", ln, err)
	}
	if stop := Watchdog(func() bool { return true }); stop == nil {
		t.Error("Watchdog returned nil stop")
	}
}

// The watchdog is fed while the server is healthy, and stops when it is not.
func TestWatchdogStopsWhenWedged(t *testing.T) {
	c := notifySocket(t)
	t.Setenv("WATCHDOG_USEC", "100000") // 100 ms: pings every 50 ms
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	var healthy atomic.Bool
	healthy.Store(true)
	stop := Watchdog(healthy.Load)
	defer stop()
	for i := 0; i < 3; i++ {
		if got, ok := recv(t, c, 2*time.Second); !ok || got != "WATCHDOG=1" {
			t.Fatalf("ping %d while healthy = %q, %v", i, got, ok)
		}
	}
	healthy.Store(false) // wedged
	// Drain the pings queued while the test was held up, then one in
	// flight: a tick may have found the server healthy just before the
	// change and send a little later, on a busy machine. A watchdog that
	// kept pinging (every 50 ms) still fails below.
	for i := 0; i < 20; i++ {
		if _, ok := recv(t, c, time.Millisecond); !ok {
			break
		}
	}
	recv(t, c, 150*time.Millisecond)
	if got, ok := recv(t, c, 500*time.Millisecond); ok {
		t.Errorf("a wedged server still fed the watchdog: %q", got)
	}
}

// Each line's level is explicit: a syslog priority under the journal, a
// prefix on a console; not guessed from its words.
func TestLoggerLevels(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(&lineHandler{w: &b, journal: true, mu: &sync.Mutex{}})
	log.Info("serving HTTPS", "addr", ":443")
	log.Warn("login failed: webdav user \"bob\"")
	log.Error("cannot open the store")
	log.Info("an error in the words of an info line")
	log.Debug("not shown")
	want := "<6>serving HTTPS addr=:443\n<4>login failed: webdav user \"bob\"\n<3>cannot open the store\n<6>an error in the words of an info line\n"
	if b.String() != want {
		t.Errorf("journal lines:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	console := slog.New(&lineHandler{w: &b, mu: &sync.Mutex{}})
	console.With("user", "bob smith").Warn("banned", "why", `said "x=1"`, "none", "")
	console.Info("plain", "err", "two\nlines")
	if want := "warning: banned user=bob smith why=\"said \\\"x=1\\\"\" none=\"\"\nplain err=two\\nlines\n"; b.String() != want {
		t.Errorf("console lines %q, want %q", b.String(), want)
	}
}

// Unnamed sockets (no FileDescriptorName=, as LISTEN_FD_3...) take their
// roles in the order systemd passed them, every time.
func TestAssignUnnamedInOrder(t *testing.T) {
	var passed []namedListener
	var lns []net.Listener
	for i := 0; i < 3; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		lns = append(lns, ln)
		passed = append(passed, namedListener{fmt.Sprintf("LISTEN_FD_%d", 3+i), ln})
	}
	for run := 0; run < 20; run++ {
		got, err := assign(passed, roles)
		if err != nil {
			t.Fatal(err)
		}
		for i, role := range []string{"https", "http", "ssh"} {
			if got[role] != lns[i] {
				t.Fatalf("run %d: %s got socket %v, want the %d. passed", run, role, got[role].Addr(), i+1)
			}
		}
	}
	// Named ones keep their names whatever the order; the rest fill in.
	got, _ := assign([]namedListener{{"ssh", lns[0]}, {"LISTEN_FD_4", lns[1]}, {"LISTEN_FD_5", lns[2]}}, roles)
	if got["ssh"] != lns[0] || got["https"] != lns[1] || got["http"] != lns[2] {
		t.Errorf("named ssh first: %v", got)
	}
	if _, err := assign([]namedListener{{"https", lns[0]}, {"https", lns[1]}}, roles); err == nil {
		t.Error("two sockets named https were accepted")
	}
}

func TestRecentKeepsLastLines(t *testing.T) {
	var out strings.Builder
	var recent Recent
	log := NewLoggerKeeping(&out, &recent)
	for i := 0; i < 250; i++ {
		log.Info("line", "n", i)
	}
	log.Error("broken")
	lines := recent.Lines()
	if len(lines) != 251 {
		t.Fatalf("kept %d lines, want all 251: they fit in RecentBytes", len(lines))
	}
	if !strings.HasSuffix(lines[0], " line n=0") || !strings.HasSuffix(lines[len(lines)-1], " error: broken") {
		t.Errorf("kept %q ... %q", lines[0], lines[len(lines)-1])
	}
	// A message's own text is kept as it is, whatever it starts with.
	log.Info("<6> is a priority tag's form")
	if lines := recent.Lines(); !strings.HasSuffix(lines[len(lines)-1], " <6> is a priority tag's form") {
		t.Errorf("kept %q", lines[len(lines)-1])
	}
}

// A thousand lines each naming a 500 KB user keep RecentBytes at most, the
// newest; the log itself gets each line cut.
func TestRecentBoundedInBytes(t *testing.T) {
	var out countWriter
	var recent Recent
	log := NewLoggerKeeping(&out, &recent)
	huge := strings.Repeat("u", 500<<10)
	for i := range 1000 {
		log.Warn("login failed", "user", huge, "addr", fmt.Sprintf("10.0.%d.%d", i/256, i%256), "err", errors.New(huge))
	}
	lines := recent.Lines()
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	if size > RecentBytes || len(lines) < 10 {
		t.Errorf("kept %d lines, %d bytes; want at most %d bytes, of more than 10 lines", len(lines), size, RecentBytes)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "addr=10.0.3.231 ") {
		t.Errorf("the newest line kept is %.300q", last)
	}
	if max := 1000 * (MaxMessage + 3*(MaxValue+logtext.Marker) + 100); out.n > max {
		t.Errorf("1000 lines wrote %d bytes, over %d", out.n, max)
	}
	// The array under the lines does not grow with what was dropped.
	if c := cap(recent.lines); c > 4*len(lines)+64 {
		t.Errorf("the ring's array holds %d places for %d lines", c, len(lines))
	}
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// loginValue is a LogValuer, as a component might log a login.
type loginValue struct{ user, addr string }

func (l loginValue) LogValue() slog.Value {
	return slog.GroupValue(slog.String("user", l.user), slog.String("addr", l.addr))
}

// Every value is escaped and cut, whatever its kind and however deep it
// sits; the message too.
func TestLoggerCleans(t *testing.T) {
	huge := strings.Repeat("x", 500<<10)
	cut := strings.Repeat("x", MaxValue) + fmt.Sprintf("…(+%d bytes)", 500<<10-MaxValue)
	for _, c := range []struct {
		name string
		log  func(*slog.Logger)
		want string
	}{
		{"escape codes", func(l *slog.Logger) { l.Info("login", "user", "\x1b[31mred\x1b[0m") }, `login user=\x1b[31mred\x1b[0m`},
		{"a forged line", func(l *slog.Logger) { l.Info("login", "user", "bob\r\n<3>forged") }, `login user=bob\r\n<3>forged`},
		{"NUL", func(l *slog.Logger) { l.Info("login", "user", "a\x00b") }, `login user=a\x00b`},
		{"not UTF-8", func(l *slog.Logger) { l.Info("login", "user", "\xff\xfeé") }, `login user=\xff\xfeé`},
		{"500 KB", func(l *slog.Logger) { l.Info("login", "user", huge) }, "login user=" + cut},
		{"an error", func(l *slog.Logger) { l.Info("put", "err", fmt.Errorf("open %s: %w", "a\x1bb", errors.New("denied"))) }, `put err=open a\x1bb: denied`},
		{"a long error", func(l *slog.Logger) { l.Info("put", "err", errors.New(huge)) }, "put err=" + cut},
		{"a group", func(l *slog.Logger) { l.Info("login", slog.Group("req", "user", "\x1b]0;", "n", 3)) }, `login req.user=\x1b]0; req.n=3`},
		{"a LogValuer", func(l *slog.Logger) { l.Info("login", "who", loginValue{huge, "10.0.0.1"}) }, "login who.user=" + cut + " who.addr=10.0.0.1"},
		{"WithGroup", func(l *slog.Logger) { l.WithGroup("web").With("user", "a\nb").Info("login", "addr", "::1") }, `login web.user=a\nb web.addr=::1`},
		{"With", func(l *slog.Logger) { l.With("user", huge).Info("login") }, "login user=" + cut},
		{"an =", func(l *slog.Logger) { l.Info("login", "user", "a=\"b\"") }, `login user="a=\"b\""`},
		{"the message", func(l *slog.Logger) { l.Info("http: " + huge + "\n") }, "http: " + strings.Repeat("x", MaxMessage-6) + fmt.Sprintf("…(+%d bytes)", 500<<10+1-(MaxMessage-6))},
		{"a Stringer", func(l *slog.Logger) { l.Info("from", "addr", &net.TCPAddr{IP: net.IPv6loopback, Port: 1}) }, "from addr=[::1]:1"},
	} {
		var b strings.Builder
		c.log(NewLogger(&b))
		if got := strings.TrimSuffix(b.String(), "\n"); got != c.want {
			t.Errorf("%s: logged %.400q, want %.400q", c.name, got, c.want)
		}
	}
}

// What reaches the handler by the standard log package is cut and
// escaped as well: net/http's ErrorLog (front makes it with
// slog.NewLogLogger) and, once the server's logger is the default
// (server.Run), any library's log.Printf.
func TestStandardLogCleaned(t *testing.T) {
	var b strings.Builder
	l := NewLogger(&b)
	errorLog := slog.NewLogLogger(l.With("listener", "https").Handler(), slog.LevelWarn)
	errorLog.Printf("http: TLS handshake error from 127.0.0.1:1: %s", "\x1b[2J"+strings.Repeat("x", 500<<10))
	old := slog.Default()
	defer func() { slog.SetDefault(old); stdlog.SetOutput(os.Stderr); stdlog.SetFlags(stdlog.LstdFlags) }()
	slog.SetDefault(l)
	stdlog.Printf("library says %s\n", "\x1b]0;title\x07")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want 2: %.300q", len(lines), b.String())
	}
	if l := lines[0]; !strings.HasPrefix(l, `warning: http: TLS handshake error from 127.0.0.1:1: \x1b[2Jxxx`) || !strings.HasSuffix(l, " bytes) listener=https") || len(l) > 700 {
		t.Errorf("ErrorLog line %.700q", l)
	}
	if want := `library says \x1b]0;title\x07`; lines[1] != want {
		t.Errorf("log.Printf line %q, want %q", lines[1], want)
	}
}

// A line has at most maxLine bytes however many attributes it has.
func TestLineBounded(t *testing.T) {
	var b strings.Builder
	var args []any
	for i := range 100 {
		args = append(args, fmt.Sprint("k", i), strings.Repeat("v", 1000))
	}
	NewLogger(&b).Info("many", args...)
	NewLogger(&b).Info("many", slog.Group("g", args...))
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if len(l) > maxLine+logtext.Marker {
			t.Errorf("a line of %d bytes, over %d", len(l), maxLine+logtext.Marker)
		}
	}
}

// roles are the box's ports as package listen names them, in order.
var roles = []string{"https", "http", "ssh"}
