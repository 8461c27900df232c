package main

// KDE's file layer end to end: KIO, which Dolphin and every KDE program
// open a webdavs:// address through, driven by its command-line client
// kioclient5 (Debian's kde-cli-tools). Run from TestSync, on its box.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testKIO lists, reads, copies in and out, renames and removes through
// webdavs://admin:PW@127.0.0.1:PORT/dav/, headless: Qt's offscreen
// platform, a fresh home, --noninteractive, and no D-Bus session, so no
// kpasswdserver: KIO cannot put up a password dialog to wait on, and a
// refused login fails the command at once. It trusts the box's CA where a
// person's KDE does, in the system's store (b.systemStore: KIO 5.103's
// worker took the CA neither from SSL_CERT_FILE nor from KIO's own store,
// kssl/userCaCertificates, when tried). Each step is checked on the
// box's disk and by the bytes that come back. KIO accepts HTML on every
// request and sends its first without credentials: the box must answer it
// with a Basic challenge, not the login form, or cat prints the login page.
func testKIO(t *testing.T, b *box) {
	need(t, "kioclient5")
	certs, ok := b.systemStore(t)
	if !ok {
		t.Skip("KIO trusts only the system's CA store, which needs a mount namespace to hold the box's CA")
	}
	home := t.TempDir()
	run := filepath.Join(home, "run")
	os.Mkdir(run, 0o700)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR="+run, "QT_QPA_PLATFORM=offscreen")
	kio := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		script := `mount --bind "$0" /etc/ssl/certs && exec kioclient5 --noninteractive "$@"`
		cmd := exec.CommandContext(ctx, "unshare", append([]string{"-m", "sh", "-ec", script, certs}, args...)...)
		cmd.Dir, cmd.Env = home, env
		// kioclient5 and the workers it starts, ended together.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if err != nil {
			t.Fatalf("kioclient5 %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String(), 2000))
		}
		return out
	}
	dav := (&url.URL{Scheme: "webdavs", User: url.UserPassword("admin", b.password), Host: "127.0.0.1:" + b.port(b.https), Path: "/dav/kio/"}).String()
	local := func(name string) string { return (&url.URL{Scheme: "file", Path: filepath.Join(home, name)}).String() }
	onBox := filepath.Join(b.state, "files", "admin", "kio")

	b.curl("-u", b.admin(), "-X", "MKCOL", b.url("kio"))
	fromBox := filepath.Join(b.work, "kio-from-box.bin")
	want := randomFile(t, fromBox, 300<<10)
	if code, _ := b.curl("-u", b.admin(), "-T", fromBox, b.url("kio/from-box.bin")); code != 201 {
		t.Fatalf("PUT kio/from-box.bin = %d", code)
	}

	if names := strings.Fields(string(kio("ls", dav))); !slices.Contains(names, "from-box.bin") {
		t.Errorf("kioclient5 ls %s = %q, want from-box.bin in it", dav, names)
	}
	if got := kio("cat", dav+"from-box.bin"); fmt.Sprintf("%x", sha256.Sum256(got)) != want {
		t.Errorf("kioclient5 cat from-box.bin: %d bytes that are not the file's (%.80q)", len(got), got)
	}
	kio("copy", dav+"from-box.bin", local("out.bin"))
	if got := sum(t, filepath.Join(home, "out.bin")); got != want {
		t.Errorf("kioclient5 copy out: the copy's SHA-256 is %s, the file's %s", got, want)
	}
	in := randomFile(t, filepath.Join(home, "in.bin"), 200<<10)
	// --overwrite, or KIO's worker first asks whether the destination
	// exists (PROPFIND) and spends the address's password on it: it tries
	// that password once a command, so the PUT after it would want
	// kpasswdserver's (KIO 5.103's http worker, copyPut). Dolphin's users
	// type the password into that dialog, which keeps it.
	kio("--overwrite", "copy", local("in.bin"), dav+"in.bin")
	if got := sum(t, filepath.Join(onBox, "in.bin")); got != in {
		t.Errorf("kioclient5 copy in: the box holds SHA-256 %s, want %s", got, in)
	}
	kio("move", dav+"in.bin", dav+"renamed by kio.bin")
	if got := sum(t, filepath.Join(onBox, "renamed by kio.bin")); got != in {
		t.Errorf("kioclient5 move: the renamed file's SHA-256 is %s, want %s", got, in)
	}
	kio("remove", dav+"from-box.bin")
	entries, _ := os.ReadDir(onBox)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, "|") != "renamed by kio.bin" {
		t.Errorf("after KIO's copy, move and remove the box holds %q, want the renamed file alone", names)
	}
}
