package main

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name with a space and a parenthesis, as nginx's are not but
	// any process's may be.
	line := "4242 (nginx: a (b)) S 17 4242 4242 0 -1 4194624 100 0 0 0 123 45 6 7 20 0 1 0 99 1000 50"
	s, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := stat{ppid: 17, utime: 123, stime: 45, cutime: 6, cstime: 7}
	if s != want {
		t.Errorf("parseStat = %+v, want %+v", s, want)
	}
	if _, err := parseStat("4242 (x) S 1 2"); err == nil {
		t.Error("parseStat accepted a short line")
	}
}

func TestSourcesAtMostFourEach(t *testing.T) {
	var s sources
	seen := map[string]int{}
	for range 4000 {
		ip := s.next()
		if !ip.IsLoopback() {
			t.Fatalf("source %v is not loopback", ip)
		}
		seen[ip.String()]++
	}
	for ip, n := range seen {
		if n > 4 {
			t.Fatalf("source %s used %d times, want at most 4 (bonesync bans at 5 failures)", ip, n)
		}
	}
	if seen[net.IPv4(127, 0, 0, 1).String()] != 0 {
		t.Error("127.0.0.1 used as a source")
	}
}

func TestRatio(t *testing.T) {
	if got := ratio(1, 2); got != "0.50×" {
		t.Errorf("ratio(1, 2) = %q", got)
	}
	if got := ratio(1, 0); got != "–" {
		t.Errorf("ratio(1, 0) = %q", got)
	}
}

func TestMarkdownHasRatios(t *testing.T) {
	f := func(rate float64, cpu time.Duration) figures {
		return figures{N: 100, Rate: rate, P50: time.Millisecond, P95: 2 * time.Millisecond, CPU: cpu}
	}
	r := &results{
		Clients: 8, Dur: 10 * time.Second, Warm: time.Second, FileBytes: 1172,
		HTTPS: []httpsResult{{Key: "ecdsa-p256", Full: pair{f(200, 100*time.Millisecond), f(100, 200*time.Millisecond)}}},
		SSH:   &sshResult{Err: "sshd exited"},
		ARM: &armResult{Rows: []armRow{{Key: "rsa-2048", Mode: "full", Go: 80, GoStd: 120, Nginx: 20, RefGo: 82.4}},
			Bulk: []armBulk{{Suite: "TLS_CHACHA20_POLY1305_SHA256", HTTP: "HTTP/1.1", Go: 30, GoStd: 60, Ngx: 12}}, ChosenGo: "TLS_CHACHA20_POLY1305_SHA256",
			Profiles: []armProfile{topFunctions("a handshake", map[string]float64{"fe8Mul": 7e6, "block": 3e6, "gone": 1e6}, map[string]float64{"fe8Mul": 1e6, "block": 1e6, "base only": 2e6}, 2)}},
	}
	var b strings.Builder
	r.markdown(&b)
	out := b.String()
	for _, want := range []string{
		"| **bonesync / nginx** | **0.50×** |", // rate
		"**2.00×**",                            // CPU per connection
		"| rsa-2048 | full | 80.00 | 120.00 | 1.50× | 20.00 | **4.00×** |",
		"| TLS_CHACHA20_POLY1305_SHA256 | HTTP/1.1 | 30.0 | 60.0 | 2.00× | 12.0 | **2.50×** |",
		// (7-1)/2 = 3 M of (6+2+1-2)/2 = 3.5 M in all, the largest first
		"a handshake: 3.50 million in all",
		"| `fe8Mul` | 3.000 | 85.7% |\n| `block` | 1.000 | 28.6% |\n| `gone` | 0.500 | 14.3% |",
		"the servers chose: bonesync TLS_CHACHA20_POLY1305_SHA256,",
		"1-1.5 cycles per instruction",
		"sshd exited",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// Another process's CPU clock reads what its /proc stat says, to the
// nanosecond instead of the 10 ms tick.
func TestProcessCPU(t *testing.T) {
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer busy.Wait()
	defer busy.Process.Kill()
	time.Sleep(300 * time.Millisecond)
	st, err := readStat(busy.Process.Pid) // first: the clock only grows
	if err != nil {
		t.Fatal(err)
	}
	clock, err := processCPU(busy.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	ticks := time.Duration(st.utime+st.stime) * clockTick
	if clock <= 0 || clock < ticks || clock > ticks+time.Second {
		t.Errorf("CPU clock %v, /proc stat %v: want the clock at or just above the ticks", clock, ticks)
	}
	if clock%clockTick == 0 {
		t.Errorf("CPU clock %v is a whole number of ticks", clock)
	}
}
