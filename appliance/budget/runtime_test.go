package budget

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile is the process's resident file-backed memory, in kB.
func rssFile(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// The pages starting up touched are let go of (the test goes on running:
// its code comes back as it is used).
func TestDropStartupPages(t *testing.T) {
	before := rssFile(t)
	dropStartupPages()
	after := rssFile(t)
	t.Logf("file-backed resident memory: %d kB before, %d kB after", before, after)
	if after >= before {
		t.Errorf("nothing was let go of: %d kB before, %d kB after", before, after)
	}
}
