package notices

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/users"
)

type facts struct {
	uses        []Use
	total, free int64
	tried       string
}

func (f *facts) Uses() ([]Use, error)                 { return f.uses, nil }
func (f *facts) DiskSpace() (int64, int64, error)     { return f.total, f.free, nil }
func (f *facts) FailedTrial() (string, string, error) { return f.tried, "a", nil }

type failing struct{ facts }

func (failing) Uses() ([]Use, error) { return nil, errors.New("no accounts") }

// The rules: told at the threshold, not again while there, cleared past
// the second threshold only.
func TestWatchRules(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	b := Open(t.TempDir(), log)
	f := &facts{uses: []Use{{User: "carol", Used: 95, Quota: 100}, {User: "dave", Used: 5}}, total: 100, free: 5, tried: "b"}
	w := &Watch{Board: b, Facts: f, Now: time.Now, Log: log}
	count := func(user, kind string) int {
		all, _ := b.List(user)
		n := 0
		for _, x := range all {
			if x.Kind == kind {
				n++
			}
		}
		return n
	}
	w.Check()
	w.Check()
	if count("carol", "quota") != 1 || count("dave", "quota") != 0 || count(users.Admin, "disk") != 1 || count(users.Admin, "update") != 1 {
		t.Fatalf("after two checks: carol %d, dave %d, disk %d, update %d; want 1, 0, 1, 1",
			count("carol", "quota"), count("dave", "quota"), count(users.Admin, "disk"), count(users.Admin, "update"))
	}
	all, _ := b.List(users.Admin)
	for _, n := range all {
		if n.Kind == "update" && !strings.Contains(n.Message, "slot b") {
			t.Errorf("update notice %q does not name the slot tried", n.Message)
		}
	}
	// Between the thresholds: kept.
	f.uses[0].Used, f.free, f.tried = 88, 12, ""
	w.Check()
	if count("carol", "quota") != 1 || count(users.Admin, "disk") != 1 || count(users.Admin, "update") != 0 {
		t.Errorf("between the thresholds: quota %d, disk %d, update %d; want 1, 1, 0", count("carol", "quota"), count(users.Admin, "disk"), count(users.Admin, "update"))
	}
	f.uses[0].Used, f.free = 80, 20
	w.Check()
	if count("carol", "quota") != 0 || count(users.Admin, "disk") != 0 {
		t.Errorf("below the thresholds: quota %d, disk %d; want none", count("carol", "quota"), count(users.Admin, "disk"))
	}
	// Accounts that cannot be listed: the rest is still checked.
	f.free = 1
	(&Watch{Board: b, Facts: &failing{*f}, Now: time.Now, Log: log}).Check()
	if count(users.Admin, "disk") != 1 {
		t.Error("the disk's notice waited for the accounts")
	}
}
