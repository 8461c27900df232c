package accounts

import (
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/store"
)

type limits map[string]int64

func (l limits) Quota(user string) int64 { return l[user] }

type files struct{ used, free int64 }

func (f files) UsageOf(string) (store.Usage, error) { return store.Usage{Files: f.used}, nil }
func (f files) DiskSpace() (int64, int64, error)    { return 1 << 40, f.free, nil }

type pim int64

func (p pim) Used(string) (int64, error) { return int64(p), nil }

// One quota for files and calendars: the files get what the calendars
// leave, the calendars what the files leave, and neither the disk's last
// MiB.
func TestOneRoom(t *testing.T) {
	r := Room{Limits: limits{"ann": 10 << 20}, Files: files{used: 6 << 20, free: 1 << 30}, Calendars: pim(3 << 20)}
	if got := r.Quota("ann"); got != 7<<20 {
		t.Errorf("ann's files' quota = %d MiB, want 7", got>>20)
	}
	if got := r.Quota("bob"); got != 0 {
		t.Errorf("bob (no quota) = %d, want 0", got)
	}
	r.Calendars = pim(20 << 20)
	if got := r.Quota("ann"); got != 1 {
		t.Errorf("calendars over the quota leave %d, want 1 (0 would mean none)", got)
	}
	if why, err := r.ForCalendars("ann", 3<<20, 512<<10); why != "" || err != nil {
		t.Errorf("half a MiB more in 10 MiB with 9 used = %q %v", why, err)
	}
	if why, _ := r.ForCalendars("ann", 3<<20, 2<<20); !strings.Contains(why, "quota of 10 MiB") {
		t.Errorf("2 MiB more = %q, want the quota named", why)
	}
	r.Files = files{free: 1 << 20}
	if why, _ := r.ForCalendars("bob", 0, 1); why != "the disk is full" {
		t.Errorf("into the last MiB = %q", why)
	}
}
