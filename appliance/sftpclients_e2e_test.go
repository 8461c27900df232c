package main

// SFTP for sync tools, with real clients: OpenSSH's sftp and scp (dates,
// exit status, df), sshfs (create, write, rename over, touch, rm), rclone's
// sftp backend (hashes by exec, a second sync that copies nothing) and
// paramiko (utime, chmod, stat of an open file, exec, a shell). Run from
// TestSync, on its box.

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/report"
)

// sshArgs are OpenSSH client options for the box with admin's password
// from an askpass script.
func (b *box) sshEnv() []string {
	askpass := filepath.Join(b.work, "askpass")
	os.WriteFile(askpass, []byte("#!/bin/sh\necho '"+b.password+"'\n"), 0o700)
	return append(os.Environ(), "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
}

var sshOpts = []string{"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
	"-o", "PreferredAuthentications=password", "-o", "NumberOfPasswordPrompts=1"}

func testSFTPTools(t *testing.T, b *box) {
	home := filepath.Join(b.state, "files", "admin")
	old := time.Date(2018, 3, 4, 5, 6, 7, 0, time.UTC)
	src := filepath.Join(b.work, "dated.txt")
	os.WriteFile(src, []byte("dated content"), 0o640)
	os.Chtimes(src, old, old)

	// sftp put -p and df.
	out, ok := b.sftp("admin", "password:"+b.password, "mkdir tools", "put -p "+src+" tools/put-p.txt", "df -h /")
	if !ok || !strings.Contains(out, "Size") {
		t.Errorf("sftp put -p / df failed:\n%s", out)
	}
	if fi, err := os.Stat(filepath.Join(home, "tools", "put-p.txt")); err != nil || !fi.ModTime().Equal(old) || fi.Mode().Perm() != 0o640 {
		t.Errorf("put -p: %v %v", fi, err)
	}

	// scp: exit status 0, -p keeps the date; a refused write exits non-zero.
	scp := func(args ...string) error {
		cmd := exec.Command("scp", append(append(append([]string{}, sshOpts...), "-P", b.port(b.ssh)), args...)...)
		cmd.Env = b.sshEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := scp("-p", src, "admin@127.0.0.1:tools/scp-p.txt"); err != nil {
		t.Errorf("scp -p of a file: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(home, "tools", "scp-p.txt")); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("scp -p: %v %v", fi, err)
	}
	if err := scp(src, "admin@127.0.0.1:no-such-folder/x.txt"); err == nil {
		t.Error("scp into a missing folder exited 0")
	}
	back := filepath.Join(b.work, "scp-back.txt")
	if err := scp("admin@127.0.0.1:tools/scp-p.txt", back); err != nil {
		t.Errorf("scp down: %v", err)
	}

	// A shell or a command gets one line and exit status 1.
	cmd := exec.Command("ssh", append(append(append([]string{}, sshOpts...), "-p", b.port(b.ssh), "admin@127.0.0.1"), "ls", "/")...)
	cmd.Env = b.sshEnv()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "this box speaks SFTP only") {
		t.Errorf("ssh ls: %v %s", err, out)
	}
	cmd = exec.Command("ssh", append(append(append([]string{}, sshOpts...), "-p", b.port(b.ssh), "admin@127.0.0.1"), "md5sum", "tools/scp-p.txt")...)
	cmd.Env = b.sshEnv()
	want := fmt.Sprintf("%x  tools/scp-p.txt\n", md5.Sum([]byte("dated content")))
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != want {
		t.Errorf("ssh md5sum = %v %q, want %q", err, out, want)
	}
	// A file that is not there: exit status 1 and coreutils' message, as
	// a script checking $? expects.
	for _, missing := range []string{"tools/no-such.txt", "/no/such/dir/f"} {
		cmd = exec.Command("ssh", append(append(append([]string{}, sshOpts...), "-p", b.port(b.ssh), "admin@127.0.0.1"), "md5sum", missing)...)
		cmd.Env = b.sshEnv()
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "md5sum: "+missing+": No such file or directory") {
			t.Errorf("ssh md5sum %s = %v %q, want exit status 1 and No such file or directory", missing, err, out)
		}
	}
}

func testSSHFS(t *testing.T, b *box) {
	need(t, "sshfs")
	mnt := filepath.Join(b.work, "sshfs")
	os.Mkdir(mnt, 0o755)
	b.sftp("admin", "password:"+b.password, "mkdir fuse")
	args := append(append([]string{}, sshOpts...), "-p", b.port(b.ssh), "-o", "password_stdin", "admin@127.0.0.1:fuse", mnt)
	cmd := exec.Command("sshfs", args...)
	cmd.Stdin = strings.NewReader(b.password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("sshfs cannot mount here (FUSE): %v %s", err, out)
	}
	defer exec.Command("fusermount", "-u", mnt).Run()
	home := filepath.Join(b.state, "files", "admin", "fuse")
	src := filepath.Join(b.work, "small.txt")
	os.WriteFile(src, []byte("copied by cp"), 0o644)
	steps := []struct {
		what string
		run  func() error
	}{
		{"cp", func() error { return exec.Command("cp", src, filepath.Join(mnt, "cp.txt")).Run() }},
		{"echo > new", func() error { return os.WriteFile(filepath.Join(mnt, "echo.txt"), []byte("echoed\n"), 0o644) }},
		{"an editor's save", func() error {
			if err := os.WriteFile(filepath.Join(mnt, ".echo.txt.swp"), []byte("saved by an editor\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(filepath.Join(mnt, ".echo.txt.swp"), filepath.Join(mnt, "echo.txt"))
		}},
		{"touch -d", func() error {
			if err := exec.Command("touch", "-d", "2017-01-02 03:04:05 UTC", filepath.Join(mnt, "cp.txt")).Run(); err != nil {
				return err
			}
			// The mount shows the date at once (sshfs stats while the
			// file is still open), not when its cache expires.
			if fi, err := os.Stat(filepath.Join(mnt, "cp.txt")); err != nil || !fi.ModTime().Equal(time.Date(2017, 1, 2, 3, 4, 5, 0, time.UTC)) {
				return fmt.Errorf("the mount shows %v (%v)", fi.ModTime(), err)
			}
			return nil
		}},
		{"chmod 600, then sed -i", func() error {
			// As a person types it: the stat between reads what sshfs caches.
			f := filepath.Join(mnt, "secret.conf")
			script := "echo pin=1 > " + f + "; chmod 600 " + f + "; stat -c %a " + f + "; sed -i s/1/2/ " + f + "; stat -c %a " + f
			if out, err := exec.Command("sh", "-ec", script).CombinedOutput(); err != nil || string(out) != "600\n600\n" {
				return fmt.Errorf("%s: %v\n%s (want 600 twice)", script, err, out)
			}
			return nil
		}},
		{"rm", func() error {
			os.WriteFile(filepath.Join(mnt, "gone.txt"), []byte("x"), 0o644)
			return os.Remove(filepath.Join(mnt, "gone.txt"))
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Errorf("over sshfs, %s: %v", s.what, err)
		}
	}
	entries, _ := os.ReadDir(home)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "cp.txt echo.txt secret.conf" {
		t.Errorf("the server holds %v, want cp.txt, echo.txt and secret.conf only", names)
	}
	if fi, err := os.Stat(filepath.Join(home, "secret.conf")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("sed -i over sshfs left secret.conf %v on the server (%v), want -rw-------", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(filepath.Join(home, "echo.txt")); string(got) != "saved by an editor\n" {
		t.Errorf("echo.txt = %q", got)
	}
	if fi, err := os.Stat(filepath.Join(home, "cp.txt")); err != nil || fi.ModTime().UTC() != time.Date(2017, 1, 2, 3, 4, 5, 0, time.UTC) {
		t.Errorf("touch -d over sshfs: %v %v", fi.ModTime(), err)
	}
}

func testRcloneSFTP(t *testing.T, b *box) {
	obscured, _ := exec.Command("rclone", "obscure", b.password).Output()
	env := append(os.Environ(), "RCLONE_CONFIG=/dev/null",
		"RCLONE_CONFIG_SF_TYPE=sftp", "RCLONE_CONFIG_SF_HOST=127.0.0.1", "RCLONE_CONFIG_SF_PORT="+b.port(b.ssh),
		"RCLONE_CONFIG_SF_USER=admin", "RCLONE_CONFIG_SF_PASS="+strings.TrimSpace(string(obscured)))
	rclone := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("rclone", append([]string{"--retries", "1", "-v"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("rclone %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tree := filepath.Join(b.work, "rc-sf2")
	rcloneSyncs(t, rclone, tree, "sf:rcsf")
	if out := rclone("check", tree, "sf:rcsf"); strings.Contains(out, "could not be checked") || !strings.Contains(out, "2 matching files") {
		t.Errorf("rclone check:\n%s", out)
	}
	content, _ := os.ReadFile(filepath.Join(tree, "a.txt"))
	for h, want := range map[string]string{"md5": fmt.Sprintf("%x", md5.Sum(content)), "sha1": fmt.Sprintf("%x", sha1.Sum(content))} {
		if out := rclone("hashsum", h, "sf:rcsf/a.txt"); !strings.HasPrefix(out, want+"  a.txt") {
			t.Errorf("rclone hashsum %s = %q, want %s", h, out, want)
		}
	}
}

const paramikoScript = `
import paramiko, sys, time, stat
port, pw, home = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = paramiko.SSHClient()
c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
c.connect("127.0.0.1", port=port, username="admin", password=pw, look_for_keys=False, allow_agent=False)
s = c.open_sftp()
f = s.open("pm.txt", "w")
f.write(b"from paramiko")
f.flush()
assert s.stat("pm.txt").st_size == 13, "stat of an open file"
assert f.stat().st_size == 13, "fstat of an open file"
f.close()
s.utime("pm.txt", (1400000000, 1400000000))
assert s.stat("pm.txt").st_mtime == 1400000000, "utime"
s.chmod("pm.txt", 0o640)
assert stat.S_IMODE(s.stat("pm.txt").st_mode) == 0o640, "chmod"
s.chmod("pm.txt", 0o4755)
assert stat.S_IMODE(s.stat("pm.txt").st_mode) == 0o755, "setuid is not kept"
_, out, err = c.exec_command("md5sum pm.txt")
line = out.read().decode()
assert line.endswith("  pm.txt\n"), line
assert out.channel.recv_exit_status() == 0
ch = c.get_transport().open_session()
ch.invoke_shell()
msg = ch.makefile_stderr().read().decode()
assert "SFTP only" in msg, msg
assert ch.recv_exit_status() == 1
print("paramiko ok")
`

func testParamiko(t *testing.T, b *box) {
	if err := exec.Command("/usr/bin/python3", "-c", "import paramiko").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3-paramiko is not installed; scripts/install-test-deps.sh installs it")
		}
		t.Skip("python3-paramiko is not installed")
	}
	script := filepath.Join(b.work, "pm.py")
	os.WriteFile(script, []byte(paramikoScript), 0o644)
	out, err := exec.Command("/usr/bin/python3", script, b.port(b.ssh), b.password, b.state).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "paramiko ok") {
		t.Errorf("paramiko: %v\n%s", err, out)
	}
}

// The algorithms the server offers, read from OpenSSH's own debug output,
// hold to the policy, and each one negotiates with OpenSSH.
func testSSHAlgorithms(t *testing.T, b *box) {
	cmd := exec.Command("ssh", append(append(append([]string{}, sshOpts...), "-vv", "-p", b.port(b.ssh), "admin@127.0.0.1"), "true")...)
	cmd.Env = b.sshEnv()
	out, _ := cmd.CombinedOutput()
	offered := map[string][]string{}
	peer := false
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.Contains(line, "peer server KEXINIT proposal") {
			peer = true
			continue
		}
		if peer && strings.HasPrefix(line, "debug2: ") {
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "debug2: "), ": ")
			if ok && (k == "KEX algorithms" || k == "host key algorithms" || k == "ciphers ctos" || k == "MACs ctos") {
				offered[k] = strings.Split(v, ",")
			}
		}
	}
	if len(offered) != 4 {
		t.Fatalf("could not read the server's proposal:\n%s", out)
	}
	for _, k := range offered["KEX algorithms"] {
		if strings.Contains(k, "nistp") {
			t.Errorf("offers the NIST-curve key exchange %s", k)
		}
	}
	for _, m := range offered["MACs ctos"] {
		if !strings.HasSuffix(m, "-etm@openssh.com") {
			t.Errorf("offers the encrypt-and-MAC %s", m)
		}
	}
	for _, h := range offered["host key algorithms"] {
		if strings.HasPrefix(h, "ecdsa") {
			t.Errorf("offers an ECDSA host key %s", h)
		}
	}
	for opt, list := range map[string][]string{"KexAlgorithms": offered["KEX algorithms"], "Ciphers": offered["ciphers ctos"], "MACs": offered["MACs ctos"]} {
		q := map[string]string{"KexAlgorithms": "kex", "Ciphers": "cipher", "MACs": "mac"}[opt]
		known, _ := exec.Command("ssh", "-Q", q).Output()
		for _, alg := range list {
			if !slices.Contains(strings.Fields(string(known)), alg) {
				continue // a protocol flag (kex-strict...), or newer than this OpenSSH
			}
			if opt == "MACs" && !strings.Contains(strings.Join(offered["ciphers ctos"], ","), "ctr") {
				continue
			}
			args := append(append([]string{"-o", "BatchMode=no"}, sshOpts...), "-o", opt+"="+alg, "-P", b.port(b.ssh))
			if opt == "MACs" {
				args = append(args, "-o", "Ciphers=aes128-ctr") // an AEAD cipher would use no MAC
			}
			batch := filepath.Join(b.work, "alg-batch")
			os.WriteFile(batch, []byte("pwd\n"), 0o600)
			c := exec.Command("sftp", append(args, "-b", batch, "admin@127.0.0.1")...)
			c.Env = b.sshEnv()
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("%s=%s does not negotiate: %v %s", opt, alg, err, out)
			}
		}
	}
}

// A person who gives up at the password prompt (Ctrl-C) has tried nothing:
// it is no failed login, and six of them ban nobody.
func testCancelledLogins(t *testing.T, b *box) {
	failures := func() int { return strings.Count(b.stderrCapture.String(), "login failed proto=sftp") }
	before := failures()
	prompt := filepath.Join(b.work, "prompt")
	os.WriteFile(prompt, []byte("#!/bin/sh\ntouch \"$0.asked\"\nexec sleep 30\n"), 0o700)
	for i := 0; i < 6; i++ {
		os.Remove(prompt + ".asked")
		cmd := exec.Command("ssh", append(append(append([]string{}, sshOpts...), "-p", b.port(b.ssh), "admin@127.0.0.1"), "true")...)
		cmd.Env = append(os.Environ(), "SSH_ASKPASS="+prompt, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
		cmd.Start()
		for j := 0; j < 200; j++ { // until the password is asked for
			if _, err := os.Stat(prompt + ".asked"); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	exec.Command("pkill", "-f", prompt).Run()
	if out, ok := b.sftp("admin", "password:"+b.password, "pwd"); !ok {
		t.Errorf("after six cancelled prompts the right password is refused:\n%s", out)
	}
	if n := failures() - before; n > 0 {
		t.Errorf("the cancelled prompts were logged as %d failed logins:\n%s", n, tail(b.stderrCapture.String(), 20))
	}
}

// testKeyFamilies: the box serves the chosen key and, beside it, one of the
// other family, and each client gets the one it takes: OpenSSL's s_client
// offering only RSA signatures gets the RSA certificate, offering only ECDSA
// the ECDSA one; ssh-keyscan asking for each host key type gets it, and the
// report names both fingerprints.
func testKeyFamilies(t *testing.T, b *box) {
	need(t, "openssl", "ssh-keyscan", "ssh-keygen")
	raw, err := os.ReadFile(filepath.Join(b.state, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Choice.TLSOther.Key == "" || rep.Choice.SSHOther.Key == "" {
		t.Fatalf("no key beside the chosen ones: %+v", rep.Choice)
	}
	for sigalgs, want := range map[string]string{
		"rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:rsa_pss_rsae_sha512": "RSA-PSS",
		"ecdsa_secp256r1_sha256:ecdsa_secp384r1_sha384":               "ECDSA",
	} {
		out, _ := exec.Command("openssl", "s_client", "-connect", b.https, "-tls1_3", "-sigalgs", sigalgs, "-brief").CombinedOutput()
		if !strings.Contains(string(out), "ignature type: "+want) {
			t.Errorf("openssl s_client offering only %s does not get %s:\n%s", sigalgs, want, out)
		}
	}
	var fps []string
	for _, typ := range []string{"ed25519", "rsa"} {
		scan, _ := exec.Command("ssh-keyscan", "-p", b.port(b.ssh), "-t", typ, "127.0.0.1").Output()
		fp := exec.Command("ssh-keygen", "-lf", "-")
		fp.Stdin = bytes.NewReader(scan)
		out, _ := fp.Output()
		if !strings.Contains(strings.ToLower(string(out)), "("+typ+")") {
			t.Errorf("ssh-keyscan -t %s: %q", typ, out)
		}
		fps = append(fps, string(out))
	}
	text := strings.Join(fps, "")
	out, _ := exec.Command(built(t), "report", "-state", b.state).CombinedOutput()
	for _, fp := range regexp.MustCompile(`SHA256:[A-Za-z0-9+/]+`).FindAllString(string(out), -1) {
		if !strings.Contains(text, fp) {
			t.Errorf("bonesync report prints %s, which ssh-keyscan does not see:\n%s", fp, text)
		}
	}
	if n := len(regexp.MustCompile(`SHA256:[A-Za-z0-9+/]+`).FindAllString(string(out), -1)); n < 2 {
		t.Errorf("bonesync report prints %d host key fingerprints, want the two:\n%s", n, out)
	}
}

// testProbe runs `bonesync probe` against the running box, as from a
// laptop, over HTTPS (its CA checked) and SFTP, with small counts: every
// connection succeeds, and beside the figures stands the box's own
// prediction from its report.
func testProbe(t *testing.T, b *box) {
	https := "https://localhost:" + b.port(b.https) + "/"
	sftp := "sftp://localhost:" + b.port(b.ssh)
	probe := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(built(t), append([]string{"probe", "-ca", b.caFile}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bonesync probe %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, args := range [][]string{
		{"-users", "1,4", "-rounds", "2", https},
		{"-users", "1,4", "-rounds", "2", "-report", https + "report.json", sftp},
	} {
		out := probe(nil, args...)
		for _, want := range []string{"0 of 2", "0 of 8", "The box predicted, measuring itself"} {
			if !strings.Contains(out, want) {
				t.Errorf("bonesync probe %s prints no %q:\n%s", strings.Join(args, " "), want, out)
			}
		}
	}
	// 100 users at once from this one address: without a pass the box's
	// per-address limits turn most away, and the probe says so by cause;
	// with the admin page's pass, none.
	out := probe(nil, "-users", "100", "-rounds", "1", https)
	t.Logf("100 users without a pass:\n%s", out)
	if !regexp.MustCompile(`at 100 users: \d+ turned away`).MatchString(out) || !strings.Contains(out, "make a pass on its admin page") {
		t.Errorf("100 users without a pass: no turned-away failures, or no word of the pass:\n%s", out)
	}
	pass := probePass(t, b)
	for _, target := range []string{https, sftp} {
		out := probe([]string{"BONESYNC_PROBE_TOKEN=" + pass}, "-users", "100", "-rounds", "1", "-report", https+"report.json", target)
		t.Logf("100 users with the pass:\n%s", out)
		if !strings.Contains(out, "0 of 100") || !strings.Contains(out, "past its per-address limits until") {
			t.Errorf("100 users with the pass against %s: want no failure:\n%s", target, out)
		}
	}
	// The box's two certificates side by side, each beside its prediction.
	out = probe([]string{"BONESYNC_PROBE_TOKEN=" + pass}, "-users", "1,4", "-rounds", "1", "-compare", https)
	t.Logf("-compare:\n%s", out)
	if strings.Count(out, "HTTPS with the box's") != 2 || strings.Count(out, "The box predicted") < 3 {
		t.Errorf("-compare: want two keys' runs, each with its prediction:\n%s", out)
	}
	// A made-up pass is refused, and the probe says so.
	cmd := exec.Command(built(t), "probe", "-ca", b.caFile, "-token", "NOT-A-PASS", "-users", "1", https)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "403") {
		t.Errorf("a made-up pass: %v\n%s", err, out)
	}
}

// probePass makes a probe pass on the admin page, as the owner does.
func probePass(t *testing.T, b *box) string {
	t.Helper()
	c, session, csrf := webSession(t, b, "admin", b.password)
	req, _ := http.NewRequest("POST", "https://localhost:"+b.port(b.https)+"/admin/", strings.NewReader(url.Values{"csrf": {csrf}, "action": {"probe-pass"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", session)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page := readAllString(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`bonesync probe -token ([A-Z2-7]+) `).FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the admin page's probe pass: %s\n%s", resp.Status, page)
	}
	return m[1]
}
