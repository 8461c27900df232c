package budget

import (
	"os"
	"testing"
)

// rssFile is the process's resident file-backed memory, in kB.
func rssFile(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	n, err := ParseKB(b, "RssFile")
	if err != nil {
		t.Skip(err)
	}
	return n
}

func TestParseKB(t *testing.T) {
	status := "Name:\tnginx\nVmPeak:\t  20000 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 1000 kB\n"
	got, err := ParseKB([]byte(status), "VmHWM")
	if err != nil || got != 12345 {
		t.Errorf("ParseKB(VmHWM) = %d, %v, want 12345", got, err)
	}
	if _, err := ParseKB([]byte(status), "Pss"); err == nil {
		t.Error("ParseKB found a missing field")
	}
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
