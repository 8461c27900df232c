package main

// File sync end to end: the built binary, reached by real clients from
// Debian packages: curl, OpenSSH's sftp, rclone and litmus.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/files"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/report"
)

// box is a running instance with what a client needs to reach it.
type box struct {
	*instance
	t        *testing.T
	state    string
	caFile   string
	password string // admin's
	work     string
}

// cloneState is a copy of the box's state directory, its files left out,
// for a second server beside the first: one server to a state directory,
// and this one has the same CA, keys, decision and users.
func cloneState(t *testing.T, state string) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(state, p)
		switch {
		case rel == ".":
			return nil
		case rel == "files" || rel == ".server":
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dir, rel), 0o700)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		return os.WriteFile(filepath.Join(dir, rel), b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func startBox(t *testing.T, state string, extra ...string) *box {
	t.Helper()
	_, err := os.Stat(filepath.Join(state, "users.json"))
	firstStart := err != nil
	in := start(t, state, extra...)
	b := &box{instance: in, t: t, state: state, work: t.TempDir()}
	// stdout and stderr are separate pipes: the password (stdout) may
	// arrive after "serving HTTPS" (stderr).
	for i := 0; firstStart && b.password == "" && i < 100; i++ {
		if m := regexp.MustCompile(`password ([a-z0-9-]{23})`).FindStringSubmatch(in.stdout.String()); m != nil {
			b.password = m[1]
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	b.caFile = filepath.Join(b.work, "ca.crt")
	out, err := exec.Command("curl", "-sS", "--fail", "-o", b.caFile, "http://"+in.http+"/ca.crt").CombinedOutput()
	if err != nil {
		t.Fatalf("fetch CA: %v %s", err, out)
	}
	return b
}

func (b *box) port(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

func (b *box) url(p string) string { return "https://localhost:" + b.port(b.https) + "/dav/" + p }

// curl runs curl against the box and returns the HTTP status and body.
func (b *box) curl(args ...string) (int, string) {
	b.t.Helper()
	args = append([]string{"-sS", "--cacert", b.caFile, "-w", "\n%{http_code}"}, args...)
	out, err := exec.Command("curl", args...).Output()
	if err != nil {
		b.t.Fatalf("curl %v: %v", args, err)
	}
	s := string(out)
	i := strings.LastIndex(s, "\n")
	var code int
	fmt.Sscan(s[i+1:], &code)
	return code, s[:i]
}

func (b *box) admin() string { return "admin:" + b.password }

// systemStore is a CA directory as the welcome page's Linux steps leave
// /etc/ssl/certs: the system's bundle with the box's CA added, and the CA
// in a file of its own, hashed (update-ca-certificates' links). The Qt
// clients (nextcloudcmd, KDE's KIO) and gvfs trust only the system's
// store, so they run in a mount namespace with it bound over
// /etc/ssl/certs (ok false: no mount namespace here).
func (b *box) systemStore(t *testing.T) (dir string, ok bool) {
	t.Helper()
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		t.Logf("no mount namespace here, so no CA store of the box's own: %v", err)
		return "", false
	}
	ca, err := os.ReadFile(b.caFile)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	system, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	os.WriteFile(filepath.Join(dir, "ca-certificates.crt"), append(system, ca...), 0o644)
	os.WriteFile(filepath.Join(dir, "bonesync.pem"), ca, 0o644)
	if out, err := exec.Command("openssl", "rehash", dir).CombinedOutput(); err != nil {
		t.Fatalf("openssl rehash: %v %s", err, out)
	}
	return dir, true
}

// sftp runs OpenSSH's sftp in batch mode; auth is "password:PW" or
// "key:FILE". It returns the output and whether every command succeeded.
func (b *box) sftp(user, auth string, commands ...string) (string, bool) {
	b.t.Helper()
	return b.sftpFrom("", user, auth, commands...)
}

// sftpFrom is sftp from the local address src ("" for any).
func (b *box) sftpFrom(src, user, auth string, commands ...string) (string, bool) {
	b.t.Helper()
	batch := filepath.Join(b.work, "batch")
	os.WriteFile(batch, []byte(strings.Join(commands, "\n")+"\n"), 0o600)
	args := []string{"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-P", b.port(b.ssh)}
	if src != "" {
		args = append(args, "-o", "BindAddress="+src)
	}
	env := os.Environ()
	kind, val, _ := strings.Cut(auth, ":")
	if kind == "password" {
		askpass := filepath.Join(b.work, "askpass")
		os.WriteFile(askpass, []byte("#!/bin/sh\necho '"+val+"'\n"), 0o700)
		// BatchMode off before -b, so the password can come from askpass.
		args = append([]string{"-o", "BatchMode=no", "-o", "PreferredAuthentications=password", "-o", "NumberOfPasswordPrompts=1"}, args...)
		env = append(env, "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
	} else {
		args = append(args, "-o", "PreferredAuthentications=publickey", "-o", "IdentitiesOnly=yes", "-i", val)
	}
	args = append(args, "-b", batch, user+"@127.0.0.1")
	cmd := exec.Command("sftp", args...)
	cmd.Env = env
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; scripts/install-test-deps.sh installs it", tool)
			}
			t.Skipf("%s is not installed (scripts/install-test-deps.sh)", tool)
		}
	}
}

func randomFile(t *testing.T, path string, size int) string {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func sum(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestSync(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary with real clients")
	}
	need(t, "curl", "sftp", "ssh-keygen", "rclone", "litmus")
	b := startBox(t, t.TempDir())
	if b.password == "" {
		t.Fatalf("the first start printed no admin password:\n%s", b.stdout.String())
	}
	if users, _ := os.ReadFile(filepath.Join(b.state, "users.json")); bytes.Contains(users, []byte(b.password)) {
		t.Fatal("users.json holds the admin password in clear")
	}
	t.Run("curl", func(t *testing.T) { testCurl(t, b) })
	t.Run("users", func(t *testing.T) { testUsers(t, b) })
	t.Run("sftp", func(t *testing.T) { testSFTP(t, b) })
	t.Run("rclone", func(t *testing.T) { testRclone(t, b) })
	t.Run("litmus", func(t *testing.T) { testLitmus(t, b) })
	t.Run("conditions", func(t *testing.T) { testConditions(t, b) })
	t.Run("locks", func(t *testing.T) { testLocks(t, b) })
	t.Run("quota", func(t *testing.T) { testQuota(t, b) })
	t.Run("chunk-resume", func(t *testing.T) { testChunkResume(t, b) })
	t.Run("sftp-tools", func(t *testing.T) { testSFTPTools(t, b) })
	t.Run("sshfs", func(t *testing.T) { testSSHFS(t, b) })
	t.Run("kio", func(t *testing.T) { testKIO(t, b) })
	t.Run("rclone-sftp", func(t *testing.T) { testRcloneSFTP(t, b) })
	t.Run("paramiko", func(t *testing.T) { testParamiko(t, b) })
	t.Run("ssh-algorithms", func(t *testing.T) { testSSHAlgorithms(t, b) })
	t.Run("key-families", func(t *testing.T) { testKeyFamilies(t, b) })
	t.Run("probe", func(t *testing.T) { testProbe(t, b) })
	t.Run("cancelled-logins", func(t *testing.T) { testCancelledLogins(t, b) })
	t.Run("nextcloudcmd", func(t *testing.T) { testNextcloudcmd(t, b) })
	t.Run("owncloudcmd", func(t *testing.T) { testOwncloudcmd(t, b) })
	t.Run("rclone-nextcloud", func(t *testing.T) { testRcloneNextcloud(t, b) })
	t.Run("vdirsyncer", func(t *testing.T) { testVdirsyncer(t, b) })
	t.Run("caldav-tokens", func(t *testing.T) { testCaldavTokens(t, b) })
	t.Run("browser", func(t *testing.T) { testBrowser(t, b) })
	t.Run("phones", func(t *testing.T) { testPhones(t, b) })
	t.Run("passkeys", func(t *testing.T) { testPasskeys(t, b) })
	t.Run("welcome-steps", func(t *testing.T) { testWelcomeSteps(t, b) })
	t.Run("console-urls", func(t *testing.T) { testConsoleURLs(t, b) })
	t.Run("connect-steps", func(t *testing.T) { testConnectSteps(t, b) })
	t.Run("trash", func(t *testing.T) { testTrash(t, b) })
	t.Run("shares", func(t *testing.T) { testShares(t, b) })
	t.Run("public-link-dav", func(t *testing.T) { testPublicLinkDAV(t, b) })
	t.Run("calendar-share", func(t *testing.T) { testCalendarShare(t, b) })
	t.Run("calendar-abuse", func(t *testing.T) { testCalendarAbuse(t, b) })
	t.Run("apps", func(t *testing.T) { testApps(t, b) })
	t.Run("copies", func(t *testing.T) { testCopies(t, b) })
	t.Run("killed", func(t *testing.T) { testKilledServer(t, b) })
	t.Run("escape", func(t *testing.T) { testEscape(t, b) })
	t.Run("interrupted", func(t *testing.T) { testInterrupted(t, b) })
	t.Run("fulldisk", func(t *testing.T) { testFullDisk(t, b) })
	t.Run("idle-writes", func(t *testing.T) { testIdleWritesNothing(t, b) })
	t.Run("abuse", func(t *testing.T) { testAbuse(t, b) })
	t.Run("flood-distributed", func(t *testing.T) { testDistributedFlood(t, b) })
	t.Run("memory", func(t *testing.T) { testMemoryCeiling(t, b) })
	t.Run("long-names", func(t *testing.T) { testLongNames(t, b) })
	t.Run("hostile", func(t *testing.T) { testHostile(t, b) })
	t.Run("one-ban", func(t *testing.T) { testOneBan(t, b) })
	t.Run("ban", func(t *testing.T) { testBan(t, b) }) // last: it bans 127.0.0.1
}

func testCurl(t *testing.T, b *box) {
	f := filepath.Join(b.work, "hello.txt")
	os.WriteFile(f, []byte("hello from curl\n"), 0o644)
	if code, _ := b.curl("-u", b.admin(), "-T", f, b.url("hello.txt")); code != 201 {
		t.Fatalf("PUT = %d, want 201", code)
	}
	if code, body := b.curl("-u", b.admin(), b.url("hello.txt")); code != 200 || body != "hello from curl\n" {
		t.Errorf("GET = %d %q", code, body)
	}
	if code, body := b.curl("-u", b.admin(), "-X", "PROPFIND", "-H", "Depth: 1", b.url("")); code != 207 || !strings.Contains(body, "/dav/hello.txt") {
		t.Errorf("PROPFIND = %d, body lacks hello.txt:\n%.300s", code, body)
	}
	if code, hdrs := b.head("-u", b.admin(), b.url("")); code != 303 || !strings.Contains(hdrs, "/files/") {
		t.Errorf("GET on a folder = %d, want 303 to the web page /files/:\n%s", code, hdrs)
	}
	if code, _ := b.curl("-u", b.admin(), "-X", "MOVE", "-H", "Destination: "+b.url("moved.txt"), b.url("hello.txt")); code != 201 {
		t.Errorf("MOVE = %d, want 201", code)
	}
	if code, _ := b.curl("-u", b.admin(), "-X", "DELETE", b.url("moved.txt")); code != 204 {
		t.Errorf("DELETE = %d, want 204", code)
	}
	if code, _ := b.curl("-u", b.admin(), b.url("moved.txt")); code != 404 {
		t.Errorf("GET after DELETE = %d, want 404", code)
	}
	// A COPY of a folder onto itself must not empty it.
	b.curl("-u", b.admin(), "-X", "MKCOL", b.url("photos"))
	b.curl("-u", b.admin(), "-T", f, b.url("photos/a.txt"))
	if code, _ := b.curl("-u", b.admin(), "-X", "COPY", "-H", "Destination: "+b.url("photos/"), b.url("photos")); code != 403 {
		t.Errorf("COPY of a folder onto itself = %d, want 403", code)
	}
	if code, _ := b.curl("-u", b.admin(), "-X", "MOVE", "-H", "Destination: "+b.url("photos/inner"), b.url("photos")); code != 403 {
		t.Errorf("MOVE of a folder into itself = %d, want 403", code)
	}
	if code, body := b.curl("-u", b.admin(), b.url("photos/a.txt")); code != 200 || body != "hello from curl\n" {
		t.Errorf("after COPY onto itself, photos/a.txt = %d %q", code, body)
	}
	if code, _ := b.curl(b.url("")); code != 401 {
		t.Errorf("no credentials = %d, want 401", code)
	}
	if code, _ := b.curl("-u", "admin:wrong-password", b.url("")); code != 401 {
		t.Errorf("wrong password = %d, want 401", code)
	}
	if code, _ := b.curl("-u", b.admin(), "http://"+b.http+"/dav/"); code != 401 {
		t.Errorf("plain HTTP with credentials = %d, want 401", code)
	}
}

func testUsers(t *testing.T, b *box) {
	add := exec.Command(built(t), "user", "-state", b.state, "add", "alice")
	add.Stdin = strings.NewReader("alice-secret-1\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	// The running server knows her at once.
	if code, _ := b.curl("-u", "alice:alice-secret-1", "-X", "PROPFIND", "-H", "Depth: 0", b.url("")); code != 207 {
		t.Fatalf("new user's first login (PROPFIND) = %d, want 207", code)
	}
	f := filepath.Join(b.work, "a.txt")
	os.WriteFile(f, []byte("admin only"), 0o644)
	b.curl("-u", b.admin(), "-T", f, b.url("private.txt"))
	if code, _ := b.curl("-u", "alice:alice-secret-1", b.url("private.txt")); code != 404 {
		t.Errorf("alice GET admin's file = %d, want 404", code)
	}
	passwd := exec.Command(built(t), "user", "passwd", "alice", "-state", b.state)
	passwd.Stdin = strings.NewReader("alice-secret-2\n")
	if out, err := passwd.CombinedOutput(); err != nil {
		t.Fatalf("user passwd: %v %s", err, out)
	}
	if code, _ := b.curl("-u", "alice:alice-secret-1", b.url("")); code != 401 {
		t.Errorf("old password after passwd = %d, want 401", code)
	}
	list, _ := exec.Command(built(t), "user", "list", "-state", b.state).Output()
	if !strings.Contains(string(list), "alice") || !strings.Contains(string(list), "admin") {
		t.Errorf("user list = %q", list)
	}
	if out, err := exec.Command(built(t), "user", "del", "alice", "-state", b.state).CombinedOutput(); err != nil {
		t.Fatalf("user del: %v %s", err, out)
	}
	if code, _ := b.curl("-u", "alice:alice-secret-2", b.url("")); code != 401 {
		t.Errorf("deleted user = %d, want 401", code)
	}
}

func testSFTP(t *testing.T, b *box) {
	pw := "password:" + b.password
	small := filepath.Join(b.work, "small.txt")
	os.WriteFile(small, []byte("over sftp\n"), 0o644)
	big := filepath.Join(b.work, "big.bin")
	bigSum := randomFile(t, big, 24<<20)
	back := filepath.Join(b.work, "back")
	os.Mkdir(back, 0o755)
	out, ok := b.sftp("admin", pw,
		"mkdir up", "put "+small+" up/small.txt", "rename up/small.txt up/renamed.txt", "put "+big+" up/big.bin",
		"get up/renamed.txt "+back+"/renamed.txt", "get up/big.bin "+back+"/big.bin", "ls -l up", "rm up/renamed.txt")
	if !ok {
		t.Fatalf("sftp batch failed:\n%s", out)
	}
	if got, _ := os.ReadFile(back + "/renamed.txt"); string(got) != "over sftp\n" {
		t.Errorf("round trip of small.txt = %q", got)
	}
	if s := sum(t, back+"/big.bin"); s != bigSum {
		t.Errorf("24 MiB file came back with sha256 %s, want %s", s, bigSum)
	}
	// The same store as WebDAV.
	if code, _ := b.curl("-u", b.admin(), "-o", "/dev/null", b.url("up/big.bin")); code != 200 {
		t.Errorf("file put over SFTP, GET over WebDAV = %d", code)
	}
	if out, ok := b.sftp("admin", pw, "rm up/big.bin", "rmdir up"); !ok {
		t.Errorf("sftp rm/rmdir failed:\n%s", out)
	}

	// Public keys: one added to admin works, another is refused.
	key, other := filepath.Join(b.work, "id"), filepath.Join(b.work, "other")
	for _, k := range []string{key, other} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
	}
	if out, err := exec.Command(built(t), "user", "key", "add", "admin", key+".pub", "-state", b.state).CombinedOutput(); err != nil {
		t.Fatalf("user key add: %v %s", err, out)
	}
	if out, ok := b.sftp("admin", "key:"+key, "ls"); !ok {
		t.Errorf("login with the added key failed:\n%s", out)
	}
	if out, ok := b.sftp("admin", "key:"+other, "ls"); ok {
		t.Errorf("login with a key that was never added succeeded:\n%s", out)
	}
	if _, ok := b.sftp("admin", "password:not-the-password", "ls"); ok {
		t.Error("login with a wrong password succeeded")
	}
}

func testRclone(t *testing.T, b *box) {
	obscured, err := exec.Command("rclone", "obscure", b.password).Output()
	if err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(b.work, "tree")
	for _, f := range []string{"a.txt", "sub/b.bin", "sub/deeper/c.bin", "with space/ü ñ.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(tree, f)), 0o755)
		randomFile(t, filepath.Join(tree, f), 1000+len(f)*1000)
	}
	env := append(os.Environ(),
		"RCLONE_CONFIG=/dev/null",
		"RCLONE_CONFIG_DAV_TYPE=webdav", "RCLONE_CONFIG_DAV_URL="+b.url(""), "RCLONE_CONFIG_DAV_VENDOR=other",
		"RCLONE_CONFIG_DAV_USER=admin", "RCLONE_CONFIG_DAV_PASS="+strings.TrimSpace(string(obscured)),
		"RCLONE_CONFIG_SF_TYPE=sftp", "RCLONE_CONFIG_SF_HOST=127.0.0.1", "RCLONE_CONFIG_SF_PORT="+b.port(b.ssh),
		"RCLONE_CONFIG_SF_USER=admin", "RCLONE_CONFIG_SF_PASS="+strings.TrimSpace(string(obscured)),
	)
	rclone := func(args ...string) {
		t.Helper()
		cmd := exec.Command("rclone", append([]string{"--ca-cert", b.caFile, "--retries", "1"}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rclone %v: %v\n%s", args, err, out)
		}
	}
	for _, remote := range []string{"dav:rc", "sf:rc-sftp"} {
		rclone("copy", tree, remote)
		rclone("check", "--download", tree, remote)
		back := filepath.Join(b.work, "back-"+strings.Split(remote, ":")[0])
		rclone("copy", remote, back)
		rclone("check", "--download", tree, back)
	}
}

func testLitmus(t *testing.T, b *box) {
	cmd := exec.Command("litmus", b.url(""), "admin", b.password)
	cmd.Dir = b.work
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+b.caFile, "TESTS=basic copymove props locks http")
	out, _ := cmd.CombinedOutput()
	for _, suite := range []string{"basic", "copymove", "props", "locks", "http"} {
		m := regexp.MustCompile("summary for `" + suite + "': of (\\d+) tests run: (\\d+) passed, (\\d+) failed").FindStringSubmatch(string(out))
		if m == nil || m[3] != "0" || m[1] != m[2] {
			t.Errorf("litmus %s: %v\n%s", suite, m, out)
		}
	}
}

func testEscape(t *testing.T, b *box) {
	secret := filepath.Join(filepath.Dir(b.state), "secret-outside")
	os.WriteFile(secret, []byte("TOP SECRET"), 0o644)
	home := filepath.Join(b.state, "files", "admin")
	os.Symlink(secret, filepath.Join(home, "planted"))
	os.Symlink("/etc", filepath.Join(home, "etc-link"))
	os.Symlink("../..", filepath.Join(home, "up-link"))
	for _, p := range []string{"planted", "etc-link/hostname", "up-link/secret-outside", "../../secret-outside", "%2e%2e/%2e%2e/secret-outside", "..%2f..%2fsecret-outside"} {
		code, body := b.curl("--path-as-is", "-u", b.admin(), b.url(p))
		if code == 200 || strings.Contains(body, "TOP SECRET") {
			t.Errorf("WebDAV GET %s = %d %.50q: escaped the user's directory", p, code, body)
		}
	}
	dst := filepath.Join(b.work, "stolen")
	for _, p := range []string{"planted", "etc-link/hostname", "up-link/secret-outside", "../../secret-outside", "/etc/hostname", "/../../../etc/hostname"} {
		os.Remove(dst)
		b.sftp("admin", "password:"+b.password, "get "+p+" "+dst)
		if got, err := os.ReadFile(dst); err == nil {
			t.Errorf("SFTP get %s fetched %.30q: escaped the user's directory", p, got)
		}
	}
	// Writing to a planted link replaces the link (a rename never follows
	// it); writing through one is refused. Either way the outside is safe.
	code, _ := b.curl("-u", b.admin(), "-T", filepath.Join(b.work, "small.txt"), b.url("planted"))
	b.sftp("admin", "password:"+b.password, "put "+filepath.Join(b.work, "small.txt")+" up-link/secret-outside",
		"put "+filepath.Join(b.work, "small.txt")+" etc-link/bonesync-was-here")
	if got, _ := os.ReadFile(secret); string(got) != "TOP SECRET" {
		t.Errorf("a PUT (%d) or an SFTP put through a planted symlink changed the file outside", code)
	}
	if _, err := os.Stat("/etc/bonesync-was-here"); err == nil {
		os.Remove("/etc/bonesync-was-here")
		t.Error("SFTP put through a symlink to /etc wrote there")
	}
	for _, l := range []string{"planted", "etc-link", "up-link"} {
		os.Remove(filepath.Join(home, l))
	}
}

// An upload killed half-way leaves the previous version intact.
func testInterrupted(t *testing.T, b *box) {
	old := filepath.Join(b.work, "old.txt")
	os.WriteFile(old, []byte("the old version"), 0o644)
	b.curl("-u", b.admin(), "-T", old, b.url("keep.bin"))
	big := filepath.Join(b.work, "new.bin")
	randomFile(t, big, 32<<20)
	kill := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "SSH_ASKPASS="+filepath.Join(b.work, "askpass"), "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the upload's temp file holds data: the transfer is
		// really half-way when the client dies.
		staging := filepath.Join(b.state, "files", ".bonesync", "staging", "*")
		for i := 0; i < 300; i++ {
			if m, _ := filepath.Glob(staging); len(m) > 0 {
				if fi, err := os.Stat(m[0]); err == nil && fi.Size() > 1<<20 {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for i := 0; i < 100; i++ { // the server notices the dead connection
			if m, _ := filepath.Glob(staging); len(m) == 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if code, body := b.curl("-u", b.admin(), b.url("keep.bin")); code != 200 || body != "the old version" {
			t.Errorf("%s killed mid-upload: keep.bin = %d %.40q, want the old version", name, code, body)
		}
		if m, _ := filepath.Glob(staging); len(m) != 0 {
			t.Errorf("%s killed mid-upload left %v", name, m)
		}
	}
	kill("curl", "-sS", "--cacert", b.caFile, "-u", b.admin(), "--limit-rate", "4M", "-T", big, b.url("keep.bin"))
	os.WriteFile(filepath.Join(b.work, "askpass"), []byte("#!/bin/sh\necho '"+b.password+"'\n"), 0o700)
	batch := filepath.Join(b.work, "put-batch")
	os.WriteFile(batch, []byte("put "+big+" keep.bin\n"), 0o600)
	kill("sftp", "-o", "BatchMode=no", "-o", "PreferredAuthentications=password", "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-l", "32000", "-P", b.port(b.ssh), "-b", batch, "admin@127.0.0.1")
}

// A full disk gives the client a proper error and leaves no partial file.
func testFullDisk(t *testing.T, b *box) {
	mnt := filepath.Join(t.TempDir(), "small")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v %s", err, out)
	}
	defer exec.Command("umount", "-l", mnt).Run()
	// A second box on the same state (no new benchmark), its files on the
	// 2 MiB file system.
	full := startBox(t, cloneState(t, b.state), "-files", mnt)
	full.password = b.password
	big := filepath.Join(b.work, "3m.bin")
	randomFile(t, big, 3<<20)
	// HTTP/1.1: the box answers 507 before the body (Fits), and over
	// HTTP/2 Go then ends the stream with RST_STREAM(NO_ERROR) as RFC 9113
	// 8.1 allows; bookworm's curl 7.88 drops the response body it has
	// not read yet and exits 18 ("transfer closed with 23 bytes
	// remaining") although it printed the 507.
	if code, body := full.curl("--http1.1", "-u", full.admin(), "-T", big, full.url("big.bin")); code != 507 {
		t.Errorf("WebDAV PUT on a full disk = %d %q, want 507", code, body)
	}
	if out, ok := full.sftp("admin", "password:"+b.password, "put "+big+" big.bin"); ok {
		t.Errorf("SFTP put on a full disk succeeded:\n%s", out)
	}
	var left []string
	filepath.Walk(mnt, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && filepath.Dir(p) != filepath.Join(mnt, ".bonesync") { // the store's epoch, not an upload
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("a full disk left partial files: %v", left)
	}
	full.stop()
}

// One login door: the same wrong password over WebDAV, the web form,
// CalDAV and SFTP, from one address, counts towards one ban, which then
// holds for every way in (and for no other address). The guesses are at
// a name of their own: admin's account has met wrong guesses in the tests
// before, and its own delay (auth's throttle) would answer first.
func testOneBan(t *testing.T, b *box) {
	const from = "127.0.0.77"
	base := "https://localhost:" + b.port(b.https)
	const guessed = "oneban"
	wrong := guessed + ":not-the-password"
	curl := func(args ...string) int {
		code, _ := b.curl(append([]string{"--interface", from}, args...)...)
		return code
	}
	webdav := func(auth string) int { return curl("-u", auth, "-X", "PROPFIND", "-H", "Depth: 0", b.url("")) }
	caldav := func(auth string) int {
		return curl("-u", auth, "-X", "PROPFIND", "-H", "Depth: 0", base+"/remote.php/dav/calendars/admin/")
	}
	form := func(user, pw string) int {
		jar := filepath.Join(b.work, "one-ban-cookies")
		os.Remove(jar)
		_, page := b.curl("--interface", from, "-c", jar, base+"/login")
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("the login page has no CSRF field:\n%s", page)
		}
		return curl("-b", jar, "-c", jar, "--data-urlencode", "csrf="+m[1], "--data-urlencode", "username="+user,
			"--data-urlencode", "password="+pw, "--data-urlencode", "next=/files/", base+"/login")
	}
	for i, step := range []struct {
		way  string
		code int
	}{
		{"webdav", webdav(wrong)},
		{"web form", form(guessed, "not-the-password")},
		{"caldav", caldav(wrong)},
	} {
		if step.code != 401 {
			t.Errorf("wrong password %d over %s = %d, want 401", i+1, step.way, step.code)
		}
	}
	if _, ok := b.sftpFrom(from, guessed, "password:not-the-password", "ls"); ok {
		t.Error("SFTP with a wrong password logged in")
	}
	if code := webdav(wrong); code != 401 {
		t.Errorf("the fifth wrong password (WebDAV) = %d, want 401", code)
	}
	// Banned now, for every way in, even with the right password.
	right := b.admin()
	if code := webdav(right); code != 429 {
		t.Errorf("WebDAV after the ban = %d, want 429", code)
	}
	if code := caldav(right); code != 429 {
		t.Errorf("CalDAV after the ban = %d, want 429", code)
	}
	if code := form("admin", b.password); code != 429 {
		t.Errorf("the web form after the ban = %d, want 429", code)
	}
	if _, ok := b.sftpFrom(from, "admin", "password:"+b.password, "ls"); ok {
		t.Error("SFTP logged in from the banned address")
	}
	if code, _ := b.curl("-u", right, "-X", "PROPFIND", "-H", "Depth: 0", b.url("")); code != 207 {
		t.Errorf("another address after the ban = %d, want 207", code)
	}
	log := b.stderrCapture.String()
	if n := strings.Count(log, "banned addr="+from+" "); n != 1 {
		t.Errorf("%d bans of %s logged, want one:\n%s", n, from, tail(log, 20))
	}
	for _, proto := range []string{"https", "web", "sftp"} {
		if !strings.Contains(log, "login failed proto="+proto+" user="+guessed+" addr="+from+" ") {
			t.Errorf("no failed %s login of %s from %s logged:\n%s", proto, guessed, from, tail(log, 20))
		}
	}
}

func testBan(t *testing.T, b *box) {
	for i := 0; i < 5; i++ {
		b.curl("-u", "admin:guess-"+fmt.Sprint(i), b.url(""))
	}
	if code, _ := b.curl("-u", b.admin(), b.url("")); code != 429 {
		t.Errorf("after 5 failed logins the right password gets %d, want 429", code)
	}
	// Within guard.HearEvery, the banned address's connections past
	// guard.HearBurst end before their handshake.
	closed := false
	for i := 0; i < guard.HearBurst && !closed; i++ {
		closed = exec.Command("curl", "-sS", "--cacert", b.caFile, "-u", b.admin(), b.url("")).Run() != nil
	}
	if !closed {
		t.Errorf("%d more connections from the banned address were all answered", guard.HearBurst)
	}
	if _, ok := b.sftp("admin", "password:"+b.password, "ls"); ok {
		t.Error("SFTP login from a banned address succeeded")
	}
	if !strings.Contains(b.stderrCapture.String(), "banned addr=127.0.0.1 ") {
		t.Errorf("the ban was not logged:\n%s", b.stderrCapture)
	}
}

// testConsoleURLs takes every line of the console's "Reach the box at" as
// printed, and uses it: the welcome page over plain HTTP (with the CA's
// fingerprint), the status page at each address, the files in the
// browser, WebDAV, and the SFTP command, whose host key must be the
// fingerprint printed above it.
func testConsoleURLs(t *testing.T, b *box) {
	console := b.waitStdout(t, "Reach the box at")
	block := console[strings.Index(console, "Reach the box at:"):]
	var lines []string
	for _, l := range strings.Split(block, "\n")[1:] {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		what, _, _ := strings.Cut(strings.TrimSpace(l), "  (")
		lines = append(lines, what)
	}
	caPEM, _ := os.ReadFile(b.caFile)
	blk, _ := pem.Decode(caPEM)
	kinds := map[string]bool{}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "http://"):
			kinds["welcome"] = true
			out, err := exec.Command("curl", "-sS", "--fail", l).Output()
			if err != nil || !strings.Contains(string(out), string(report.FingerprintHTML(fingerprintDER(t, blk.Bytes)))) {
				t.Errorf("%s: %v, without the CA's fingerprint", l, err)
			}
		case strings.HasSuffix(l, "/files/"):
			kinds["files"] = true
			if code, _ := b.curl("-o", "/dev/null", l); code != 303 && code != 200 {
				t.Errorf("%s = %d", l, code)
			}
		case strings.HasSuffix(l, files.Prefix+"/"):
			kinds["dav"] = true
			if code, _ := b.curl("-u", b.admin(), "-X", "PROPFIND", "-H", "Depth: 0", "-o", "/dev/null", l); code != 207 {
				t.Errorf("PROPFIND %s = %d", l, code)
			}
		case strings.HasPrefix(l, "https://"):
			kinds["status"] = true
			if code, _ := b.curl("-o", "/dev/null", l); code != 200 {
				t.Errorf("%s = %d", l, code)
			}
		case strings.HasPrefix(l, "sftp "):
			kinds["sftp"] = true
			args := strings.Fields(l)[1:]
			cmd := exec.Command("sftp", append(append([]string{}, sshOpts...), args...)...)
			cmd.Env, cmd.Stdin = b.sshEnv(), strings.NewReader("pwd\n")
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Remote working directory: /") {
				t.Errorf("%s: %v\n%s", l, err, out)
			}
			port := "22"
			for i, a := range args {
				if a == "-P" && i+1 < len(args) {
					port = args[i+1]
				}
			}
			host := args[len(args)-1][strings.Index(args[len(args)-1], "@")+1:]
			scan, _ := exec.Command("ssh-keyscan", "-p", port, host).Output()
			fp := exec.Command("ssh-keygen", "-lf", "-")
			fp.Stdin = bytes.NewReader(scan)
			out, _ := fp.Output()
			printed := regexp.MustCompile(`SFTP host key:[^\n]*\n\s+(SHA256:\S+)`).FindStringSubmatch(console)
			if printed == nil || !strings.Contains(string(out), printed[1]) {
				t.Errorf("the host key OpenSSH sees (%s) is not the one printed (%v)", out, printed)
			}
		default:
			t.Errorf("the console prints %q, which no test uses", l)
		}
	}
	for _, k := range []string{"welcome", "status", "files", "dav", "sftp"} {
		if !kinds[k] {
			t.Errorf("the console names no %s address:\n%s", k, block)
		}
	}
}

// fingerprintDER is pki.Fingerprint of a certificate in DER.
func fingerprintDER(t *testing.T, der []byte) string {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return pki.Fingerprint(c)
}
