package files

import (
	"path"
	"strings"
	"testing"
)

// FuzzIfHeader: whatever If header a client sends, parsing it never
// panics and never yields more than the conditions the bound allows (each
// costs a lock lookup or a metadata read), nor a condition holding its own
// closing bracket.
func FuzzIfHeader(f *testing.F) {
	for _, s := range []string{`(<opaquelocktoken:a>)`, `<https://h/dav/a> (Not <x> ["e"])`, `(["W/\"1\""]) (<y>)`,
		`(`, `<a>`, `(Not)`, strings.Repeat(`(<t>)`, 65), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		lists, ok := parseIf(h)
		if !ok {
			return
		}
		if len(h) > maxIfHeader {
			t.Fatalf("a header of %d bytes was read; the bound is %d", len(h), maxIfHeader)
		}
		n := 0
		for _, l := range lists {
			if len(l.conds) == 0 {
				t.Fatalf("an empty list in %q", h)
			}
			for _, c := range l.conds {
				if strings.Contains(c.token, ">") || strings.Contains(c.etag, "]") {
					t.Fatalf("condition %+v holds its closing bracket", c)
				}
			}
			n += len(l.conds)
		}
		if n > maxIfConditions {
			t.Fatalf("%d conditions read; the bound is %d", n, maxIfConditions)
		}
	})
}

// FuzzChunkName: whatever path a Nextcloud client names below its upload
// folder, the chunk name stays inside that folder, and parts are put in
// one consistent order (partBefore is a strict order: never both a < b
// and b < a, and equal names are never before each other).
func FuzzChunkName(f *testing.F) {
	for _, s := range []string{"/t1/00001", "t1/.file", "../../x", "/", "", "t1/10", "t1/9", "a/./b/../../..", "t/0001"} {
		f.Add(s, "t/2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, p := range []string{a, b} {
			c := chunkName(p)
			if c == "" || strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") || path.Clean(c) != c {
				t.Fatalf("chunkName(%q) = %q leaves the upload folder", p, c)
			}
		}
		x, y := path.Base(chunkName(a)), path.Base(chunkName(b))
		if partBefore(x, y) && partBefore(y, x) {
			t.Fatalf("%q and %q are each before the other", x, y)
		}
		if partBefore(x, x) {
			t.Fatalf("%q is before itself", x)
		}
	})
}
