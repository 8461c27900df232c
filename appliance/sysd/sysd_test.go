package sysd

import (
	"bytes"
	"fmt"
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
	if want := "warning: banned user=bob smith why=\"said \\\"x=1\\\"\" none=\"\"\nplain err=\"two\\nlines\"\n"; b.String() != want {
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
		log.Info(fmt.Sprintf("line %d", i))
	}
	log.Error("broken")
	lines := recent.Lines()
	if len(lines) != recentLines {
		t.Fatalf("kept %d lines, want %d", len(lines), recentLines)
	}
	if !strings.HasSuffix(lines[0], " line 51") || !strings.HasSuffix(lines[len(lines)-1], " error: broken") {
		t.Errorf("kept %q ... %q", lines[0], lines[len(lines)-1])
	}
	if !strings.Contains(out.String(), "line 0\n") {
		t.Error("the log itself lost a line")
	}
	// A message's own text is kept as it is, whatever it starts with.
	log.Info("<6> is a priority tag's form")
	if lines := recent.Lines(); !strings.HasSuffix(lines[len(lines)-1], " <6> is a priority tag's form") {
		t.Errorf("kept %q", lines[len(lines)-1])
	}
}

// roles are the box's ports as package listen names them, in order.
var roles = []string{"https", "http", "ssh"}
