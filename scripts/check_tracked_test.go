package scripts

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir and fails the test if it fails.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// check runs check-tracked.sh on dir and returns its output and whether it
// passed.
func check(t *testing.T, dir string) (string, bool) {
	t.Helper()
	script, err := filepath.Abs("check-tracked.sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script, dir).CombinedOutput()
	return string(out), err == nil
}

func TestCheckTrackedRefusesABinary(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	big := make([]byte, 2<<20)
	rand.Read(big)
	text := strings.Repeat("a line of text that is not binary at all\n", 60000) // 2.4 MB
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "small.bin"), big[:4096], 0o644)
	git(t, dir, "add", ".")
	if out, ok := check(t, dir); !ok {
		t.Fatalf("a repository with 2.4 MB of text and a 4 KiB binary was refused:\n%s", out)
	}

	os.WriteFile(filepath.Join(dir, "web.test"), big, 0o755)
	git(t, dir, "add", "web.test")
	out, ok := check(t, dir)
	if ok || !strings.Contains(out, "web.test") {
		t.Fatalf("a planted 2 MB binary passed the check (ok=%v):\n%s", ok, out)
	}

	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "scripts", "large-files.allow"), []byte("# firmware the tests boot\nweb.test\n"), 0o644)
	if out, ok := check(t, dir); !ok {
		t.Fatalf("the binary named in the allow-list was refused:\n%s", out)
	}
}

// TestCheckTrackedThisRepository is the check on this very checkout.
func TestCheckTrackedThisRepository(t *testing.T) {
	if out, ok := check(t, ".."); !ok {
		t.Fatalf("this repository tracks build outputs:\n%s", out)
	}
}
