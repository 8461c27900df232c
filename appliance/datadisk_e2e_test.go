package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesGone: while the data disk is unplugged (PID 1 starts the server
// with -files-gone), every file path answers 503 with the reason, SFTP
// says it on login and writes nothing, the CA is still served, and the
// files folder is left alone; with the disk back, the files are there.
func TestFilesGone(t *testing.T) {
	need(t, "curl", "sftp")
	state := t.TempDir()
	files := filepath.Join(state, "disk", "files")
	b := startBox(t, state, "-files", files)
	if code, _ := b.curl("-u", b.admin(), "-X", "PUT", "--data-binary", "kept", b.url("kept.txt")); code != 201 {
		t.Fatalf("upload: %d", code)
	}
	pw := b.password
	b.stop()

	why := "the data disk (BONESYNC 1e4b229f-1122-4344-9566-778899aabbcc) is unplugged"
	g := startBox(t, state, "-files", filepath.Join(state, "card-files"), "-files-gone", why)
	g.password = pw
	for _, req := range [][]string{
		{"-u", g.admin(), g.url("kept.txt")},
		{"-u", g.admin(), "-X", "PROPFIND", "-H", "Depth: 1", g.url("")},
		{"-u", g.admin(), "-X", "PUT", "--data-binary", "new", g.url("new.txt")},
		{"https://localhost:" + g.port(g.https) + "/status.php"},
		{"-H", "Accept: text/html", "https://localhost:" + g.port(g.https) + "/"},
	} {
		code, body := g.curl(req...)
		if code != 503 || !strings.Contains(body, "unplugged") {
			t.Errorf("%v: %d %q, want 503 and why", req, code, body)
		}
	}
	if out, ok := g.sftp("admin", "password:"+pw, "put /etc/hostname"); ok || !strings.Contains(out, why) {
		t.Errorf("sftp while unplugged: ok=%v\n%s", ok, out)
	}
	if m, _ := filepath.Glob(filepath.Join(state, "card-files")); len(m) != 0 {
		t.Errorf("the server made a files folder while the files were away: %v", m)
	}
	g.stop()

	back := startBox(t, state, "-files", files)
	back.password = pw
	if code, body := back.curl("-u", back.admin(), back.url("kept.txt")); code != 200 || body != "kept" {
		t.Errorf("with the disk back: %d %q", code, body)
	}
}
