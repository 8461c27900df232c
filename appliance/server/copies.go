package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/copies/engine"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
)

// copyPlan is the copy settings in force: the config file's copy_*, with
// the admin page's over them (copies.SettingsFile in the state, read by
// config.Overlay here and by bonesync copy run alike). The daily loop
// waits on changed to take a new time or target at once.
type copyPlan struct {
	mu      sync.Mutex
	cfg     config.Config // only its Copy* fields are used
	changed chan struct{}
}

func (p *copyPlan) get() config.Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

func (p *copyPlan) set(c config.Config) {
	p.mu.Lock()
	p.cfg = c
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// newCopyPlan is the config's copy settings with the admin page's over
// them.
func newCopyPlan(cfg config.Config, stateDir string, log interface{ Warn(string, ...any) }) *copyPlan {
	c, probs := config.Overlay(cfg, copies.SettingsFile(copies.Dir(stateDir)), "copy_")
	for _, p := range probs {
		log.Warn("copy settings problem", "at", fmt.Sprintf("%s:%d", p.File, p.Line), "problem", p.Msg)
	}
	return &copyPlan{cfg: c, changed: make(chan struct{}, 1)}
}

// copies runs the daily copy off the box at copy_at, when copy_target
// names one and the first copy (bonesync copy run, or the admin page) has
// made its password; a failed run is a notice for the admin.
func (s *services) copies(ctx context.Context) error {
	s.copyCtx.Store(&ctx)
	for {
		cfg := s.copyPlan.get()
		var due <-chan time.Time
		if cfg.CopyTarget != "" {
			due = time.After(time.Until(copies.Next(time.Now(), cfg.CopyAt)))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.copyPlan.changed:
			continue // the admin page changed the time or the target
		case <-due:
		}
		c, err := s.copier()
		if err != nil {
			s.log.Warn("copies: no copy made", "target", copies.Redacted(cfg.CopyTarget), "err", err)
			continue
		}
		s.copied(c.Run(ctx))
	}
}

// copier is the copy off the box as the settings and the state have it.
func (s *services) copier() (*engine.Copier, error) {
	st := s.copyPlan.get().Copies()
	dir := copies.Dir(s.o.State)
	if err := st.UseDir(dir); err != nil {
		return nil, err
	}
	return &engine.Copier{Settings: st, Store: s.files, Extra: s.pim, Work: dir, Log: s.log, Memory: s.memory}, nil
}

// copied logs a run's result and tells the admin of a failure.
func (s *services) copied(r engine.Result) {
	cfg := s.copyPlan.get()
	target := copies.Redacted(cfg.CopyTarget)
	attrs := []any{"target", target, "files", r.Files, "bytes", r.Bytes,
		"errors", r.Errors, "took", r.Ended.Sub(r.Started).Round(time.Second)}
	switch {
	case errors.Is(r.Err, copies.ErrRunning):
		s.log.Info("copy not started: another is running", "target", target)
	case errors.Is(r.Err, context.Canceled):
		s.log.Info("copy interrupted: the server stops; the next run completes it", attrs...)
	case r.Err != nil:
		s.log.Error("copy failed", append(attrs, "err", r.Err)...)
		s.notices.Post(users.Admin, "copy", "", "The copy off the box failed",
			fmt.Sprintf("The copy to %s failed: %v. The next runs at %s.", target, r.Err, hhmm(cfg.CopyAt)), "/admin/#copies")
	default:
		s.log.Info("copy made", attrs...)
		s.notices.Clear(users.Admin, "copy", "")
	}
}

// copyStart is the admin page's "copy now": a run in the background; the
// first one makes the encryption password, returned to be shown once.
func (s *services) copyStart() (password string, err error) {
	if s.copyPlan.get().CopyTarget == "" {
		return "", errors.New("no copy target is set")
	}
	ctx := s.copyCtx.Load()
	if ctx == nil {
		return "", errors.New("the server is not ready to copy yet")
	}
	dir := copies.Dir(s.o.State)
	unlock, err := copies.Lock(dir) // held from here to the run's end
	if err != nil {
		return "", err
	}
	c, password, err := s.firstCopier(dir)
	if err != nil {
		unlock()
		return password, err
	}
	c.Held = true
	go func() {
		defer unlock()
		s.copied(c.Run(*ctx))
	}()
	return password, nil
}

// firstCopier is the copier, with the encryption password and the box's
// SSH key made if this is the first copy (the password is returned then).
func (s *services) firstCopier(dir string) (*engine.Copier, string, error) {
	password, err := copies.MakePassword(dir)
	if err != nil {
		return nil, "", err
	}
	c, err := s.copier()
	if err != nil {
		return nil, password, err
	}
	if _, err := engine.KeyFile(c.Settings.Key); err != nil {
		return nil, password, err
	}
	return c, password, nil
}

func hhmm(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d.Hours()), int(d.Minutes())%60)
}

// copyPlanLine is the settings in force in a line, for the admin page;
// "" when no target is set.
func (s *services) copyPlanLine() string {
	cfg := s.copyPlan.get()
	if cfg.CopyTarget == "" {
		return ""
	}
	bw := "no bandwidth limit"
	if cfg.CopyBwLimit > 0 {
		bw = fmt.Sprintf("at most %d KiB/s", cfg.CopyBwLimit)
	}
	return fmt.Sprintf("to %s, daily at %s, keeping what the last %d runs replaced or removed, %s",
		copies.Redacted(cfg.CopyTarget), hhmm(cfg.CopyAt), cfg.CopyKeep, bw)
}

// copyForm is the settings as the admin page's form shows them.
func (s *services) copyForm() admin.CopyForm {
	cfg := s.copyPlan.get()
	return admin.CopyForm{Target: cfg.CopyTarget, HasPassword: cfg.CopyTargetPassword != "", At: hhmm(cfg.CopyAt),
		Keep: strconv.Itoa(cfg.CopyKeep), BwLimit: strconv.Itoa(cfg.CopyBwLimit)}
}

// copySet takes the admin page's settings: checked as the config file's
// are, kept in the state (over the config file's), in force at once. An
// empty password keeps the one set.
func (s *services) copySet(f admin.CopyForm, password string) error {
	cur := s.copyPlan.get()
	if password == "" {
		password = cur.CopyTargetPassword
	}
	var b strings.Builder
	for _, kv := range [][2]string{{"copy_target", strings.TrimSpace(f.Target)}, {"copy_target_password", password},
		{"copy_at", strings.TrimSpace(f.At)}, {"copy_keep", strings.TrimSpace(f.Keep)}, {"copy_bwlimit_kib", strings.TrimSpace(f.BwLimit)}} {
		line, err := config.Line(kv[0], kv[1])
		if err != nil {
			return err
		}
		b.WriteString(line)
	}
	next, probs := config.Parse("the form", strings.NewReader(b.String()))
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i], _, _ = strings.Cut(p.Msg, "; using the default")
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	dir := copies.Dir(s.o.State)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the copies' folder: %w", err)
	}
	if err := state.WriteFile(copies.SettingsFile(dir), []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("keep the copy settings: %w", err)
	}
	cur.CopyTarget, cur.CopyTargetPassword, cur.CopyAt = next.CopyTarget, next.CopyTargetPassword, next.CopyAt
	cur.CopyKeep, cur.CopyBwLimit = next.CopyKeep, next.CopyBwLimit
	s.copyPlan.set(cur)
	s.log.Info("copy settings changed on the admin page", "target", copies.Redacted(cur.CopyTarget), "at", hhmm(cur.CopyAt),
		"keep", cur.CopyKeep, "bwlimit_kib", cur.CopyBwLimit)
	return nil
}

// copyStaleAfter is how long without a good copy makes a notice, whether
// runs failed or none ran (the box was off at copy_at).
const copyStaleAfter = 3 * 24 * time.Hour

// checkCopyAge posts a notice for the admin when a copy target is set and
// no copy has succeeded for copyStaleAfter.
func (s *services) checkCopyAge() {
	cfg := s.copyPlan.get()
	if cfg.CopyTarget == "" {
		return
	}
	st, ok := copies.ReadStatus(copies.Dir(s.o.State))
	since := st.LastSuccess
	if since.IsZero() {
		since = st.Started // none ever: from the first try
	}
	if since.IsZero() && st.Running != nil {
		since = st.Running.Started // the first run, going on or cut short
	}
	if !ok || since.IsZero() || time.Since(since) < copyStaleAfter || st.Running != nil && !st.Stale() {
		s.notices.Clear(users.Admin, "copy-stale", "")
		return
	}
	s.notices.Post(users.Admin, "copy-stale", "", "No copy off the box for 3 days",
		fmt.Sprintf("The last copy to %s that succeeded was made %s. The admin page's copies section says why.",
			copies.Redacted(cfg.CopyTarget), since.Local().Format("2006-01-02 15:04")), "/admin/#copies")
}
