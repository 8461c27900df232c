package main

// Every attack at once (issue 36's combined run, bench/flood.Hostile) on
// a box of its own, cloned from TestSync's state after the other tests
// wrote it: the legitimate client is answered throughout, the server
// stays under its 48 MB ceiling, and it starts again on the state the
// attack left.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/bench/flood"
)

func testHostile(t *testing.T, b *box) {
	state, files := cloneState(t, b.state), t.TempDir()
	add := exec.Command(built(t), "user", "-state", state, "add", "mallory")
	add.Stdin = strings.NewReader("mallory-password\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	k := startBox(t, state, "-files", files)
	k.password = b.password
	h := flood.Hostile{HTTPS: k.https, SSH: k.ssh, User: "mallory", Password: "mallory-password", First: 7000}
	if err := h.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	unloaded, failed := legitRounds(k, 20, nil)
	if failed > 0 {
		t.Fatalf("%d of 20 legitimate requests failed with no attack", failed)
	}
	cpu0 := procCPU(k.cmd.Process.Pid)
	stopAttack, err := h.Attacker(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the sessions opened, every part under way
	stop := time.After(20 * time.Second)
	loaded, failed := legitRounds(k, 1<<20, stop)
	t.Logf("server CPU during the attack: %v", procCPU(k.cmd.Process.Pid)-cpu0)
	counts, err := stopAttack()
	if err != nil {
		t.Fatal(err)
	}
	pid := k.cmd.Process.Pid
	hwm := statusKB(t, pid, "VmHWM")
	p95, p95u := measure.Percentile(loaded, 95), measure.Percentile(unloaded, 95)
	t.Logf("legitimate requests: %d answered under the attack, %d failed; p95 %v under it, %v before (%.1fx)",
		len(loaded), failed, p95.Round(time.Millisecond), p95u.Round(time.Millisecond), float64(p95)/float64(p95u))
	t.Logf("the attack's answers: %s", counts)
	var status struct {
		Memory *budget.Status `json:"memory"`
	}
	_, page := k.curl("-u", k.admin(), "https://localhost:"+k.port(k.https)+"/status.json")
	if err := json.Unmarshal([]byte(page), &status); err != nil || status.Memory == nil {
		t.Errorf("/status.json has no memory: %v %.200s", err, page)
	} else {
		t.Logf("the budget: %+v", status.Memory.Budget)
	}
	t.Logf("peak resident set: %.1f MB (now %.1f MB: %.1f anonymous, %.1f the binary's pages)", float64(hwm)/1000,
		float64(statusKB(t, pid, "VmRSS"))/1000, float64(statusKB(t, pid, "RssAnon"))/1000, float64(statusKB(t, pid, "RssFile"))/1000)
	if failed > 0 || len(loaded) == 0 {
		t.Errorf("%d legitimate requests failed under the attack (%d answered)", failed, len(loaded))
	}
	if hwm > 48000 {
		t.Errorf("peak resident set %d kB under the attack, over the 48 MB ceiling", hwm)
	}
	a := counts.Answers()
	if a["session 207"] != flood.HostileSessions || a["sftp 200"] != flood.HostileSFTP {
		t.Errorf("the held sessions: %d TLS and %d SFTP opened, want %d and %d", a["session 207"], a["sftp 200"], flood.HostileSessions, flood.HostileSFTP)
	}
	for _, want := range []string{"put 403", "query 207", "preview 404", "login 431"} {
		if a[want] == 0 {
			t.Errorf("no %q among the attack's answers: a part did not reach the server", want)
		}
	}
	for k, n := range a {
		if strings.HasPrefix(k, "put ") && k != "put 403" || strings.HasPrefix(k, "preview 2") {
			t.Errorf("%d answers %q: the server took what it must refuse", n, k)
		}
	}
	// The state the attack left: the server starts on it, and serves.
	k.stop()
	again := startBox(t, state, "-files", files)
	again.password = b.password
	if err := (legit{again}).https(); err != nil {
		t.Errorf("the server restarted on the attack's state: %v", err)
	}
}

// legitRounds is the household's client under the attack: a full TLS
// handshake and PROPFIND, then an SFTP login and listing, n rounds or
// until stop. It returns each round's time and how many failed.
func legitRounds(k *box, n int, stop <-chan time.Time) (took []time.Duration, failed int) {
	l := legit{k}
	for i := 0; i < n; i++ {
		select {
		case <-stop:
			return took, failed
		default:
		}
		start := time.Now()
		err := l.https()
		if err == nil {
			conn, c, serr := l.sftp()
			if err = serr; err == nil {
				c.Close()
				conn.Close()
			}
		}
		if err != nil {
			failed++
			k.t.Logf("legitimate round %d: %v", i+1, err)
		} else {
			took = append(took, time.Since(start))
		}
	}
	return took, failed
}

// procCPU is pid's user and system time (/proc/PID/stat, 10 ms ticks).
func procCPU(pid int) time.Duration {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return time.Duration(u+s) * 10 * time.Millisecond
}

// TestMain runs the hostile attack instead of the tests in the process
// that flood.Hostile.Attacker starts.
func TestMain(m *testing.M) {
	flood.AttackIfAsked()
	os.Exit(m.Run())
}
