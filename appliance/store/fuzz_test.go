package store

import (
	"io"
	"path"
	"strings"
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
		tr, _ := tree(t)
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
