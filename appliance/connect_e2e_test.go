package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testConnectSteps logs in to the web pages as a person would, asks the
// connect page for an app password for each of rclone and the Nextcloud
// desktop, and runs their steps exactly as the page prints them (in a
// fresh home; the CA trusted as the welcome page says, through
// SSL_CERT_FILE for rclone, the system's store for nextcloudcmd), then
// sshfs's with the account's password, accepting the host key by the
// fingerprint the page shows.
func testConnectSteps(t *testing.T, b *box) {
	need(t, "rclone")
	ca, _ := os.ReadFile(b.caFile)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	base := "https://" + b.https
	get := func(path string) string {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	post := func(path string, form url.Values) string {
		resp, err := c.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	token := func(page string) string {
		m := regexp.MustCompile(`name="csrf" (?:value|content)="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no form token on:\n%.500s", page)
		}
		return m[1]
	}
	post("/login", url.Values{"csrf": {token(get("/login"))}, "username": {"admin"}, "password": {b.password}, "next": {"/connect"}})
	steps := func(client string) (string, string) {
		page := post("/connect", url.Values{"csrf": {token(get("/connect"))}, "client": {client}})
		m := regexp.MustCompile(`(?s)<pre data-client="` + client + `">(.*?)</pre>`).FindStringSubmatch(page)
		pw := regexp.MustCompile(`<code id="connect-password">([^<]+)</code>`).FindStringSubmatch(page)
		if m == nil || pw == nil {
			t.Fatalf("the connect page has no steps for %s with a password:\n%.2000s", client, page)
		}
		return html.UnescapeString(m[1]), pw[1]
	}
	run := func(what, script string, env ...string) string {
		t.Helper()
		home := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-ec", script)
		cmd.Dir = home
		cmd.Env = append(append(os.Environ(), "HOME="+home, "RCLONE_CONFIG="+filepath.Join(home, "rclone.conf")), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s, as the page prints it:\n%s\nfailed: %v\n%s", what, script, err, out)
		}
		return string(out)
	}
	// rclone: the page's config line, then a listing; a file put there by
	// curl must be listed.
	f := filepath.Join(b.work, "connect.txt")
	os.WriteFile(f, []byte("seen by rclone"), 0o644)
	b.curl("-u", b.admin(), "-X", "MKCOL", b.url("connect-dir"))
	script, _ := steps("rclone")
	if out := run("rclone", script, "SSL_CERT_FILE="+b.caFile); !strings.Contains(out, "connect-dir") {
		t.Errorf("rclone lsd, as the page prints it, does not list connect-dir:\n%s", out)
	}
	// Every address the page shows for an app: a PROPFIND there with the
	// app password answers (davs:// and webdavs:// are WebDAV over
	// HTTPS, as GNOME Files and Dolphin send it).
	page := post("/connect", url.Values{"csrf": {token(get("/connect"))}, "client": {"files"}})
	pwm := regexp.MustCompile(`<code id="connect-password">([^<]+)</code>`).FindStringSubmatch(page)
	if pwm == nil {
		t.Fatalf("no app password for the file manager:\n%.2000s", page)
	}
	pw := pwm[1]
	shown := regexp.MustCompile(`<code>((?:https|davs|webdavs)://[^<]+)</code>`).FindAllStringSubmatch(page, -1)
	if len(shown) < 6 {
		t.Errorf("the connect page shows %d addresses", len(shown))
	}
	for _, m := range shown {
		addr := html.UnescapeString(m[1])
		u := "https://" + addr[strings.Index(addr, "://")+3:]
		if code, _ := b.curl("-u", "admin:"+pw, "-X", "PROPFIND", "-H", "Depth: 0", "-o", "/dev/null", u); code != 207 && code/100 != 3 {
			t.Errorf("%s, as the page shows it: PROPFIND %s = %d", addr, u, code)
		}
	}
	// The Nextcloud desktop's nextcloudcmd: Qt trusts only the system's CA
	// store, so the steps run where the welcome page's Linux steps have put
	// the CA there: in a mount namespace of their own (b.systemStore).
	if _, err := exec.LookPath("nextcloudcmd"); err == nil {
		script, _ := steps("desktop")
		if certs, ok := b.systemStore(t); !ok {
			t.Logf("nextcloudcmd's steps not run")
		} else {
			home := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "unshare", "-m", "sh", "-ec", "mount --bind "+certs+" /etc/ssl/certs\n"+script)
			cmd.Dir, cmd.Env = home, append(os.Environ(), "HOME="+home)
			out, err := cmd.CombinedOutput()
			if fi, serr := os.Stat(filepath.Join(home, "bonesync", "connect-dir")); err != nil || serr != nil || !fi.IsDir() {
				t.Errorf("nextcloudcmd, as the page prints it:\n%s\n(%v, %v)\n%s", script, err, serr, tail(string(out), 2000))
			}
		}
	}
	// GNOME Files: "Connect to Server" with the address the page shows, the
	// user name and the app password it made, through gvfs as Files does it.
	for _, m := range shown {
		if addr := html.UnescapeString(m[1]); strings.HasPrefix(addr, "davs://") {
			gnomeFiles(t, b, addr, "admin", pw)
			break
		}
	}
	// sshfs: the page's two lines, with the account's password (an
	// askpass, as ssh asks for it) and the host key the page names
	// already accepted by its fingerprint.
	if _, err := exec.LookPath("sshfs"); err != nil {
		return
	}
	page = get("/connect")
	m := regexp.MustCompile(`(?s)<pre data-client="sshfs">(.*?)</pre>`).FindStringSubmatch(page)
	// The fingerprint as the page shows it: without the tags that let it
	// wrap (report.FingerprintHTML).
	key := regexp.MustCompile(`fingerprint is <code>(.*?)</code>`).FindStringSubmatch(page)
	if m == nil || key == nil {
		t.Fatalf("no sshfs steps or host key on the connect page:\n%.2000s", page)
	}
	key[1] = html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(key[1], ""))
	if !strings.HasPrefix(key[1], "SHA256:") {
		t.Fatalf("the connect page's host key is %q, not an SSH fingerprint", key[1])
	}
	home := t.TempDir()
	port := b.port(b.ssh)
	scan, _ := exec.Command("ssh-keyscan", "-p", port, "127.0.0.1").Output()
	fp := exec.Command("ssh-keygen", "-lf", "-")
	fp.Stdin = strings.NewReader(string(scan))
	if out, _ := fp.Output(); !strings.Contains(string(out), key[1]) {
		t.Errorf("the page's host key %s is not the box's:\n%s", key[1], out)
	}
	// The person at the first connection: types the fingerprint the page
	// shows when ssh asks about the host key (OpenSSH takes it in place of
	// yes), then the password.
	askpass := filepath.Join(home, "askpass")
	os.WriteFile(askpass, []byte("#!/bin/sh\ncase \"$1\" in *fingerprint*|*yes/no*) echo '"+key[1]+"' ;; *) echo '"+b.password+"' ;; esac\n"), 0o700)
	script = html.UnescapeString(m[1])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a prompt that loops must not hang the test
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-ec", script)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
	// Output to a file, not a pipe: sshfs's ssh stays behind, holding
	// whatever it was given, and a pipe would never close.
	log, _ := os.Create(filepath.Join(t.TempDir(), "sshfs.log"))
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(log.Name())
		t.Skipf("sshfs cannot mount here (FUSE?): %v\n%s\n%s", err, script, out)
	}
	defer exec.Command("fusermount", "-u", filepath.Join(home, "bonesync")).Run()
	if fi, err := os.Stat(filepath.Join(home, "bonesync", "connect-dir")); err != nil || !fi.IsDir() {
		t.Errorf("the mount, as the page prints it, does not show connect-dir: %v", err)
	}
}

// gnomeFiles mounts addr through gvfs (gio mount, as GNOME Files' "Connect
// to Server" does) with user and pw typed at its prompt, in a mount
// namespace whose system CA store holds the box's CA (as the welcome page's Linux
// steps leave it) and a D-Bus session of its own; copies a file in, lists,
// reads a file the box has, renames and removes, and checks each on the box.
func gnomeFiles(t *testing.T, b *box, addr, user, pw string) {
	t.Helper()
	for _, bin := range []string{"gio", "dbus-run-session", "/usr/libexec/gvfsd-dav"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Logf("GNOME Files' steps not run: %s missing (scripts/install-test-deps.sh installs gvfs-backends)", bin)
			return
		}
	}
	certs, ok := b.systemStore(t)
	if !ok {
		t.Logf("GNOME Files' steps not run")
		return
	}
	home := t.TempDir()
	fromBox := filepath.Join(t.TempDir(), "from-box.txt")
	os.WriteFile(fromBox, []byte("from the box"), 0o644)
	b.curl("-u", b.admin(), "-T", fromBox, b.url("from-box.txt"))
	local := filepath.Join(home, "gnome.txt")
	os.WriteFile(local, []byte("written by GNOME Files"), 0o644)
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	dir := strings.TrimSuffix(addr, "/")
	script := "mount --bind " + certs + " /etc/ssl/certs\n" +
		"exec dbus-run-session -- sh -ec " + q(strings.Join([]string{
		"printf '%s\\n%s\\n' " + q(user) + " " + q(pw) + " | gio mount " + q(addr),
		"gio copy " + q(local) + " " + q(dir+"/gnome.txt"),
		"echo LIST; gio list " + q(addr),
		"echo CAT; gio cat " + q(dir+"/from-box.txt"),
		"gio move " + q(dir+"/gnome.txt") + " " + q(dir+"/gnome-renamed.txt"),
		"gio remove " + q(dir+"/from-box.txt"),
		"gio mount -u " + q(addr),
	}, "\n")) + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-m", "sh", "-ec", script)
	cmd.Dir, cmd.Env = home, append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("GNOME Files (gvfs) with %s as the connect page shows it: %v\n%s", addr, err, tail(string(out), 3000))
	}
	list, _, _ := strings.Cut(string(out)[strings.Index(string(out), "LIST"):], "CAT")
	if !strings.Contains(list, "connect-dir") || !strings.Contains(list, "from-box.txt") {
		t.Errorf("gio list of %s does not show the box's files:\n%s", addr, list)
	}
	if !strings.Contains(string(out), "from the box") {
		t.Errorf("gio cat did not read from-box.txt:\n%s", tail(string(out), 2000))
	}
	if code, body := b.curl("-u", b.admin(), b.url("gnome-renamed.txt")); code != 200 || body != "written by GNOME Files" {
		t.Errorf("the file GNOME Files wrote and renamed: %d %q", code, body)
	}
	if code, _ := b.curl("-u", b.admin(), "-o", "/dev/null", b.url("from-box.txt")); code != 404 {
		t.Errorf("the file GNOME Files removed: GET = %d", code)
	}
}
