package sysd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The server's notifications reach bonesync's PID 1 as typed messages,
// with the sender's pid, through the same calls that notify systemd.
func TestManagerReadsNotifications(t *testing.T) {
	m, err := Manage(filepath.Join(t.TempDir(), "notify"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, kv := range m.Env(2 * time.Second) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got := make(chan Message, 10)
	go func() {
		for {
			msg, err := m.Read()
			if err != nil {
				return
			}
			got <- msg
		}
	}()
	Phase("benchmarking")
	Ready(map[string]string{"https": "127.0.0.1:8443", "ssh": "127.0.0.1:2222"})
	Status("serving")
	stop := Watchdog(func() bool { return true })
	defer stop()
	RequestEMMCFlash()
	Stopping()
	var seen Message
	deadline := time.After(5 * time.Second)
	for !(seen.Phase != "" && seen.Ready && seen.Status != "" && seen.Watchdog && seen.Stopping && seen.EMMC != "") {
		select {
		case msg := <-got:
			if msg.Pid != os.Getpid() {
				t.Errorf("message from pid %d, want %d", msg.Pid, os.Getpid())
			}
			seen.Phase += msg.Phase
			seen.Status += msg.Status
			seen.Ready = seen.Ready || msg.Ready
			if msg.Ready && (msg.Listening["https"] != "127.0.0.1:8443" || msg.Listening["ssh"] != "127.0.0.1:2222") {
				t.Errorf("READY came with the addresses %v", msg.Listening)
			}
			seen.Watchdog = seen.Watchdog || msg.Watchdog
			seen.Stopping = seen.Stopping || msg.Stopping
			seen.EMMC += msg.EMMC
		case <-deadline:
			t.Fatalf("after 5 s: %+v", seen)
		}
	}
	if seen.Phase != "benchmarking" || seen.Status != "serving" || seen.EMMC != "flash" {
		t.Errorf("phase %q, status %q, emmc %q", seen.Phase, seen.Status, seen.EMMC)
	}
}
