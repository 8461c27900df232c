package main

// Sync, not just serve: conditional requests, dates and checksums with
// curl; the Nextcloud desktop client (nextcloudcmd) and rclone's nextcloud
// vendor syncing both ways; a server killed mid-upload. Run from TestSync,
// on its box.

import (
	"bytes"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// header returns the value of a response header in curl -D output.
func header(resp, name string) string {
	for _, line := range strings.Split(resp, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// head runs curl and returns the status and the response headers.
func (b *box) head(args ...string) (int, string) {
	b.t.Helper()
	return b.curl(append([]string{"-D", "-", "-o", "/dev/null"}, args...)...)
}

func propfind(b *box, depth, url, props string) (int, string) {
	b.t.Helper()
	body := `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` + props + `</d:prop></d:propfind>`
	return b.curl("-u", b.admin(), "-X", "PROPFIND", "-H", "Depth: "+depth, "--data", body, url)
}

func getetag(t *testing.T, b *box, url string) string {
	t.Helper()
	code, body := propfind(b, "0", url, "<d:getetag/>")
	m := regexp.MustCompile(`<d:getetag>([^<]*)</d:getetag>`).FindStringSubmatch(body)
	if code != 207 || m == nil {
		t.Fatalf("PROPFIND getetag %s = %d %.300s", url, code, body)
	}
	return m[1]
}

func testConditions(t *testing.T, b *box) {
	f := filepath.Join(b.work, "cond.txt")
	os.WriteFile(f, []byte("version one"), 0o644)
	put := func(extra ...string) (int, string) {
		return b.head(append([]string{"-u", b.admin(), "-T", f}, append(extra, b.url("cond/c.txt"))...)...)
	}
	b.curl("-u", b.admin(), "-X", "MKCOL", b.url("cond"))
	code, h := put("-H", "X-OC-Mtime: 1500000000")
	etag := header(h, "ETag")
	if code != 201 || etag == "" || header(h, "OC-ETag") != etag || header(h, "X-OC-MTime") != "accepted" || header(h, "OC-FileId") == "" {
		t.Fatalf("PUT = %d, headers:\n%s", code, h)
	}
	if _, body := propfind(b, "0", b.url("cond/c.txt"), "<d:getlastmodified/>"); !strings.Contains(body, "Fri, 14 Jul 2017 02:40:00 GMT") {
		t.Errorf("X-OC-Mtime 1500000000 was not kept:\n%s", body)
	}
	unchanged := func(what string) {
		t.Helper()
		if code, body := b.curl("-u", b.admin(), b.url("cond/c.txt")); code != 200 || body != "version one" {
			t.Errorf("after %s the file is %d %q, want it untouched", what, code, body)
		}
	}
	os.WriteFile(f, []byte("version two"), 0o644)
	for _, tc := range []struct {
		what string
		args []string
		want int
	}{
		{"PUT If-Match wrong", []string{"-T", f, "-H", `If-Match: "not-it"`}, 412},
		{"PUT If-Match weak", []string{"-T", f, "-H", "If-Match: W/" + etag}, 412},
		{"PUT If-None-Match *", []string{"-T", f, "-H", "If-None-Match: *"}, 412},
		{"PUT If-None-Match current", []string{"-T", f, "-H", "If-None-Match: " + etag}, 412},
		{"PUT If-Unmodified-Since before", []string{"-T", f, "-H", "If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT"}, 412},
		{"PUT Content-Range", []string{"-T", f, "-H", "Content-Range: bytes 2-3/10"}, 400},
		{"PUT wrong OC-Checksum", []string{"-T", f, "-H", "OC-Checksum: SHA1:" + strings.Repeat("0", 40)}, 400},
		{"PUT wrong Content-MD5", []string{"-T", f, "-H", "Content-MD5: AAAAAAAAAAAAAAAAAAAAAA=="}, 400},
		{"DELETE If-Match wrong", []string{"-X", "DELETE", "-H", `If-Match: "not-it"`}, 412},
		{"MOVE If-Match wrong", []string{"-X", "MOVE", "-H", "Destination: " + b.url("cond/moved.txt"), "-H", `If-Match: "not-it"`}, 412},
		{"COPY If-Unmodified-Since", []string{"-X", "COPY", "-H", "Destination: " + b.url("cond/copy.txt"), "-H", "If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT"}, 412},
		{"PROPPATCH If-Match wrong", []string{"-X", "PROPPATCH", "-H", `If-Match: "not-it"`, "--data",
			`<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:lastmodified>1</d:lastmodified></d:prop></d:set></d:propertyupdate>`}, 412},
	} {
		code, _ := b.curl(append(append([]string{"-u", b.admin()}, tc.args...), b.url("cond/c.txt"))...)
		if code != tc.want {
			t.Errorf("%s = %d, want %d", tc.what, code, tc.want)
		}
		unchanged(tc.what)
	}
	if _, err := os.Stat(filepath.Join(b.state, "files", "admin", "cond", "copy.txt")); err == nil {
		t.Error("a COPY refused with 412 made its copy")
	}
	// The right conditions and checksum go through.
	sum := sha1.Sum([]byte("version two"))
	code, h = put("-H", "If-Match: "+etag, "-H", "OC-Checksum: SHA1:"+hex.EncodeToString(sum[:]))
	if code != 204 || header(h, "ETag") == etag {
		t.Errorf("PUT with the current ETag = %d, ETag %s (was %s)", code, header(h, "ETag"), etag)
	}
	code, h = b.head("-u", b.admin(), b.url("cond/c.txt"))
	if want := "SHA1:" + hex.EncodeToString(sum[:]); code != 200 || header(h, "OC-Checksum") != want {
		t.Errorf("GET OC-Checksum = %q, want %q", header(h, "OC-Checksum"), want)
	}
	if _, body := propfind(b, "1", b.url("cond/"), "<oc:checksums/><oc:fileid/><oc:permissions/>"); !strings.Contains(body, "SHA1:"+hex.EncodeToString(sum[:])) {
		t.Errorf("PROPFIND oc:checksums lacks the SHA-1:\n%s", body)
	}
	// PROPPATCH lastmodified sets the date (ownCloud's way).
	if code, _ := b.curl("-u", b.admin(), "-X", "PROPPATCH", "--data",
		`<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:lastmodified>1400000000</d:lastmodified></d:prop></d:set></d:propertyupdate>`,
		b.url("cond/c.txt")); code != 207 {
		t.Errorf("PROPPATCH lastmodified = %d", code)
	}
	if _, body := propfind(b, "0", b.url("cond/c.txt"), "<d:getlastmodified/>"); !strings.Contains(body, "Tue, 13 May 2014 16:53:20 GMT") {
		t.Errorf("PROPPATCH lastmodified was not kept:\n%s", body)
	}
	// COPY keeps the date; MOVE keeps date, id and ETag.
	b.curl("-u", b.admin(), "-X", "COPY", "-H", "Destination: "+b.url("cond/copy.txt"), b.url("cond/c.txt"))
	if _, body := propfind(b, "0", b.url("cond/copy.txt"), "<d:getlastmodified/>"); !strings.Contains(body, "Tue, 13 May 2014 16:53:20 GMT") {
		t.Errorf("COPY did not keep the date:\n%s", body)
	}
	before := getetag(t, b, b.url("cond/c.txt"))
	b.curl("-u", b.admin(), "-X", "MOVE", "-H", "Destination: "+b.url("cond/moved.txt"), b.url("cond/c.txt"))
	if after := getetag(t, b, b.url("cond/moved.txt")); after != before {
		t.Errorf("MOVE changed the ETag %s -> %s", before, after)
	}

	// Folder ETags: a change deep down changes every folder above it, and
	// nothing else.
	for _, d := range []string{"cond/x", "cond/x/y", "cond/other"} {
		b.curl("-u", b.admin(), "-X", "MKCOL", b.url(d))
	}
	top, x, other := getetag(t, b, b.url("")), getetag(t, b, b.url("cond/x")), getetag(t, b, b.url("cond/other"))
	if again := getetag(t, b, b.url("")); again != top {
		t.Errorf("the top ETag changed with nothing changed: %s -> %s", top, again)
	}
	b.curl("-u", b.admin(), "-T", f, b.url("cond/x/y/deep.txt"))
	if getetag(t, b, b.url("")) == top || getetag(t, b, b.url("cond/x")) == x {
		t.Error("an upload three folders down left the top or its folder's ETag as it was")
	}
	if getetag(t, b, b.url("cond/other")) != other {
		t.Error("an upload changed the ETag of a folder beside it")
	}

	// /dav without its slash, as GNOME Files asks.
	if code, _ := b.curl("-u", b.admin(), "-X", "PROPFIND", "-H", "Depth: 0", strings.TrimSuffix(b.url(""), "/")); code != 207 {
		t.Errorf("PROPFIND /dav = %d, want 207", code)
	}
	if code, _ := b.curl("-u", b.admin(), "-X", "OPTIONS", strings.TrimSuffix(b.url(""), "/")); code != 200 {
		t.Errorf("OPTIONS /dav = %d, want 200", code)
	}
	// NFD and NFC reach one file; a 255-byte name can be uploaded.
	b.curl("-u", b.admin(), "-T", f, b.url("cond/Cafe%CC%81.txt"))
	if code, body := b.curl("-u", b.admin(), b.url("cond/Caf%C3%A9.txt")); code != 200 || body != "version two" {
		t.Errorf("an NFD upload read back as NFC = %d %q", code, body)
	}
	long := strings.Repeat("l", 255)
	if code, _ := b.curl("-u", b.admin(), "-T", f, b.url("cond/"+long)); code != 201 {
		t.Errorf("PUT of a 255-byte name = %d, want 201", code)
	}
}

// ncRequests are the requests nextcloudcmd logged: "METHOD URL", with the
// Qt operation number standing for the method where it logs none.
func ncRequests(log string) []string {
	var out []string
	ops := map[string]string{"1": "HEAD", "2": "GET", "3": "PUT", "4": "POST", "5": "DELETE"}
	re := regexp.MustCompile(`accessmanager \]:\s+(\d) "([A-Z]*)" "([^"]*)"`)
	for _, m := range re.FindAllStringSubmatch(log, -1) {
		method := m[2]
		if method == "" {
			method = ops[m[1]]
		}
		out = append(out, method+" "+m[3])
	}
	return out
}

// syncClient is a desktop sync client's command-line form and how to run
// it; both name a conflict copy "doc (conflicted copy DATE).txt".
type syncClient struct {
	cmd, user string
	args      func(b *box) []string // before the user's
}

var (
	nextcloudcmd = syncClient{cmd: "nextcloudcmd", user: "nc-user"}
	// Debian's owncloud-client-cmd 2.11: it wants an exclude list (the
	// package's system list comes with the GUI client).
	owncloudcmd = syncClient{cmd: "owncloudcmd", user: "oc-user",
		args: func(b *box) []string {
			excl := filepath.Join(b.work, "oc-exclude.lst")
			os.WriteFile(excl, nil, 0o644)
			return []string{"--exclude", excl}
		}}
)

func testNextcloudcmd(t *testing.T, b *box) { testSyncClient(t, b, nextcloudcmd) }
func testOwncloudcmd(t *testing.T, b *box)  { testSyncClient(t, b, owncloudcmd) }

// testSyncClient runs a desktop client's whole scenario against the box:
// two devices, a large file (chunked), dates kept, an unchanged sync that
// moves nothing, an edit, a file and a folder renamed, a folder deleted,
// and both sides editing one file.
func testSyncClient(t *testing.T, b *box, c syncClient) {
	need(t, c.cmd)
	// A user of its own: the client syncs the whole account.
	user, pw := c.user, c.user+"-secret"
	add := exec.Command(built(t), "user", "-state", b.state, "add", user)
	add.Stdin = strings.NewReader(pw + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	server := "https://127.0.0.1:" + b.port(b.https)
	sync := func(dir string) []string {
		t.Helper()
		args := []string{"--trust", "--non-interactive"}
		if c.args != nil {
			args = append(args, c.args(b)...)
		}
		cmd := exec.Command(c.cmd, append(args, "-u", user, "-p", pw, dir, server)...)
		cmd.Env = append(os.Environ(), "HOME="+b.work)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", c.cmd, dir, err, tail(string(out), 3000))
		}
		return ncRequests(string(out))
	}
	one := filepath.Join(b.work, c.cmd+"-one")
	for f, size := range map[string]int{"doc.txt": 100, "photos/a.jpg": 300 << 10, "photos/2024/big.bin": 12 << 20, "deep/er/x.txt": 10, "album/b.txt": 20} {
		os.MkdirAll(filepath.Dir(filepath.Join(one, f)), 0o755)
		randomFile(t, filepath.Join(one, f), size)
	}
	old := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	os.Chtimes(filepath.Join(one, "doc.txt"), old, old)
	sync(one)
	home := filepath.Join(b.state, "files", user)
	sameTree(t, one, home, "after the first upload")
	if fi, err := os.Stat(filepath.Join(home, "doc.txt")); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("doc.txt on the server dated %v, want the client's %v", fi.ModTime(), old)
	}
	// The client records no ETag for a folder it made itself until the
	// next sync has listed it (as against a Nextcloud server): one sync
	// lists the new folders once, then nothing changed means the root's
	// listing and nothing else.
	sync(one)
	reqs := sync(one)
	var dav []string
	for _, r := range reqs {
		if !strings.Contains(r, "/status.php") && !strings.Contains(r, "/ocs/") {
			dav = append(dav, r)
		}
	}
	t.Logf("an unchanged sync made %d requests: %v", len(reqs), reqs)
	if len(dav) != 1 || !strings.HasPrefix(dav[0], "PROPFIND ") {
		t.Errorf("a sync with nothing changed made these WebDAV requests, want one PROPFIND of the root: %v", dav)
	}
	// A second device downloads the tree, with its dates.
	two := filepath.Join(b.work, c.cmd+"-two")
	os.Mkdir(two, 0o755)
	sync(two)
	sameTree(t, one, two, "on a second device")
	if fi, _ := os.Stat(filepath.Join(two, "doc.txt")); fi == nil || !fi.ModTime().Equal(old) {
		t.Errorf("doc.txt downloaded with date %v, want %v", fi.ModTime(), old)
	}
	// Edit, renames and a delete on one device reach the other.
	os.WriteFile(filepath.Join(one, "doc.txt"), []byte("edited on one"), 0o644)
	os.Rename(filepath.Join(one, "photos/a.jpg"), filepath.Join(one, "photos/renamed.jpg"))
	os.Rename(filepath.Join(one, "album"), filepath.Join(one, "album 2025"))
	os.RemoveAll(filepath.Join(one, "deep"))
	sync(one)
	sync(two)
	sameTree(t, one, two, "after an edit, two renames and a delete")
	sameTree(t, one, home, "on the server after an edit, two renames and a delete")
	// Both sides edit one file: the server's version wins, the local edit is
	// kept as a conflict copy.
	os.WriteFile(filepath.Join(one, "doc.txt"), []byte("one's edit"), 0o644)
	os.WriteFile(filepath.Join(two, "doc.txt"), []byte("two's edit, longer"), 0o644)
	sync(one)
	sync(two)
	if got, _ := os.ReadFile(filepath.Join(two, "doc.txt")); string(got) != "one's edit" {
		t.Errorf("after a conflict two's doc.txt = %q, want the server's (one's) version", got)
	}
	copies, _ := filepath.Glob(filepath.Join(two, "doc (conflicted copy *).txt"))
	if len(copies) != 1 {
		entries, _ := os.ReadDir(two)
		t.Fatalf("conflict copies on two: %v (the folder: %v)", copies, entries)
	}
	if got, _ := os.ReadFile(copies[0]); string(got) != "two's edit, longer" {
		t.Errorf("the conflict copy holds %q, want two's edit", got)
	}
	if got, _ := os.ReadFile(filepath.Join(home, "doc.txt")); string(got) != "one's edit" {
		t.Errorf("after the conflict the server holds %q", got)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// sameTree checks that two folders hold the same files with the same
// content, ignoring the sync clients' own files.
func sameTree(t *testing.T, a, b, what string) {
	t.Helper()
	list := func(root string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(rel, ".") || strings.Contains(rel, "conflicted copy") {
				return nil
			}
			s, _ := os.ReadFile(p)
			m[rel] = fmt.Sprintf("%x", sha1.Sum(s))
			return nil
		})
		return m
	}
	la, lb := list(a), list(b)
	for k, v := range la {
		if lb[k] != v {
			t.Errorf("%s: %s differs or is missing", what, k)
		}
	}
	for k := range lb {
		if _, ok := la[k]; !ok {
			t.Errorf("%s: %s should not be there", what, k)
		}
	}
}

func testRcloneNextcloud(t *testing.T, b *box) {
	obscured, err := exec.Command("rclone", "obscure", b.password).Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "RCLONE_CONFIG=/dev/null",
		"RCLONE_CONFIG_NC_TYPE=webdav", "RCLONE_CONFIG_NC_VENDOR=nextcloud",
		"RCLONE_CONFIG_NC_URL=https://localhost:"+b.port(b.https)+"/remote.php/dav/files/admin/",
		"RCLONE_CONFIG_NC_USER=admin", "RCLONE_CONFIG_NC_PASS="+strings.TrimSpace(string(obscured)))
	rclone := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("rclone", append([]string{"--ca-cert", b.caFile, "--retries", "1", "-v"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("rclone %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tree := filepath.Join(b.work, "rc-nc")
	rcloneSyncs(t, rclone, tree, "nc:rcnc", "sub/deeper/c.bin")
	rclone("check", "--checksum", tree, "nc:rcnc")
	// bisync: a change on each side reaches the other.
	work := filepath.Join(b.work, "bisync")
	rclone("bisync", "--workdir", work, "--resync", tree, "nc:rcnc")
	os.WriteFile(filepath.Join(tree, "local-new.txt"), []byte("from the PC"), 0o644)
	f := filepath.Join(b.work, "remote-new.txt")
	os.WriteFile(f, []byte("from the box"), 0o644)
	b.curl("-u", b.admin(), "-T", f, b.url("rcnc/remote-new.txt"))
	time.Sleep(1100 * time.Millisecond) // bisync compares dates to the second
	rclone("bisync", "--workdir", work, tree, "nc:rcnc")
	if got, _ := os.ReadFile(filepath.Join(tree, "remote-new.txt")); string(got) != "from the box" {
		t.Errorf("bisync did not bring the box's new file: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(b.state, "files", "admin", "rcnc", "local-new.txt")); string(got) != "from the PC" {
		t.Errorf("bisync did not take the PC's new file: %q", got)
	}
}

// rcloneSyncs makes a small tree at dir and checks what every sync
// backend must do: a second sync copies nothing, and an edit that keeps the
// size is found, by its date (a minute later, as a person's edit would be:
// rclone compares dates to the second).
func rcloneSyncs(t *testing.T, rclone func(...string) string, dir, remote string, extra ...string) {
	t.Helper()
	for _, f := range append([]string{"a.txt", "sub/b.bin"}, extra...) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		randomFile(t, filepath.Join(dir, f), 5000)
	}
	rclone("sync", dir, remote)
	if out := rclone("sync", dir, remote); strings.Contains(out, "Copied") {
		t.Errorf("a second rclone sync to %s with nothing changed copied files:\n%s", remote, out)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Repeat("x", 5000)), 0o644)
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(dir, "a.txt"), later, later)
	if out := rclone("sync", dir, remote); !strings.Contains(out, "a.txt: Copied") {
		t.Errorf("a same-size edit was not transferred to %s:\n%s", remote, out)
	}
}

// A server killed in the middle of uploads comes back with every file's
// digests agreeing with its content, and no upload half-applied.
func testKilledServer(t *testing.T, b *box) {
	files, state := t.TempDir(), cloneState(t, b.state)
	k := startBox(t, state, "-files", files)
	k.password = b.password
	src := filepath.Join(b.work, "kill.bin")
	randomFile(t, src, 16<<20)
	small := filepath.Join(b.work, "small-kill.txt")
	os.WriteFile(small, []byte("acknowledged before the kill"), 0o644)
	if code, _ := k.curl("-u", k.admin(), "-T", small, k.url("kept.txt")); code != 201 {
		t.Fatalf("PUT before the kill = %d", code)
	}
	up := exec.Command("curl", "-sS", "--cacert", k.caFile, "-u", k.admin(), "--limit-rate", "2M", "-T", src, k.url("big.bin"))
	up.Start()
	staging := filepath.Join(files, ".bonesync", "staging", "*")
	for i := 0; i < 300; i++ {
		if m, _ := filepath.Glob(staging); len(m) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	k.cmd.Process.Signal(syscall.SIGKILL)
	k.cmd.Wait()
	up.Wait()
	k2 := startBox(t, state, "-files", files)
	k2.password = b.password
	if code, body := k2.curl("-u", k2.admin(), k2.url("kept.txt")); code != 200 || body != "acknowledged before the kill" {
		t.Errorf("after the kill kept.txt = %d %q", code, body)
	}
	if code, _ := k2.curl("-u", k2.admin(), k2.url("big.bin")); code != 404 {
		t.Errorf("the upload cut by the kill left big.bin (%d)", code)
	}
	if m, _ := filepath.Glob(staging); len(m) != 0 {
		t.Errorf("staging holds %v after the restart", m)
	}
	_, body := propfind(k2, "infinity", k2.url(""), "<oc:checksums/>")
	checked := 0
	for _, resp := range strings.Split(body, "<d:response>") {
		href := regexp.MustCompile(`<d:href>/dav/([^<]*)</d:href>`).FindStringSubmatch(resp)
		sum := regexp.MustCompile(`SHA1:([0-9a-f]{40})`).FindStringSubmatch(resp)
		if href == nil || sum == nil {
			continue
		}
		content, _ := os.ReadFile(filepath.Join(files, "admin", href[1]))
		if fmt.Sprintf("%x", sha1.Sum(content)) != sum[1] {
			t.Errorf("%s: its SHA-1 disagrees with its content after the kill", href[1])
		}
		checked++
	}
	if checked == 0 {
		t.Errorf("no file with a checksum after the restart:\n%s", body)
	}
	k2.stop()
}

// A WebDAV lock binds SFTP too, and shows in lockdiscovery.
func testLocks(t *testing.T, b *box) {
	f := filepath.Join(b.work, "locked.txt")
	os.WriteFile(f, []byte("locked content"), 0o644)
	b.curl("-u", b.admin(), "-T", f, b.url("locked.txt"))
	code, h := b.curl("-u", b.admin(), "-X", "LOCK", "-D", "-", "-H", "Timeout: Second-600", "--data",
		`<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>laptop</d:owner></d:lockinfo>`,
		b.url("locked.txt"))
	token := strings.Trim(header(h, "Lock-Token"), "<>")
	if code != 200 || token == "" {
		t.Fatalf("LOCK = %d:\n%s", code, h)
	}
	if _, body := propfind(b, "0", b.url("locked.txt"), "<d:lockdiscovery/>"); !strings.Contains(body, token) || !strings.Contains(body, "laptop") {
		t.Errorf("lockdiscovery does not show the lock:\n%s", body)
	}
	other := filepath.Join(b.work, "other.txt")
	os.WriteFile(other, []byte("from sftp"), 0o644)
	pw := "password:" + b.password
	for _, cmd := range []string{"put " + other + " locked.txt", "rm locked.txt", "rename locked.txt elsewhere.txt"} {
		if out, ok := b.sftp("admin", pw, cmd); ok || !strings.Contains(strings.ToLower(out), "permission denied") {
			t.Errorf("SFTP %q on a locked file: ok=%v\n%s", cmd, ok, out)
		}
	}
	if code, _ := b.curl("-u", b.admin(), "-T", other, b.url("locked.txt")); code != 423 {
		t.Errorf("PUT without the lock token = %d, want 423", code)
	}
	if code, body := b.curl("-u", b.admin(), b.url("locked.txt")); code != 200 || body != "locked content" {
		t.Errorf("the locked file became %d %q", code, body)
	}
	if code, _ := b.curl("-u", b.admin(), "-X", "UNLOCK", "-H", "Lock-Token: <"+token+">", b.url("locked.txt")); code != 204 {
		t.Errorf("UNLOCK = %d", code)
	}
	if out, ok := b.sftp("admin", pw, "rm locked.txt"); !ok {
		t.Errorf("SFTP rm after UNLOCK failed:\n%s", out)
	}
}

// A quota holds on every way in, reports through RFC 4331, and a refused
// write leaves the old file as it was.
func testQuota(t *testing.T, b *box) {
	const user, pw = "quota-user", "quota-secret"
	add := exec.Command(built(t), "user", "-state", b.state, "add", user)
	add.Stdin = strings.NewReader(pw + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	if out, err := exec.Command(built(t), "user", "-state", b.state, "quota", user, "1M").CombinedOutput(); err != nil {
		t.Fatalf("user quota: %v %s", err, out)
	}
	if out, _ := exec.Command(built(t), "user", "-state", b.state, "list").Output(); !strings.Contains(string(out), "quota 1 MiB") {
		t.Errorf("user list does not show the quota:\n%s", out)
	}
	auth := user + ":" + pw
	url := func(p string) string { return "https://localhost:" + b.port(b.https) + "/dav/" + p }
	small, big := filepath.Join(b.work, "q-small"), filepath.Join(b.work, "q-big")
	os.WriteFile(small, []byte(strings.Repeat("s", 600<<10)), 0o644)
	randomFile(t, big, 700<<10)
	if code, _ := b.curl("-u", auth, "-T", small, url("a.bin")); code != 201 {
		t.Fatalf("PUT within the quota = %d", code)
	}
	if code, _ := b.curl("-u", auth, "-T", big, url("b.bin")); code != 507 {
		t.Errorf("PUT past the quota = %d, want 507", code)
	}
	if code, _ := b.curl("-u", auth, "-X", "COPY", "-H", "Destination: "+url("copy.bin"), url("a.bin")); code != 507 {
		t.Errorf("COPY past the quota = %d, want 507", code)
	}
	// A COPY onto an existing file that does not fit leaves that file.
	os.WriteFile(filepath.Join(b.work, "q-tiny"), []byte("tiny"), 0o644)
	b.curl("-u", auth, "-T", filepath.Join(b.work, "q-tiny"), url("tiny.txt"))
	if code, _ := b.curl("-u", auth, "-X", "COPY", "-H", "Destination: "+url("tiny.txt"), url("a.bin")); code != 507 {
		t.Errorf("COPY onto a file past the quota = %d, want 507", code)
	}
	if code, body := b.curl("-u", auth, url("tiny.txt")); code != 200 || body != "tiny" {
		t.Errorf("a refused COPY changed its destination: %d %q", code, body)
	}
	// Replacing a file counts the difference only.
	if code, _ := b.curl("-u", auth, "-T", big, url("a.bin")); code != 204 {
		t.Errorf("replacing within the quota = %d, want 204", code)
	}
	// Chunked upload past the quota: the parts count with the files, so
	// the part that would pass it is refused, and an assembly of what came
	// is refused for its length.
	up := "https://localhost:" + b.port(b.https) + "/remote.php/dav/uploads/" + user + "/t1"
	part := filepath.Join(b.work, "q-part")
	os.WriteFile(part, []byte(strings.Repeat("p", 200<<10)), 0o644)
	b.curl("-u", auth, "-X", "MKCOL", up)
	for _, p := range []struct {
		name string
		want int
	}{{"/00001", 201}, {"/00002", 507}} {
		if code, _ := b.curl("-u", auth, "-T", part, up+p.name); code != p.want {
			t.Errorf("PUT of part %s = %d, want %d", p.name, code, p.want)
		}
	}
	if code, _ := b.curl("-u", auth, "-X", "MOVE", "-H", "OC-Total-Length: 409600", "-H", "Destination: /remote.php/dav/files/"+user+"/c.bin", up+"/.file"); code != 400 {
		t.Errorf("assembly of parts short of OC-Total-Length = %d, want 400", code)
	}
	if _, body := b.curl("-u", auth, "-X", "PROPFIND", "-H", "Depth: 0", "--data",
		`<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:quota-used-bytes/><d:quota-available-bytes/></d:prop></d:propfind>`, url("")); !strings.Contains(body, fmt.Sprintf("<d:quota-used-bytes>%d</d:quota-used-bytes>", 700<<10+4)) ||
		!strings.Contains(body, fmt.Sprintf("<d:quota-available-bytes>%d</d:quota-available-bytes>", 1<<20-700<<10-4)) {
		t.Errorf("RFC 4331 properties:\n%s", body)
	}
	out, ok := b.sftp(user, "password:"+pw, "put "+small+" s.bin")
	if ok {
		t.Errorf("SFTP put past the quota succeeded:\n%s", out)
	}
	for _, p := range []string{"b.bin", "copy.bin", "c.bin", "s.bin"} {
		if _, err := os.Stat(filepath.Join(b.state, "files", user, p)); err == nil {
			t.Errorf("a write refused for the quota left %s", p)
		}
	}
	if got := sum(t, filepath.Join(b.state, "files", user, "a.bin")); got != sum(t, big) {
		t.Error("a.bin is not the last version that fitted")
	}
}

// A chunked upload survives a part cut off mid-way: the listing shows only
// whole parts, the client sends the rest, and the assembly is the file.
func testChunkResume(t *testing.T, b *box) {
	base := "https://localhost:" + b.port(b.https)
	up := base + "/remote.php/dav/uploads/admin/resume1"
	if code, _ := b.curl("-u", b.admin(), "-X", "MKCOL", up); code != 201 {
		t.Fatalf("MKCOL of the transfer = %d", code)
	}
	p1, p2 := filepath.Join(b.work, "part1"), filepath.Join(b.work, "part2")
	randomFile(t, p1, 1<<20)
	randomFile(t, p2, 1<<20)
	if code, _ := b.curl("-u", b.admin(), "-T", p1, up+"/00001"); code != 201 {
		t.Fatalf("PUT of part 1 = %d", code)
	}
	// Part 2 stalls after 300 KiB; the client gives up on it and sends it
	// again, and only then does the first request go on (bytes the server
	// must keep apart from the new copy) and drop.
	pool := x509.NewCertPool()
	ca, _ := os.ReadFile(b.caFile)
	pool.AppendCertsFromPEM(ca)
	conn, err := tls.Dial("tcp", "localhost:"+b.port(b.https), &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /remote.php/dav/uploads/admin/resume1/00002 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic %s\r\nContent-Length: %d\r\n\r\n",
		base64.StdEncoding.EncodeToString([]byte(b.admin())), 1<<20)
	data, _ := os.ReadFile(p2)
	conn.Write(data[:300<<10])
	defer conn.Close()
	listing := func() string {
		_, body := b.curl("-u", b.admin(), "-X", "PROPFIND", "-H", "Depth: 1", up)
		return body
	}
	time.Sleep(300 * time.Millisecond)
	if l := listing(); !strings.Contains(l, "00001") || strings.Contains(l, "00002") {
		t.Errorf("while a part is being sent the transfer lists:\n%s", l)
	}
	if code, _ := b.curl("-u", b.admin(), "-T", p2, up+"/00002"); code != 201 {
		t.Fatalf("PUT of part 2 again = %d", code)
	}
	conn.Write(bytes.Repeat([]byte("stale"), 20<<10))
	conn.Close()
	for end := time.Now().Add(10 * time.Second); !strings.Contains(b.stderrCapture.String(), "method=PUT user=admin path=/remote.php/dav/uploads/admin/resume1/00002 "); {
		if time.Now().After(end) {
			t.Fatalf("the cut-off PUT's end was not logged:\n%s", tail(b.stderrCapture.String(), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	whole := append(must(os.ReadFile(p1)), data...)
	sum := sha1.Sum(whole)
	code, h := b.head("-u", b.admin(), "-X", "MOVE", "-H", "Destination: /remote.php/dav/files/admin/resumed.bin",
		"-H", fmt.Sprintf("OC-Total-Length: %d", len(whole)), "-H", "X-OC-Mtime: 1600000000",
		"-H", "OC-Checksum: SHA1:"+hex.EncodeToString(sum[:]), up+"/.file")
	if code != 201 || header(h, "OC-FileId") == "" || header(h, "ETag") == "" || header(h, "X-OC-MTime") != "accepted" {
		t.Fatalf("assembly = %d:\n%s", code, h)
	}
	got, _ := os.ReadFile(filepath.Join(b.state, "files", "admin", "resumed.bin"))
	if !bytes.Equal(got, whole) {
		t.Error("the assembled file is not the two parts")
	}
	if fi, err := os.Stat(filepath.Join(b.state, "files", "admin", "resumed.bin")); err != nil || fi.ModTime().Unix() != 1600000000 {
		t.Errorf("the assembled file's date: %v", fi.ModTime())
	}
	if code, _ := b.curl("-u", b.admin(), "-X", "PROPFIND", "-H", "Depth: 0", up); code != 404 {
		t.Errorf("the transfer is still there after its assembly (%d)", code)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
