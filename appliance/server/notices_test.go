package server

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

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
