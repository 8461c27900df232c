package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/budget"
)

// testCopies sends a box's files, encrypted, to a second bonesync box over
// its WebDAV (here the running box b, under a user of its own, as a
// household's second box would be), kills a run with SIGKILL mid-way (a
// power cut), completes it with the next run, and restores the copy into
// a fresh state directory: every file's bytes and date come back.
func testCopies(t *testing.T, b *box) {
	b.addUser("copies", "copies-secret-1")
	src := t.TempDir()
	add := exec.Command(built(t), "user", "-state", src, "add", "alice")
	add.Stdin = strings.NewReader("alice-secret-1\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	// The source's files (put there as a restore of an older card would).
	want := map[string]time.Time{}
	for i := range 300 {
		p := filepath.Join(src, "files", "alice", "photos", fmt.Sprintf("%c", 'a'+i%20), fmt.Sprintf("img%03d.jpg", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		randomFile(t, p, 40000+i)
		when := time.Date(2018, 3, 4, 5, 6, 7, 0, time.UTC).Add(time.Duration(i) * time.Hour)
		os.Chtimes(p, when, when)
		rel, _ := filepath.Rel(filepath.Join(src, "files", "alice"), p)
		want[rel] = when
	}
	target := "davs://copies@localhost:" + b.port(b.https) + "/remote.php/dav/files/copies/from-the-first-box"
	conf := "copy_target = " + target + "\ncopy_target_password = copies-secret-1\n"
	os.WriteFile(filepath.Join(src, "bonesync.conf"), []byte(conf), 0o600)
	// The box's CA, as its owner would have recorded it (the run records it
	// itself otherwise: here it must match what the client trusts).
	os.MkdirAll(filepath.Join(src, "copies"), 0o700)
	ca, _ := os.ReadFile(b.caFile)
	os.WriteFile(filepath.Join(src, "copies", "target-ca.pem"), ca, 0o600)

	// A run killed mid-way.
	run := exec.Command(built(t), "copy", "-state", src, "run")
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := os.Create(filepath.Join(b.work, "copy-run.log"))
	run.Stdout, run.Stderr = out, out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 600; i++ {
		if _, body := b.curl("-u", "copies:copies-secret-1", "-X", "PROPFIND", "-H", "Depth: infinity",
			"https://localhost:"+b.port(b.https)+"/remote.php/dav/files/copies/"); strings.Count(body, "<d:response>") > 30 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	run.Process.Kill()
	run.Wait()
	log, _ := os.ReadFile(out.Name())
	password := ""
	for _, l := range strings.Split(string(log), "\n") {
		if f := strings.Fields(l); len(f) == 1 && len(f[0]) == 26 {
			password = f[0]
		}
	}
	if password == "" {
		t.Fatalf("the first run did not show the password:\n%s", log)
	}
	// The next run completes it, within the box's ceiling (the engine's
	// parts sized and drawn from a budget of its own: copies/engine/memory.go).
	out2, peak, err := runPeak(exec.Command(built(t), "copy", "-state", src, "run"))
	if err != nil || !strings.Contains(string(out2), "0 errors") {
		first, _ := os.ReadFile(filepath.Join(b.work, "copy-run.log"))
		t.Fatalf("the run after the kill: %v\n%s\nthe killed run:\n%.3000s", err, out2, first)
	}
	t.Logf("the copy run's peak resident set: %.1f MB", float64(peak)/1000)
	if peak > 48000 {
		t.Errorf("the copy run's peak resident set %d kB, over the 48 MB ceiling", peak)
	}
	// On the second box: names and contents encrypted.
	_, listing := b.curl("-u", "copies:copies-secret-1", "-X", "PROPFIND", "-H", "Depth: infinity",
		"https://localhost:"+b.port(b.https)+"/remote.php/dav/files/copies/from-the-first-box/")
	// (Encrypted names are base32hex, 26 letters and digits or more: any
	// short run of letters may appear in one by chance, a whole clear
	// path segment or a ".jpg" cannot.)
	for _, clear := range []string{"/alice/", "/photos/", ".jpg"} {
		if strings.Contains(listing, clear) {
			t.Errorf("%q in clear on the target:\n%.600s", clear, listing)
		}
	}
	// Unchanged: nothing sent.
	if out, err := exec.Command(built(t), "copy", "-state", src, "run").CombinedOutput(); err != nil || !strings.Contains(string(out), ": 0 files sent") {
		t.Errorf("an unchanged run: %v\n%s", err, out)
	}
	// Restored into a fresh state directory, the password typed in.
	fresh := t.TempDir()
	os.WriteFile(filepath.Join(fresh, "bonesync.conf"), []byte(conf), 0o600)
	os.MkdirAll(filepath.Join(fresh, "copies"), 0o700)
	os.WriteFile(filepath.Join(fresh, "copies", "target-ca.pem"), ca, 0o600)
	restore := exec.Command(built(t), "copy", "-state", fresh, "restore")
	restore.Stdin = strings.NewReader(password + "\n")
	if out, err := restore.CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	for rel, when := range want {
		a, b := filepath.Join(src, "files", "alice", rel), filepath.Join(fresh, "files", "alice", rel)
		if sum(t, a) != sum(t, b) {
			t.Errorf("%s: restored bytes differ", rel)
		}
		if fi, err := os.Stat(b); err != nil || !fi.ModTime().Equal(when) {
			t.Errorf("%s: restored dated %v, want %v", rel, fi.ModTime(), when)
		}
	}
	testCopyHostKeyChange(t, b, src)
}

// testCopyHostKeyChange moves the copies of src (whose first copy was
// made) to a second target, the box's SFTP server: its host key is pinned
// beside the first target's, and no new password is made (the box's one
// is every target's). Then the pinned key is another than the one the
// target offers, as when the target's keys are made again: the run fails
// saying both fingerprints and how to accept the new one, `copy
// accept-key` shows them and on a yes pins the target's key, and the
// next run goes on.
func testCopyHostKeyChange(t *testing.T, b *box, src string) {
	target := "sftp://copies@127.0.0.1:" + b.port(b.ssh) + "/from-the-first-box-by-sftp"
	os.WriteFile(filepath.Join(src, "bonesync.conf"), []byte("copy_target = "+target+"\ncopy_target_password = copies-secret-1\n"), 0o600)
	copyRun := func() (string, error) {
		out, err := exec.Command(built(t), "copy", "-state", src, "run").CombinedOutput()
		return string(out), err
	}
	if out, err := copyRun(); err != nil || strings.Contains(out, "password is") || !strings.Contains(out, " 0 errors") {
		t.Fatalf("the first run to a second target: %v\n%s", err, out)
	}
	knownHosts := filepath.Join(src, "copies", "known_hosts")
	pinned, _ := os.ReadFile(knownHosts)
	if !strings.Contains(string(pinned), "[127.0.0.1]:"+b.port(b.ssh)+" ") {
		t.Fatalf("the second target's host key is not pinned:\n%s", pinned)
	}
	os.WriteFile(knownHosts, []byte("[127.0.0.1]:"+b.port(b.ssh)+" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMq0nSqa1X5C5mGN6vkhyZ4Q0vbC0cEavmDH2jpInTdw\n"), 0o600)
	out, err := copyRun()
	if err == nil || !strings.Contains(out, "offers another host key") || !strings.Contains(out, "bonesync copy accept-key") {
		t.Fatalf("a run after the target's key changed: %v\n%s", err, out)
	}
	accept := exec.Command(built(t), "copy", "-state", src, "accept-key")
	accept.Stdin = strings.NewReader("yes\n")
	shown, err := accept.CombinedOutput()
	if err != nil || !strings.Contains(string(shown), "pinned:  SHA256:") || !strings.Contains(string(shown), "offered: SHA256:") || !strings.Contains(string(shown), "accepted") {
		t.Fatalf("copy accept-key: %v\n%s", err, shown)
	}
	if now, _ := os.ReadFile(knownHosts); !strings.Contains(string(pinned), string(now)) {
		t.Errorf("the key accepted is not the target's:\n%s\nwas pinned at the first run:\n%s", now, pinned)
	}
	if out, err := copyRun(); err != nil || !strings.Contains(out, " 0 errors") {
		t.Fatalf("the run after the new key was accepted: %v\n%s", err, out)
	}
}

// runPeak runs cmd to its end and returns its output and its peak
// resident set (VmHWM, in kB), read from /proc as it runs: VmHWM only
// grows, and the last reading is at most a few milliseconds before the
// end. (The kernel's count for a child, rusage, would start from this
// test's own resident set: Go starts a child with vfork.)
func runPeak(cmd *exec.Cmd) ([]byte, int64, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	for {
		if b, err := os.ReadFile(status); err == nil {
			if kb, err := budget.ParseKB(b, "VmHWM"); err == nil { // none once it has ended
				peak = max(peak, kb)
			}
		}
		select {
		case err := <-done:
			return out.Bytes(), peak, err
		case <-time.After(5 * time.Millisecond):
		}
	}
}
