package main

// bonesync under systemd's protocols, without systemd: a real unixgram
// NOTIFY_SOCKET and sockets handed over through a real exec (LISTEN_FDS).

import (
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSystemdProtocols(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	notifyPath := filepath.Join(dir, "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()

	// The sockets a bonesync.socket unit would pass: HTTPS, HTTP, SSH.
	var files []*os.File
	var addrs []string
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, _ := l.(*net.TCPListener).File()
		addrs = append(addrs, l.Addr().String())
		files = append(files, f)
		l.Close() // the duplicate in f stays open and listening
	}
	// LISTEN_PID must be the pid of the process that reads it: the shell
	// sets it to its own pid and then becomes bonesync with exec.
	cmd := exec.Command("sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, built(t), "serve", "-state", filepath.Join(dir, "state"), "-quick",
		"-https", "127.0.0.1:1", "-http", "127.0.0.1:1", "-ssh", "127.0.0.1:1") // flags that must be ignored
	cmd.ExtraFiles = files
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+notifyPath, "LISTEN_FDS=3", "LISTEN_FDNAMES=https:http:ssh",
		"WATCHDOG_USEC=2000000")
	// No WATCHDOG_PID: go-systemd then takes the watchdog as this process's.
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for _, f := range files {
		f.Close()
	}

	var got []string
	deadline := time.Now().Add(3 * time.Minute)
	buf := make([]byte, 4096)
	ready := false
	for !ready && time.Now().Before(deadline) {
		notify.SetReadDeadline(deadline)
		n, err := notify.Read(buf)
		if err != nil {
			t.Fatalf("no READY=1 (got %q): %v\n%s", got, err, logs.String())
		}
		msg := string(buf[:n])
		got = append(got, msg)
		lines := strings.Split(msg, "\n")
		if ready = lines[0] == "READY=1"; ready {
			// With it, where the server listens: the sockets systemd passed.
			if len(lines) < 2 || !strings.Contains(lines[1], "https="+addrs[0]) || !strings.Contains(lines[1], "ssh="+addrs[2]) {
				t.Errorf("READY=1 came with %q, want X_BONESYNC_LISTEN naming the passed sockets %v", lines[1:], addrs)
			}
		}
	}
	if len(got) < 4 || got[0] != "X_BONESYNC_PHASE=benchmarking" || !strings.HasPrefix(got[1], "STATUS=benchmarking tls ecdsa-p256") {
		t.Errorf("messages before READY=1 = %q, want the benchmarking phase, then STATUS lines of the benchmark", got)
	}
	// Served on the sockets systemd passed, not on the flags' addresses.
	c, err := tls.Dial("tcp", addrs[0], &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("HTTPS on the passed socket: %v\n%s", err, logs.String())
	}
	c.Close()
	if resp, err := http.Get("http://" + addrs[1] + "/ca.crt"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTP on the passed socket: %v", err)
	}
	if c, err := net.Dial("tcp", addrs[2]); err != nil {
		t.Fatalf("SSH on the passed socket: %v", err)
	} else {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 7)
		c.Read(b)
		c.Close()
		if string(b) != "SSH-2.0" {
			t.Errorf("the passed SSH socket answered %q", b)
		}
	}
	// The watchdog is fed while healthy: WATCHDOG_USEC=2s, a ping a second.
	sawPing := false
	for i := 0; i < 6 && !sawPing; i++ {
		notify.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, err := notify.Read(buf)
		if err != nil {
			break
		}
		sawPing = string(buf[:n]) == "WATCHDOG=1"
	}
	if !sawPing {
		t.Error("no WATCHDOG=1 from a healthy server")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	stopping := false
	for !stopping {
		notify.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := notify.Read(buf)
		if err != nil {
			t.Fatal("no STOPPING=1 after SIGTERM")
		}
		stopping = string(buf[:n]) == "STOPPING=1"
	}
	cmd.Wait()
}
