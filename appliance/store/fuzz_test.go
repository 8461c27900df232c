package store

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// FuzzConfinement: whatever path a client sends, Clean never returns one that
// leaves the tree, and opening it never reads the secret outside the tree
// (planted symlinks included).
func FuzzConfinement(f *testing.F) {
	for _, s := range []string{"", "/", "..", "../secret", "abs-link", "rel-link", "root-link/etc/passwd",
		"a/../../secret", "%2e%2e/secret", "....//secret", "sub/../../../secret", "\\..\\secret", "/./.././secret"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := Clean(p)
		if err != nil {
			return
		}
		if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") || path.Clean(c) != c {
			t.Fatalf("Clean(%q) = %q leaves the tree", p, c)
		}
		tr := fuzzTree(t)
		file, err := tr.Open(p)
		if err != nil {
			return
		}
		defer file.Close()
		b, _ := io.ReadAll(io.LimitReader(file, 64))
		if strings.Contains(string(b), "SECRET") {
			t.Fatalf("Open(%q) read the secret", p)
		}
	})
}

var (
	fuzzOnce sync.Once
	fuzzT    *Tree
)

// fuzzTree is one tree with its planted symlinks, made once per fuzzing
// process: Open only reads, and making a tree per input made each input slow
// enough to trip the fuzzer's deadline on a loaded machine.
func fuzzTree(t *testing.T) *Tree {
	fuzzOnce.Do(func() {
		top, err := os.MkdirTemp("", "bonesync-fuzz-")
		if err != nil {
			t.Fatal(err)
		}
		secret := filepath.Join(top, "secret")
		os.WriteFile(secret, []byte("SECRET"), 0o600)
		s, _ := Open(filepath.Join(top, "files"))
		fuzzT, _ = s.Tree("alice")
		home := filepath.Join(s.Dir(), "alice")
		os.WriteFile(filepath.Join(home, "hello.txt"), []byte("hello"), 0o644)
		os.Mkdir(filepath.Join(home, "sub"), 0o755)
		os.Symlink(secret, filepath.Join(home, "abs-link"))
		os.Symlink("../../secret", filepath.Join(home, "rel-link"))
		os.Symlink("/", filepath.Join(home, "root-link"))
	})
	return fuzzT
}
