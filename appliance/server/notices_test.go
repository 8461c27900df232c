package server

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// A user near their quota is told once, and no more once below it again.
func TestQuotaNotice(t *testing.T) {
	dir := t.TempDir()
	st, _ := state.Open(dir)
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	db.Add("carol", "long enough password")
	db.SetQuota("carol", 1000)
	files, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	s := &services{log: log, accounts: db, files: files, notices: notices.Open(t.TempDir(), log)}
	tree, _ := files.Tree("carol")
	defer tree.Close()
	put := func(name string, n int) {
		u, err := tree.Create(name, false)
		if err != nil {
			t.Fatal(err)
		}
		u.Write([]byte(strings.Repeat("x", n)))
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}
	put("big.bin", 950)
	s.noticeWatch().Check()
	s.noticeWatch().Check()
	all, _ := s.notices.List("carol")
	if len(all) != 1 || !strings.Contains(all[0].Subject, "95%") {
		t.Fatalf("notices at 95%% = %+v, want one", all)
	}
	tree.Remove("big.bin")
	put("small.bin", 100)
	s.noticeWatch().Check()
	if all, _ := s.notices.List("carol"); len(all) != 0 {
		t.Errorf("notices at 10%% = %+v, want none", all)
	}
}

// No good copy for 3 days, whether runs failed or none ran: the admin is
// told; a good copy since clears it.
func TestCopyStaleNotice(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	s := &services{log: log, notices: notices.Open(t.TempDir(), log), o: Options{State: dir}}
	cfg := config.Default()
	cfg.CopyTarget = "/media/usb/copy"
	s.copyPlan = admin.NewCopyPlan(cfg, dir, log)
	write := func(st copies.Status) {
		b, _ := json.Marshal(st)
		os.MkdirAll(copies.Dir(dir), 0o700)
		os.WriteFile(filepath.Join(copies.Dir(dir), "status.json"), b, 0o600)
	}
	old := time.Now().Add(-4 * 24 * time.Hour)
	write(copies.Status{Target: "/media/usb/copy", Started: old, Ended: old, LastSuccess: old})
	s.checkCopyAge()
	if all, _ := s.notices.List(users.Admin); len(all) != 1 || !strings.Contains(all[0].Subject, "3 days") {
		t.Fatalf("notices after 4 days without a copy = %+v", all)
	}
	write(copies.Status{Target: "/media/usb/copy", Started: time.Now(), Ended: time.Now(), LastSuccess: time.Now()})
	s.checkCopyAge()
	if all, _ := s.notices.List(users.Admin); len(all) != 0 {
		t.Errorf("notices after a good copy = %+v", all)
	}
}
