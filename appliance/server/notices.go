package server

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"time"

	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/users"
)

// checkNoticesEvery is how often what lasts is looked at for the notices:
// a quota or the disk nearly full, an update the box came back from.
const checkNoticesEvery = time.Hour

// Thresholds: told at the first, cleared below the second, so a file
// that comes and goes at the edge does not tell again and again.
const (
	quotaTell, quotaClear = 0.90, 0.85
	diskTell, diskClear   = 0.10, 0.15 // of the disk free
)

// keepNotices checks at start (after a minute; the disks at once) and
// then hourly.
func (s *services) keepNotices(ctx context.Context) error {
	s.checkDisks(false) // the disks' health from the start: status shows it
	wait := time.Minute
	for {
		select {
		case <-ctx.Done():
			s.checkDisks(true) // this boot's writes counted before a reboot
			return nil
		case <-time.After(wait):
		}
		wait = checkNoticesEvery
		s.checkNotices()
		s.checkCopyAge()
		s.checkDisks(false)
		if n := s.shares.Expire(); n > 0 {
			s.log.Info("shares past their expiry ended", "count", n)
		}
	}
}

// checkNotices posts, and clears, the notices of what lasts.
func (s *services) checkNotices() {
	accounts, err := s.accounts.List()
	if err != nil {
		s.log.Warn("notices: cannot list the accounts", "err", err)
		return
	}
	for _, a := range accounts {
		if a.Quota <= 0 {
			s.notices.Clear(a.Name, "quota", "")
			continue
		}
		tree, err := s.files.Tree(a.Name)
		if err != nil {
			continue
		}
		used, err := tree.Usage()
		tree.Close()
		if err != nil {
			continue
		}
		switch share := float64(used) / float64(a.Quota); {
		case share >= quotaTell:
			s.post(a.Name, "quota", "", fmt.Sprintf("Your files take %.0f%% of your quota", 100*share),
				fmt.Sprintf("%s of %s. Delete what you no longer need, or ask for more.", gb(used), gb(a.Quota)), "/account")
		case share < quotaClear:
			s.notices.Clear(a.Name, "quota", "")
		}
	}
	if total, free, err := s.files.DiskSpace(); err == nil && total > 0 {
		switch share := float64(free) / float64(total); {
		case share < diskTell:
			s.post(users.Admin, "disk", "", "The box's disk is nearly full",
				fmt.Sprintf("%s of %s free. Uploads stop when it is full; the trash gives way first.", gb(free), gb(total)), "/admin/")
		case share > diskClear:
			s.notices.Clear(users.Admin, "disk", "")
		}
	}
	if s.card != nil {
		if st, err := s.card.Status(); err == nil && st.FailedTrial != "" {
			s.post(users.Admin, "update", "", "An update did not start: the box went back",
				fmt.Sprintf("The update in slot %s was tried and did not come up; the box runs slot %s as before.", st.Other, st.Slot), "/admin/")
		} else if err == nil {
			s.notices.Clear(users.Admin, "update", "")
		}
	}
}

// checkDisks samples the health of the disks under the state and the
// files (package health: writes by day, I/O and file system errors) and
// tells the admin of errors, anew when their number grows. final saves
// the sample whatever was written (at shutdown).
func (s *services) checkDisks(final bool) {
	seen := map[string]bool{}
	for _, dir := range []string{s.o.State, s.o.Files} {
		d, err := health.DiskOf(dir)
		if err != nil || seen[d.Whole] {
			continue // tmpfs, overlay: nothing to watch
		}
		seen[d.Whole] = true
		sample := s.health.Sample
		if final {
			sample = s.health.Final
		}
		r, err := sample(d, s.prov.Clock.Now())
		if err != nil {
			s.log.Warn("cannot look at the disk's health", "disk", d.Whole, "err", err)
			continue
		}
		p := r.Problem()
		if p == "" {
			continue
		}
		errs := r.Errors()
		s.log.Warn("the disk reports errors", "disk", d.Whole, "io_errors", r.IOErrors, "problem", p)
		// One notice a disk, told anew (even if dismissed) when the errors
		// grow; the count it told is kept with the report.
		if errs > r.Told {
			s.notices.Clear(users.Admin, "disk-health", d.Whole)
			s.health.Told(d.Whole, errs)
		}
		s.post(users.Admin, "disk-health", d.Whole, "The disk "+d.Whole+" reports errors",
			fmt.Sprintf("%s. A card or disk that reports errors may soon lose files: make sure a copy off the box is recent, and replace it.", p), "/admin/")
	}
}

func (s *services) post(user, kind, key, subject, message, link string) {
	if err := s.notices.Post(user, kind, key, subject, message, link); err != nil {
		s.log.Warn("cannot post a notice", "user", user, "kind", kind, "err", err)
	}
}

func gb(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }

// toldShare tells a user of a share given to them.
func (s *services) toldShare(sh shares.Share) {
	what := map[string]string{shares.ItemFolder: "the folder", shares.ItemFile: "the file",
		shares.ItemCalendar: "the calendar", shares.ItemAddressBook: "the address book"}[sh.Item]
	name := sh.Mount
	if name == "" {
		name = path.Base(sh.Path)
	}
	rights := "to read"
	if sh.Perm&2 != 0 {
		rights = "to read and change"
	}
	link := "/files/"
	if sh.Item == shares.ItemCalendar || sh.Item == shares.ItemAddressBook {
		link = ""
	}
	s.post(sh.With, "share", strconv.Itoa(sh.ID), fmt.Sprintf("%s shared %s %s with you", sh.Owner, what, name),
		"You may use it "+rights+".", link)
}
