//go:build vm

package main

// The boot test: the image `make image` wrote, booted through U-Boot in
// qemu-system-arm (make test-boot). It is kept apart (build tag vm) as
// u-root keeps its VM tests: it takes minutes, not seconds.

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/firstlogin"
)

type serialLog struct {
	mu   sync.Mutex
	b    bytes.Buffer
	live io.Writer // the same, as it comes, to a file to follow
}

func (s *serialLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live != nil {
		s.live.Write(p)
	}
	return s.b.Write(p)
}

func (s *serialLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// vm is one boot of the card in QEMU.
type vm struct {
	cmd              *exec.Cmd
	console          io.WriteCloser
	log              *serialLog
	https, http, ssh string
	done             chan struct{}
	monitorPath      string
}

// freePort is a local port free now and not handed out before: the
// kernel may give a just-closed port again, and tests boot in parallel.
func freePort(t *testing.T) string {
	portsMu.Lock()
	defer portsMu.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(l.Addr().String())
		l.Close()
		if !portsGiven[p] {
			portsGiven[p] = true
			return p
		}
	}
}

var (
	portsMu    sync.Mutex
	portsGiven = map[string]bool{}
)

func bootVM(t *testing.T, card string) *vm { return startVM(t, card, false) }

// startVM boots the card; with reboots, a reboot of the guest resets the
// machine into U-Boot again, as on the board, where the default is that
// QEMU exits.
func startVM(t *testing.T, card string, reboots bool) *vm {
	return startVMWith(t, card, vmOptions{reboots: reboots})
}

// vmOptions are what a boot test adds to the machine.
type vmOptions struct {
	reboots bool
	// devices are more QEMU arguments (a USB controller and disk).
	devices []string
	// monitor opens QEMU's human monitor on a socket (vm.monitor), to
	// unplug and plug devices.
	monitor bool
	// cardAddr puts the card in that PCI slot (the eMMC test boots its
	// eMMC in the slot the board data names), else the first free one.
	cardAddr string
}

func startVMWith(t *testing.T, card string, o vmOptions) *vm {
	t.Helper()
	live, _ := os.OpenFile(filepath.Join(os.TempDir(), "bonesync-boot-"+t.Name()+".live.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	v := &vm{log: &serialLog{live: live}, https: freePort(t), http: freePort(t), ssh: freePort(t), done: make(chan struct{})}
	monitor := []string{"-monitor", "none"}
	if o.monitor {
		v.monitorPath = filepath.Join(t.TempDir(), "monitor.sock")
		monitor = []string{"-monitor", "unix:" + v.monitorPath + ",server,nowait"}
	}
	cardDev := "virtio-blk-pci,drive=sd"
	if o.cardAddr != "" {
		cardDev += ",addr=" + o.cardAddr
	}
	v.cmd = exec.Command("qemu-system-arm", "-M", "virt,highmem=off", "-cpu", "cortex-a15", "-smp", "1", "-m", "512",
		"-bios", "/usr/lib/u-boot/qemu_arm/u-boot.bin",
		"-drive", "if=none,file="+card+",format=raw,id=sd", "-device", cardDev,
		"-netdev", fmt.Sprintf("user,id=n0,hostfwd=tcp:127.0.0.1:%s-:443,hostfwd=tcp:127.0.0.1:%s-:80,hostfwd=tcp:127.0.0.1:%s-:22", v.https, v.http, v.ssh),
		"-device", "virtio-net-pci,netdev=n0", "-device", "virtio-rng-pci",
		"-display", "none", "-serial", "stdio")
	v.cmd.Args = append(v.cmd.Args, monitor...)
	v.cmd.Args = append(v.cmd.Args, o.devices...)
	if !o.reboots {
		v.cmd.Args = append(v.cmd.Args, "-no-reboot")
	}
	v.cmd.Stdout, v.cmd.Stderr = v.log, v.log
	var err error
	if v.console, err = v.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { v.cmd.Wait(); close(v.done) }()
	t.Cleanup(func() {
		v.cmd.Process.Kill()
		<-v.done
		if live != nil {
			live.Close()
		}
		os.WriteFile(filepath.Join(os.TempDir(), "bonesync-boot-"+t.Name()+".log"), []byte(v.log.String()), 0o644)
	})
	return v
}

// monitor runs one command on QEMU's human monitor and returns its answer.
func (v *vm) monitor(t *testing.T, command string) string {
	t.Helper()
	var c net.Conn
	var err error
	for i := 0; i < 50; i++ {
		if c, err = net.Dial("unix", v.monitorPath); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("QEMU monitor: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	var got bytes.Buffer
	buf := make([]byte, 4096)
	readPrompt := func() {
		for !strings.HasSuffix(got.String(), "(qemu) ") {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("QEMU monitor, after %q: %v\n%s", command, err, got.String())
			}
			got.Write(buf[:n])
		}
	}
	readPrompt()
	got.Reset()
	io.WriteString(c, command+"\n")
	readPrompt()
	return got.String()
}

// powerCut is a power cut: QEMU killed, the card as the last write left it.
func (v *vm) powerCut() {
	v.cmd.Process.Kill()
	<-v.done
}

// waitFor waits until the serial log matches re, and returns the match.
func (v *vm) waitFor(t *testing.T, re string, timeout time.Duration) []string {
	t.Helper()
	return v.waitAfter(t, 0, re, timeout)
}

// waitAfter is waitFor on the serial log from offset on.
func (v *vm) waitAfter(t *testing.T, offset int, re string, timeout time.Duration) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(v.log.String()[offset:]); m != nil {
			return m
		}
		select {
		case <-v.done:
			t.Fatalf("QEMU exited while waiting for %q; serial log:\n%s", re, tail(v.log.String()))
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Fatalf("no %q on the serial console in %v; serial log:\n%s", re, timeout, tail(v.log.String()))
	return nil
}

// checkFAT runs fsck.vfat -n on the card's boot partition.
func checkFAT(t *testing.T, card, when string) {
	t.Helper()
	part := filepath.Join(t.TempDir(), "boot.vfat")
	if out, err := exec.Command("dd", "if="+card, "of="+part, "bs=512", fmt.Sprintf("skip=%d", partStart), fmt.Sprintf("count=%d", bootSectors), "status=none").CombinedOutput(); err != nil {
		t.Fatalf("dd: %v %s", err, out)
	}
	if out, err := exec.Command("fsck.vfat", "-n", part).CombinedOutput(); err != nil {
		t.Errorf("%s, the boot partition's FAT is not clean: %v\n%s", when, err, out)
	}
}

func tail(s string) string {
	if len(s) > 6000 {
		return "...\n" + s[len(s)-6000:]
	}
	return s
}

func (v *vm) poweroff(t *testing.T) {
	t.Helper()
	io.WriteString(v.console, "\npoweroff\n")
	select {
	case <-v.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("no power-off in 3 minutes; serial log:\n%s", tail(v.log.String()))
	}
	if !strings.Contains(v.log.String(), "bonesync: powering off") {
		t.Errorf("QEMU exited without bonesync's clean power-off:\n%s", tail(v.log.String()))
	}
}

// status runs the console's status command and returns what it printed.
func (v *vm) status(t *testing.T) string {
	t.Helper()
	mark := len(v.log.String())
	io.WriteString(v.console, "\nstatus\n")
	v.waitAfter(t, mark, `watchdog: [^\n]*\n`, time.Minute)
	time.Sleep(time.Second) // the lines after it
	return v.log.String()[mark:]
}

// served fetches the CA over plain HTTP and checks the HTTPS chain against it
// as localhost; it returns the CA and the leaf's public key.
func (v *vm) served(t *testing.T) ([]byte, []byte) {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + v.http + "/ca.crt")
	if err != nil {
		t.Fatalf("GET /ca.crt: %v", err)
	}
	ca, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("/ca.crt is not a certificate: %q", ca)
	}
	c, err := tls.Dial("tcp", "127.0.0.1:"+v.https, &tls.Config{RootCAs: roots, ServerName: "localhost"})
	if err != nil {
		t.Fatalf("the served chain does not verify against /ca.crt: %v", err)
	}
	defer c.Close()
	return ca, c.ConnectionState().PeerCertificates[0].RawSubjectPublicKeyInfo
}

func (v *vm) sftp(t *testing.T, password string, commands ...string) (string, error) {
	dir := t.TempDir()
	batch, askpass := filepath.Join(dir, "batch"), filepath.Join(dir, "askpass")
	os.WriteFile(batch, []byte(strings.Join(commands, "\n")+"\n"), 0o600)
	os.WriteFile(askpass, []byte("#!/bin/sh\necho '"+password+"'\n"), 0o700)
	cmd := exec.Command("sftp", "-o", "BatchMode=no", "-o", "PreferredAuthentications=password", "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=60", "-P", v.ssh, "-b", batch, "admin@127.0.0.1")
	cmd.Env = append(os.Environ(), "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// flashCard is the image as a user flashes it onto a card larger than
// it (1 GiB, sparse), in a folder of the test's own, after checking the
// tools the test needs (QEMU's among them) are installed.
func flashCard(t *testing.T, img string, tools ...string) string {
	t.Helper()
	for _, tool := range append([]string{"qemu-system-arm"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed (scripts/install-test-deps.sh)", tool)
		}
	}
	card := filepath.Join(t.TempDir(), "sd.img")
	if out, err := exec.Command("cp", "--sparse=always", img, card).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if err := os.Truncate(card, 1<<30); err != nil {
		t.Fatal(err)
	}
	return card
}

// blankDisk is a blank (sparse) disk of size bytes beside card.
func blankDisk(t *testing.T, card, name string, size int64) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(card), name)
	f, err := os.Create(p)
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBoot(t *testing.T) {
	t.Parallel() // with TestUpdate: this one waits idle for minutes
	img := builtImage(t)
	start := time.Now()
	// Flash the very image onto a "card" larger than it, as a user would.
	card := flashCard(t, img, "sftp")

	v := bootVM(t, card)
	v.waitFor(t, `Starting kernel`, 2*time.Minute)
	v.waitFor(t, `bonesync: starting as PID 1`, 2*time.Minute)
	v.waitFor(t, `benchmarking proto=tls key=ecdsa-p256`, 3*time.Minute)
	// The power is cut as the first start writes admin's password into
	// FIRST-LOGIN.txt: the FAT stays clean (the file is rewritten in place,
	// never made), and the next start writes a password there again.
	v.waitFor(t, `first login: writing admin's password`, 10*time.Minute)
	v.cmd.Process.Kill()
	<-v.done
	checkFAT(t, card, "after a power cut while FIRST-LOGIN.txt was written")
	cut := v.log.String()
	v = bootVM(t, card)
	v.waitFor(t, `serving HTTPS`, 10*time.Minute)
	first := cut + v.log.String()
	for _, want := range []string{"Chosen HTTPS key:", "CA fingerprint (SHA-256):", "bonesync: growing the data partition to fill the card part=/dev/vda2", "method=dhcp", "announced over mDNS name=bonesync.local"} {
		if !strings.Contains(first, want) {
			t.Errorf("first boot's serial log lacks %q", want)
		}
	}
	for _, bad := range []string{"cannot mount the boot partition", "boot step failed", "config problem"} {
		if strings.Contains(first, bad) {
			t.Errorf("first boot's serial log reports a problem (%q):\n%s", bad, tail(first))
		}
	}
	password := regexp.MustCompile(`password ([a-z0-9-]{23})`).FindStringSubmatch(v.log.String())
	if password == nil {
		t.Fatalf("no admin password on the console:\n%s", tail(first))
	}
	t.Logf("first boot served HTTPS %v after QEMU started", time.Since(start).Round(time.Second))
	ca, leafKey := v.served(t)
	note := filepath.Join(t.TempDir(), "note.txt")
	os.WriteFile(note, []byte("written before a power-off\n"), 0o644)
	if out, err := v.sftp(t, password[1], "put "+note+" note.txt", "ls -l"); err != nil {
		t.Fatalf("SFTP into the booted image: %v\n%s", err, out)
	}
	v.poweroff(t)
	// Without admin_password on the card, the first start's password is
	// also in FIRST-LOGIN.txt there, for an owner without a serial cable.
	if note, err := exec.Command("mtype", "-i", card+"@@"+fmt.Sprint(partStart*512), "::/FIRST-LOGIN.txt").Output(); err != nil || !strings.Contains(string(note), "password: "+password[1]) {
		t.Errorf("FIRST-LOGIN.txt on the card (%v):\n%s", err, note)
	}
	checkFAT(t, card, "after FIRST-LOGIN.txt was written")

	// The same card again: same CA and key, no benchmark, the file kept.
	t1 := time.Now()
	v = bootVM(t, card)
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	second := v.log.String()
	if strings.Contains(second, "benchmarking") {
		t.Error("the second boot benchmarked again")
	}
	if strings.Contains(second, "growing") {
		t.Error("the second boot grew the partition again")
	}
	ca2, leafKey2 := v.served(t)
	if !bytes.Equal(ca, ca2) || !bytes.Equal(leafKey, leafKey2) {
		t.Error("the second boot serves another CA or key")
	}
	back := filepath.Join(t.TempDir(), "back.txt")
	if out, err := v.sftp(t, password[1], "get note.txt "+back); err != nil {
		t.Fatalf("SFTP get after reboot: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(back); string(got) != "written before a power-off\n" {
		t.Errorf("the file after a power-off = %q", got)
	}
	t.Logf("second boot served HTTPS %v after QEMU started", time.Since(t1).Round(time.Second))

	// Idle serving writes nothing to the card: its write counters, read
	// from the guest's /sys/block through the console, stay flat. The
	// start's own writes settle first: the kernel writes metadata from the
	// journal to its place within 30 s.
	time.Sleep(45 * time.Second)
	before := v.status(t)
	time.Sleep(2 * time.Minute)
	after := v.status(t)
	w1 := regexp.MustCompile(`card: +(\d+) writes, (\d+) sectors`).FindStringSubmatch(before)
	w2 := regexp.MustCompile(`card: +(\d+) writes, (\d+) sectors`).FindStringSubmatch(after)
	if w1 == nil || w2 == nil {
		t.Errorf("status shows no card write counters:\n%s", after)
	} else if w1[2] != w2[2] {
		t.Errorf("the idle box wrote to its card: %s sectors, then %s two minutes later", w1[2], w2[2])
	}
	// The server's look at the card's health at its start (package health):
	// its writes and no errors, from the kernel's log and ext4's count.
	if !regexp.MustCompile(`disk: +\S+.*: \S+ \S+ written in 7 days, .* since \d{4}-\d\d-\d\d; no errors`).MatchString(after) {
		t.Errorf("status does not show the card's health:\n%s", after)
	}
	if !regexp.MustCompile(`watchdog: armed .*, fed \d+s ago \(sysfs: Software Watchdog`).MatchString(after) ||
		!strings.Contains(after, "LEDs:    serving") {
		t.Errorf("status does not show the watchdog fed and read back from sysfs, and the server's LED state:\n%s", after)
	}

	// QEMU's virt machine has no USB device controller: the boot did not
	// wait for one (the step was quick), and the box says so once.
	if !strings.Contains(v.log.String(), "bonesync: USB device port: no device controller, so nothing is offered over USB") ||
		regexp.MustCompile(`boot step done step="set up the USB device port"`).MatchString(v.log.String()) {
		t.Errorf("without a USB device controller the boot waited for one, or never said there is none:\n%s", tail(v.log.String()))
	}

	// A wedged server (SIGSTOP): its heartbeats stop, the supervisor kills
	// it and starts it again, HTTPS answers again, and the watchdog was fed
	// throughout (else the board would have reset: QEMU runs -no-reboot).
	mark := len(v.log.String())
	io.WriteString(v.console, "kill -STOP\n")
	v.waitAfter(t, mark, `the server is wedged: killing it why=sent no heartbeat for`, 2*time.Minute)
	v.waitAfter(t, mark, `serving HTTPS`, 3*time.Minute)
	ca3, _ := v.served(t)
	if !bytes.Equal(ca, ca3) {
		t.Error("the restarted server serves another CA")
	}
	if st := v.status(t); !strings.Contains(st, "1 restarts") || !strings.Contains(st, "LEDs:    serving") {
		t.Errorf("after the restart, status says:\n%s", st)
	}

	// A new password at the console: FIRST-LOGIN.txt goes.
	mark = len(v.log.String())
	io.WriteString(v.console, "user passwd admin\n")
	v.waitAfter(t, mark, `new password for admin: `, time.Minute)
	io.WriteString(v.console, "changed-at-the-console\n")
	v.waitAfter(t, mark, `again: `, time.Minute)
	io.WriteString(v.console, "changed-at-the-console\n")
	v.waitAfter(t, mark, `FIRST-LOGIN.txt emptied`, 2*time.Minute)
	v.poweroff(t)
	if note, err := exec.Command("mtype", "-i", card+"@@"+fmt.Sprint(partStart*512), "::/FIRST-LOGIN.txt").Output(); err != nil || strings.Contains(string(note), password[1]) || len(note) != firstlogin.NoteSize {
		t.Errorf("after the password change FIRST-LOGIN.txt (%v, %d bytes) holds:\n%s", err, len(note), note)
	}
	checkFAT(t, card, "after FIRST-LOGIN.txt was emptied")
	t.Logf("whole boot test %v", time.Since(start).Round(time.Second))
}
