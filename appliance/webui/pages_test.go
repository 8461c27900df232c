package webui

import (
	"io/fs"
	"path"
	"runtime"
	"strings"
	"testing"
)

// Every page parses (they are parsed only when asked for, so a broken one
// would show only on the box), and a page is parsed again once the
// collector has taken it.
func TestPagesParse(t *testing.T) {
	u := &Common{}
	u.init()
	names, _ := fs.Glob(assets, "assets/page-*.html")
	if len(names) < 10 {
		t.Fatalf("%d pages, want them all", len(names))
	}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(path.Base(n), "page-"), ".html")
		a, err := u.pages.get(name)
		if err != nil {
			t.Fatalf("page %s: %v", name, err)
		}
		if b, _ := u.pages.get(name); b != a {
			t.Errorf("page %s parsed twice while it was held", name)
		}
		if a.Lookup("content") == nil {
			t.Errorf("page %s defines no content", name)
		}
	}
	if _, err := u.pages.get("no-such"); err == nil {
		t.Error("a page with no file parsed")
	}
	runtime.GC()
	runtime.GC()
	u.pages.mu.Lock()
	defer u.pages.mu.Unlock()
	for name, w := range u.pages.made {
		if w.Value() != nil {
			t.Errorf("page %s still held after two collections", name)
		}
	}
}
