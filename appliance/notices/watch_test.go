package notices

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/users"
)

type facts struct {
	uses        []Use
	total, free int64
	tried       string
	target      string
	copy        copies.Status
}

func (f *facts) Uses() ([]Use, error)                 { return f.uses, nil }
func (f *facts) DiskSpace() (int64, int64, error)     { return f.total, f.free, nil }
func (f *facts) FailedTrial() (string, string, error) { return f.tried, "a", nil }
func (f *facts) Copy() (string, copies.Status, bool) {
	return f.target, f.copy, !f.copy.Started.IsZero()
}

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

// No good copy for 3 days, whether runs failed or none ran: the admin is
// told, by the box's clock; a good copy since clears it; a run going on
// holds it off, one a cut left stale does not.
func TestCopyStaleNotice(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	b := Open(t.TempDir(), log)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	old := now.Add(-4 * 24 * time.Hour)
	f := &facts{target: "sftp://copy@nas/box", copy: copies.Status{Started: old, Ended: old, LastSuccess: old}}
	w := &Watch{Board: b, Facts: f, Now: func() time.Time { return now }, Log: log}
	told := func() bool {
		all, _ := b.List(users.Admin)
		return len(all) == 1 && strings.Contains(all[0].Subject, "3 days")
	}
	w.Check()
	if !told() {
		t.Fatal("4 days without a good copy: no notice")
	}
	f.copy = copies.Status{Started: now, Ended: now, LastSuccess: now}
	w.Check()
	if all, _ := b.List(users.Admin); len(all) != 0 {
		t.Errorf("notices after a good copy = %+v", all)
	}
	// Never a good one: counted from the first try.
	f.copy = copies.Status{Started: old, Ended: old}
	w.Check()
	if !told() {
		t.Error("4 days of failed runs: no notice")
	}
	// No target: nothing said, nothing cleared by this rule either.
	f.target = ""
	w.Check()
	if !told() {
		t.Error("the notice went with the target unset")
	}
}
