// Package engine makes the encrypted copy of the household's data off the
// box (package copies holds its settings and status): every user's files (with their dates), a list of their digests, and
// their calendars and contacts (the backup format of `bonesync backup`),
// to a USB disk, an SFTP server or a second bonesync box, incremental and
// readable without any bonesync box.
//
// The engine is rclone's (github.com/rclone/rclone), linked in as a
// library: its sync (what changed is sent, what went is moved aside) and
// its crypt format (file contents in NaCl secretbox, names encrypted,
// keys from a password with scrypt), which the rclone that Debian
// packages reads: docs/copies.md has the commands. bonesync writes none
// of the mechanism, only which files, where, and when.
//
// A copy holds, under the target's folder, encrypted:
//
//	current/files/USER/...       every user's files, as they are
//	current/extra/USER.sha1      their SHA-1 digests (sha1sum -c reads it)
//	current/extra/USER-calendars.zip
//	old/YYYYMMDD-HHMMSS/...      what each run replaced or removed (Keep runs)
//
// A run never changes the source. A run cut short (a power cut) leaves
// the target's files whole (rclone writes each under a temporary name
// and renames it), and the next run completes it.
//
// Only the server and `bonesync copy` import this package: it links the
// engine and all it pulls (appliance/house_test.go holds that config,
// PID 1 and the protocols do not reach it).
package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rclone/rclone/fs"
	"github.com/rclone/rclone/fs/accounting"
	"github.com/rclone/rclone/fs/filter"
	"github.com/rclone/rclone/fs/operations"
	"github.com/rclone/rclone/fs/sync"
	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
)

// Extra is what a run adds beside the files: each user's calendars and
// contacts, in the backup format (package calendars).
type Extra interface {
	Backup(user string, w io.Writer) (int, error)
}

// Result is what a run did.
type Result struct {
	Started, Ended time.Time
	Users          []string
	Files          int64 // files sent (new or changed)
	Bytes          int64
	Errors         int64
	Err            error
	// AfterCut: the run before this one was cut short (a power cut, the
	// box stopped) and this one completes what it left.
	AfterCut bool
}

// Files is the store as a copy reads and a restore writes it: its
// folder (which rclone reads as it is), who owns files in it, and each
// owner's files.
type Files interface {
	Dir() string
	Owners() ([]string, error)
	Tree(user string) (*store.Tree, error)
}

// Copier makes copies of a store.
type Copier struct {
	Settings copies.Settings
	Store    Files
	// Users are whose files and calendars are copied; nil: everyone's
	// the store and the calendars hold, with an account or not (a
	// deleted user's files stay on the box until the admin decides, and
	// in the copy as long).
	Users func() []string
	// Held says the caller holds the runs' lock (copies.Lock) for this run.
	Held  bool
	Extra Extra // nil: no calendars
	// Memory is the budget a run draws from (memory.go): the server's,
	// or one of the run's own process; nil: unbounded.
	Memory *budget.Budget
	// Work is a folder of the box's own for what a run writes before it
	// is sent (the digests and calendars).
	Work string
	Log  *slog.Logger
	now  func() time.Time
	// every is how often a run's progress is written; 0: progressEvery.
	every time.Duration
	// sameDiskOK lets tests copy to a folder on the files' disk.
	sameDiskOK bool
}

// checkFolder refuses a folder target that is not there, or that is on
// the disk of the files: an unplugged USB disk's mount point would
// otherwise fill the box's own disk (on the board, its memory) with a
// copy that is no copy.
func (c *Copier) checkFolder() error {
	t, err := copies.ParseTarget(c.Settings.Target)
	if err != nil || t.Kind != "local" {
		return err
	}
	fi, err := os.Stat(t.Path)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("the target folder %s is not there: is its disk plugged in and mounted? (make the folder on it once)", t.Path)
	}
	var target, files unix.Stat_t
	if unix.Stat(t.Path, &target) == nil && unix.Stat(c.Store.Dir(), &files) == nil && target.Dev == files.Dev && !c.sameDiskOK {
		return fmt.Errorf("the target folder %s is on the same disk as the files: a copy there is lost with them (is the USB disk mounted?)", t.Path)
	}
	return nil
}

// owners are the users whose data a run copies.
func (c *Copier) owners() []string {
	if c.Users != nil {
		return c.Users()
	}
	names, _ := c.Store.Owners()
	if o, ok := c.Extra.(interface{ Owners() []string }); ok {
		names = append(names, o.Owners()...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Run makes one copy: sends what changed since the last, moves what it
// replaces or removes to old/, and keeps Keep runs of that.
func (c *Copier) Run(ctx context.Context) Result {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	r := Result{Started: now(), Users: c.owners()}
	if c.Work != "" && !c.Held {
		unlock, err := copies.Lock(c.Work)
		if err != nil {
			r.Err, r.Ended = err, now()
			return r // the run going on keeps the status
		}
		defer unlock()
	}
	// Partial uploads are left only by a run that did not end well (cut,
	// or failed): the next one looks for them; a run after a clean one
	// does not list the target once more for nothing.
	leftovers := true
	if c.Work != "" {
		prev, ok := copies.ReadStatus(c.Work)
		r.AfterCut = ok && (prev.Running != nil || prev.Interrupted)
		leftovers = !ok || prev.Running != nil || prev.Error != ""
	}
	r.Err = c.run(ctx, &r, now(), leftovers)
	r.Ended = now()
	if c.Work != "" {
		c.record(r)
	}
	return r
}

func (c *Copier) run(ctx context.Context, r *Result, stamp time.Time, leftovers bool) error {
	if err := c.checkFolder(); err != nil {
		return err
	}
	root, err := configure(c.Settings)
	if err != nil {
		return err
	}
	if ctx, err = withTarget(ctx, c.Settings); err != nil {
		return err
	}
	ctx = accounting.WithStatsGroup(ctx, "bonesync-copy")
	stats := accounting.StatsGroup(ctx, "bonesync-copy")
	stats.ResetCounters() // one group, counted from zero each run
	if c.Work != "" {
		defer c.reportProgress(ctx, r.Started, stats)()
	}
	largest, err := c.writeExtra(r.Users)
	if err != nil {
		return err
	}
	plan := planMemory(largest)
	if plan.Over > 0 && c.Log != nil {
		c.Log.Warn("copies: a folder holds more files than the copy's share of the memory budget covers",
			"files", largest, "beyond_kib", plan.Over>>10)
	}
	ctx, ci := plan.engine(ctx)
	ci.LogLevel = fs.LogLevelNotice
	ci.PartialSuffix = partialSuffix
	ci.BackupDir = root + "old/" + stamp.UTC().Format("20060102-150405")
	ci.Metadata = false
	if c.Settings.BwLimit > 0 {
		bw := fs.SizeSuffix(c.Settings.BwLimit) * fs.SizeSuffix(fs.Kibi)
		accounting.TokenBucket.SetBwLimit(fs.BwPair{Tx: bw, Rx: bw})
		defer accounting.TokenBucket.SetBwLimit(fs.BwPair{})
	}
	rem, err := openRemotes(ctx, c.Memory, root, ci.BackupDir)
	defer rem.close()
	if err != nil {
		return fmt.Errorf("the copy's target: %w", err)
	}
	release, err := c.Memory.Wait(ctx, "copy", plan.Run)
	if err != nil {
		return err
	}
	if leftovers {
		c.removePartials(ctx, rem)
	}
	err = c.send(ctx, r.Users, rem)
	release()
	r.Files, r.Bytes, r.Errors = stats.GetTransfers(), stats.GetBytes(), stats.GetErrors()
	if err != nil {
		return fmt.Errorf("copy to %s: %w", copies.Redacted(c.Settings.Target), err)
	}
	return c.prune(ctx, rem.old)
}

// send syncs the users' files, then the digests and calendars made
// before them, to the copy's current/.
func (c *Copier) send(ctx context.Context, users []string, rem *remotes) error {
	// The users' files: the store's folder, less its own (.bonesync) and
	// its uploads' temporary files, and only the users that exist.
	rules := []string{"- /.bonesync/**", "- .*.upload-*", partialRule}
	for _, u := range users {
		rules = append(rules, "+ /"+u+"/**")
	}
	rules = append(rules, "- **")
	opt := filter.Opt // the defaults (no flags are parsed)
	opt.FilterRule = rules
	fi, err := filter.NewFilter(&opt)
	if err != nil {
		return fmt.Errorf("copy filter: %w", err)
	}
	fctx := filter.ReplaceConfig(ctx, fi)
	src, err := fs.NewFs(fctx, c.Store.Dir())
	if err != nil {
		return fmt.Errorf("the store: %w", err)
	}
	first := sync.Sync(fctx, rem.files, src, false)
	extra, err := fs.NewFs(ctx, c.extraDir())
	if err != nil {
		return errors.Join(first, err)
	}
	opt.FilterRule = []string{partialRule}
	if fi, err = filter.NewFilter(&opt); err != nil {
		return errors.Join(first, fmt.Errorf("copy filter: %w", err))
	}
	return errors.Join(first, sync.Sync(filter.ReplaceConfig(ctx, fi), rem.extra, extra, false))
}

// A file is sent under a partial name (NAME.XXXXXXXX then this suffix,
// XXXXXXXX a hash of the name and the source's size and time: rclone's
// checkPartial) and renamed once whole, on targets that can rename (SFTP).
// A run cut short (a power cut, kill -9) leaves that object behind, and
// the next run sends the same file under the same partial name: left in
// the syncs' view, the leftover was "extraneous", moved to old/ while the
// new upload renamed it away, and the run ended in errors with a target
// in fact complete. The syncs never see such objects (partialRule), and
// removePartials deletes them before a run. The suffix is the project's
// own, so that no user's file ends in it by chance.
const (
	partialSuffix = ".bonesync-part"
	partialRule   = "- *.{{[0-9a-f]{8}}}" + partialSuffix
)

// removePartials deletes what a cut or failed run left under partial
// names, in the files and the extra: straight away (not to old/: they were never a
// copy of anything), counted apart from the run's figures, and a failure
// is only said (the syncs do not see them anyway).
func (c *Copier) removePartials(ctx context.Context, rem *remotes) {
	ctx, ci := fs.AddConfig(accounting.WithStatsGroup(ctx, "bonesync-copy-partials"))
	ci.BackupDir = ""
	opt := filter.Opt
	opt.FilterRule = []string{"+" + partialRule[1:], "- **"}
	fi, err := filter.NewFilter(&opt)
	if err != nil {
		c.warn("copies: the partial uploads' filter", err)
		return
	}
	ctx = filter.ReplaceConfig(ctx, fi)
	for _, f := range []fs.Fs{rem.files, rem.extra} {
		if err := operations.Delete(ctx, f); err != nil {
			c.warn("copies: what a cut run left was not removed (the run goes on without it)", err)
		}
	}
}

func (c *Copier) warn(msg string, err error) {
	if c.Log != nil {
		c.Log.Warn(msg, "err", err)
	}
}

// extraDir is where the digests and calendars are written before a run
// sends them.
func (c *Copier) extraDir() string { return filepath.Join(c.Work, "extra") }

// writeExtra writes each user's digest list and calendars for the run,
// and returns the most entries a folder of theirs holds (planMemory).
func (c *Copier) writeExtra(users []string) (largest int, err error) {
	dir := c.extraDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	// Those of users gone since go from the copy too (moved to old/).
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			u := strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".sha1"), "-calendars.zip")
			if !slices.Contains(users, u) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, u := range users {
		n, err := c.writeDigests(u, filepath.Join(dir, u+".sha1"))
		if err != nil {
			return 0, err
		}
		largest = max(largest, n)
		if c.Extra != nil {
			if err := writeFile(filepath.Join(dir, u+"-calendars.zip"), func(w io.Writer) error {
				_, err := c.Extra.Backup(u, w)
				return err
			}); err != nil {
				return 0, fmt.Errorf("calendars of %s: %w", u, err)
			}
		}
	}
	return largest, nil
}

// writeDigests writes the SHA-1 of each of user's files as sha1sum does
// (paths from the user's folder), read from the store's records, not
// computed again. A file changed behind the store's back has none and is
// left out. It returns the most entries one of the user's folders holds,
// counted on the way: what the run's listings will hold.
func (c *Copier) writeDigests(user, file string) (largest int, err error) {
	tree, err := c.Store.Tree(user)
	if err != nil {
		return 0, err
	}
	defer tree.Close()
	entries := map[string]int{} // folder: entries
	err = writeFile(file, func(w io.Writer) error {
		return tree.Walk("/", func(p string, in store.Info) error {
			if _, ok := tree.MountAt(p); ok {
				return iofs.SkipDir // another user's, copied with theirs
			}
			dir := path.Dir(p)
			entries[dir]++
			largest = max(largest, entries[dir])
			if in.IsDir() || in.Sums == nil {
				return nil
			}
			_, err := fmt.Fprintf(w, "%x  %s\n", in.Sums.SHA1, strings.TrimPrefix(p, "/"))
			return err
		})
	})
	return largest, err
}

// prune removes the oldest runs' replaced files beyond Keep from old
// (the copy's old/).
func (c *Copier) prune(ctx context.Context, old fs.Fs) error {
	entries, err := old.List(ctx, "")
	if errors.Is(err, fs.ErrorDirNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list old runs: %w", err)
	}
	var runs []string
	for _, e := range entries {
		if _, ok := e.(fs.Directory); ok {
			runs = append(runs, e.Remote())
		}
	}
	slices.Sort(runs) // by their stamp: oldest first
	keep := max(c.Settings.Keep, 0)
	for len(runs) > keep {
		if err := operations.Purge(ctx, old, runs[0]); err != nil {
			return fmt.Errorf("remove the run %s: %w", runs[0], err)
		}
		runs = runs[1:]
	}
	return nil
}

// writeFile writes a file through fill, atomically, unless it already
// holds just that (state.WriteFile): a file the run sends again only if
// it changed.
func writeFile(name string, fill func(io.Writer) error) error {
	var b bytes.Buffer
	if err := fill(&b); err != nil {
		return err
	}
	return state.WriteFile(name, b.Bytes(), 0o600)
}

// reportProgress writes the run's progress into status.json every
// copies.ProgressEvery, until the returned function is called; a run that is
// cut short (a power cut) leaves its last progress, which copies.Status.String
// tells from a run that is going on by its age.
func (c *Copier) reportProgress(ctx context.Context, started time.Time, stats *accounting.StatsInfo) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	note := func(now time.Time) {
		st, _ := copies.ReadStatus(c.Work)
		st.Running = &copies.Progress{Started: started, At: now, Checked: stats.GetChecks(),
			Files: stats.GetTransfers(), Bytes: stats.GetBytes()}
		c.writeStatus(st)
	}
	note(time.Now()) // at once: a run just asked for shows as running
	go func() {
		defer close(done)
		every := c.every
		if every == 0 {
			every = copies.ProgressEvery
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				note(now)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// record keeps r as the last run's outcome in the Work folder.
func (c *Copier) record(r Result) {
	st := copies.Status{Target: copies.Redacted(c.Settings.Target), Started: r.Started, Ended: r.Ended,
		Files: r.Files, Bytes: r.Bytes, Errors: r.Errors}
	if old, ok := copies.ReadStatus(c.Work); ok {
		st.LastSuccess = old.LastSuccess
	}
	switch {
	case errors.Is(r.Err, context.Canceled):
		st.Error = "interrupted (the box stopped): the next run completes it"
		st.Interrupted = true
	case r.Err != nil:
		st.Error = r.Err.Error()
		errors.As(r.Err, &st.HostKey) // a changed host key: the admin page offers to accept it
	default:
		st.LastSuccess = r.Ended
		st.AfterCut = r.AfterCut
	}
	c.writeStatus(st)
}

func (c *Copier) writeStatus(st copies.Status) {
	if err := copies.WriteStatus(c.Work, st); err != nil && c.Log != nil {
		c.Log.Warn("copies: cannot keep the run's outcome", "err", err)
	}
}
