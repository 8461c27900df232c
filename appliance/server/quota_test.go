package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// A user's files and calendars share one quota: the calendars get what the
// files leave, and the files' quota as the protocols see it is what the
// calendars leave.
func TestOneQuotaForFilesAndCalendars(t *testing.T) {
	dir := t.TempDir()
	st, _ := state.Open(filepath.Join(dir, "state"))
	db, _ := users.Open(st)
	db.Add("ann", "ann-password")
	db.SetQuota("ann", 1<<20)
	files, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	pim, _ := calendars.Open(files.Dir())
	s := &services{accounts: db, files: files, pim: pim}
	tree, _ := files.Tree("ann")
	w, err := tree.Create("photo.jpg", false)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 600<<10))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tree.Close()
	room := s.room() // as the server wires it, on the real store and calendars
	if why, err := room.ForCalendars("ann", 0, 300<<10); why != "" || err != nil {
		t.Errorf("300 KiB of events beside 600 KiB of files in 1 MiB: %q %v", why, err)
	}
	if why, _ := room.ForCalendars("ann", 300<<10, 200<<10); !strings.Contains(why, "quota of 1 MiB") {
		t.Errorf("1.1 MiB in all under a 1 MiB quota: %q", why)
	}
	if q := room.Quota("ann"); q != 1<<20 {
		t.Errorf("with no calendars the files' quota is %d", q)
	}
	db.SetQuota("ann", 0)
	if why, err := room.ForCalendars("ann", 0, 100<<20); why != "" || err != nil {
		t.Errorf("no quota: %q %v", why, err)
	}
	if why, _ := room.ForCalendars("ann", 0, 1<<50); why != "the disk is full" {
		t.Errorf("more than the disk: %q", why)
	}
}

// The password hint names the binary as it was typed and the state
// directory it serves (it said "bonesync" for make run's out/bonesync).
func TestPasswdHint(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Program: "out/bonesync", State: "./var"}, "out/bonesync user -state ./var passwd admin"},
		{Options{State: "/srv/my box"}, "bonesync user -state '/srv/my box' passwd admin"},
		{Options{Board: "beaglebone-black"}, "press Enter on this console, then: user passwd admin"},
	} {
		if got := passwdHint(tc.o); got != tc.want {
			t.Errorf("passwdHint(%+v) = %q, want %q", tc.o, got, tc.want)
		}
	}
}
