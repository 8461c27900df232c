package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/copies/engine"
	"github.com/bonesync/bonesync/appliance/users"
)

// copies runs the daily copy off the box at copy_at, when copy_target
// names one and the first copy (bonesync copy run, or the admin page) has
// made its password; a failed run is a notice for the admin.
func (s *services) copies(ctx context.Context) error {
	s.copyCtx.Store(&ctx)
	for {
		cfg := s.copyPlan.Config()
		var due <-chan time.Time
		if cfg.CopyTarget != "" {
			due = time.After(time.Until(copies.Next(time.Now(), cfg.CopyAt)))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.copyPlan.Changed():
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
	st := s.copyPlan.Config().Copies()
	dir := copies.Dir(s.o.State)
	if err := st.UseDir(dir); err != nil {
		return nil, err
	}
	return &engine.Copier{Settings: st, Store: s.files, Extra: s.pim, Work: dir, Log: s.log, Memory: s.memory}, nil
}

// copied logs a run's result and tells the admin of a failure.
func (s *services) copied(r engine.Result) {
	cfg := s.copyPlan.Config()
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
			fmt.Sprintf("The copy to %s failed: %v. The next runs at %s.", target, r.Err, copies.Clock(cfg.CopyAt)), "/admin/#copies")
	default:
		s.log.Info("copy made", attrs...)
		s.notices.Clear(users.Admin, "copy", "")
	}
}

// copyStart is the admin page's "copy now": a run in the background; the
// first one makes the encryption password, returned to be shown once.
func (s *services) copyStart() (password string, err error) {
	if s.copyPlan.Config().CopyTarget == "" {
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
