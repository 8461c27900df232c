package notices

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/users"
)

// The notices of what lasts, and their rules: a quota or the disk nearly
// full, an update the box came back from, a disk that reports errors.
// Watch looks at the facts the composition root gives it and posts or
// clears; the thresholds and the words are here.

// Thresholds: told at the first, cleared below the second, so a file
// that comes and goes at the edge does not tell again and again.
const (
	quotaTell, quotaClear = 0.90, 0.85
	diskTell, diskClear   = 0.10, 0.15 // of the disk free
)

// CheckEvery is how often Watch looks.
const CheckEvery = time.Hour

// Use is an account's files against its quota (0: none).
type Use struct {
	User        string
	Used, Quota int64
}

// Facts are what Watch looks at.
type Facts interface {
	// Uses are the accounts' files against their quotas; an account
	// whose files cannot be measured is left out.
	Uses() ([]Use, error)
	// DiskSpace is the files' disk's size and free space.
	DiskSpace() (total, free int64, err error)
	// FailedTrial names the card's slot whose update was tried and did
	// not come up ("" when none, or off a card), and the slot running.
	FailedTrial() (tried, running string, err error)
	// Copy is the copies' target ("": none set) and the last run's status
	// (package copies); !ok: no run has left one.
	Copy() (target string, st copies.Status, ok bool)
}

// Watch posts and clears the notices of what lasts.
type Watch struct {
	Board  *Board
	Facts  Facts
	Health *health.Log // the disks' health (nil: not watched)
	Dirs   []string    // whose disks Health watches: the state's, the files'
	Now    func() time.Time
	Log    *slog.Logger
}

// Run checks the disks at once, everything a minute later and then every
// CheckEvery, and the disks a last time when ctx ends (this boot's
// writes counted before a reboot).
func (w *Watch) Run(ctx context.Context) error {
	w.CheckDisks(false)
	clock.Every(ctx, time.Minute, CheckEvery, func() {
		w.Check()
		w.CheckDisks(false)
	})
	w.CheckDisks(true)
	return nil
}

// copyStaleAfter is how long without a good copy makes a notice, whether
// runs failed or none ran (the box was off at copy_at).
const copyStaleAfter = 3 * 24 * time.Hour

// Check posts, and clears, the notices of quotas, the disk's space,
// updates and the copies' age.
func (w *Watch) Check() {
	uses, err := w.Facts.Uses()
	if err != nil {
		w.Log.Warn("notices: cannot measure the accounts' files", "err", err)
	}
	for _, u := range uses {
		if u.Quota <= 0 {
			w.clear(u.User, "quota", "")
			continue
		}
		switch share := float64(u.Used) / float64(u.Quota); {
		case share >= quotaTell:
			w.post(u.User, "quota", "", fmt.Sprintf("Your files take %.0f%% of your quota", 100*share),
				fmt.Sprintf("%s of %s. Delete what you no longer need, or ask for more.", gb(u.Used), gb(u.Quota)), "/account")
		case share < quotaClear:
			w.clear(u.User, "quota", "")
		}
	}
	if total, free, err := w.Facts.DiskSpace(); err == nil && total > 0 {
		switch share := float64(free) / float64(total); {
		case share < diskTell:
			w.post(users.Admin, "disk", "", "The box's disk is nearly full",
				fmt.Sprintf("%s of %s free. Uploads stop when it is full; the trash gives way first.", gb(free), gb(total)), "/admin/")
		case share > diskClear:
			w.clear(users.Admin, "disk", "")
		}
	}
	switch tried, running, err := w.Facts.FailedTrial(); {
	case err != nil:
	case tried != "":
		w.post(users.Admin, "update", "", "An update did not start: the box went back",
			fmt.Sprintf("The update in slot %s was tried and did not come up; the box runs slot %s as before.", tried, running), "/admin/")
	default:
		w.clear(users.Admin, "update", "")
	}
	w.checkCopy()
}

// checkCopy tells the admin when a copy target is set and no copy has
// succeeded for copyStaleAfter, counted from the first try when none
// ever did; a run still going (not a stale one a cut left) holds it off.
func (w *Watch) checkCopy() {
	target, st, ok := w.Facts.Copy()
	if target == "" {
		return
	}
	since := st.LastSuccess
	if since.IsZero() {
		since = st.Started // none ever: from the first try
	}
	if since.IsZero() && st.Running != nil {
		since = st.Running.Started // the first run, going on or cut short
	}
	if !ok || since.IsZero() || w.Now().Sub(since) < copyStaleAfter || st.Running != nil && !st.Stale() {
		w.clear(users.Admin, "copy-stale", "")
		return
	}
	w.post(users.Admin, "copy-stale", "", "No copy off the box for 3 days",
		fmt.Sprintf("The last copy to %s that succeeded was made %s. The admin page's copies section says why.",
			copies.Redacted(target), since.Local().Format("2006-01-02 15:04")), "/admin/#copies")
}

// CheckDisks samples the health of the disks under Dirs (package health:
// writes by day, I/O and file system errors) and tells the admin of
// errors, anew when their number grows. final saves the sample whatever
// was written (at shutdown).
func (w *Watch) CheckDisks(final bool) {
	if w.Health == nil {
		return
	}
	seen := map[string]bool{}
	for _, dir := range w.Dirs {
		d, err := health.DiskOf(dir)
		if err != nil || seen[d.Whole] {
			continue // tmpfs, overlay: nothing to watch
		}
		seen[d.Whole] = true
		sample := w.Health.Sample
		if final {
			sample = w.Health.Final
		}
		r, err := sample(d, w.Now())
		if err != nil {
			w.Log.Warn("cannot look at the disk's health", "disk", d.Whole, "err", err)
			continue
		}
		p := r.Problem()
		if p == "" {
			continue
		}
		errs := r.Errors()
		w.Log.Warn("the disk reports errors", "disk", d.Whole, "io_errors", r.IOErrors, "problem", p)
		// One notice a disk, told anew (even if dismissed) when the errors
		// grow; the count it told is kept with the report.
		if errs > r.Told {
			w.clear(users.Admin, "disk-health", d.Whole)
			if err := w.Health.Told(d.Whole, errs); err != nil {
				w.Log.Warn("cannot note the disk's errors as told", "disk", d.Whole, "err", err)
			}
		}
		w.post(users.Admin, "disk-health", d.Whole, "The disk "+d.Whole+" reports errors",
			fmt.Sprintf("%s. A card or disk that reports errors may soon lose files: make sure a copy off the box is recent, and replace it.", p), "/admin/")
	}
}

func (w *Watch) post(user, kind, key, subject, message, link string) {
	if err := w.Board.Post(user, kind, key, subject, message, link); err != nil {
		w.Log.Warn("cannot post a notice", "user", user, "kind", kind, "err", err)
	}
}

func (w *Watch) clear(user, kind, key string) {
	if err := w.Board.Clear(user, kind, key); err != nil {
		w.Log.Warn("cannot clear a notice", "user", user, "kind", kind, "err", err)
	}
}

func gb(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }
