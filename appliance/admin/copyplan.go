package admin

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/state"
)

// CopyPlan is the copy settings in force: the config file's copy_*, with
// the admin page's over them (copies.SettingsFile in the state, read by
// config.Overlay here and by bonesync copy run alike). It checks and
// keeps what the admin page sets (Set), as the config file's lines are
// checked; the daily run waits on Changed to take a new time or target at
// once.
type CopyPlan struct {
	dir     string // copies.Dir of the state
	log     *slog.Logger
	changed chan struct{}

	mu  sync.Mutex
	cfg config.Config // only its Copy* fields are used
}

// NewCopyPlan is cfg's copy settings with the admin page's over them,
// kept under stateDir; a problem in the admin page's file is logged, and
// its line is left out.
func NewCopyPlan(cfg config.Config, stateDir string, log *slog.Logger) *CopyPlan {
	dir := copies.Dir(stateDir)
	c, probs := config.Overlay(cfg, copies.SettingsFile(dir), "copy_")
	for _, p := range probs {
		log.Warn("copy settings problem", "at", fmt.Sprintf("%s:%d", p.File, p.Line), "problem", p.Msg)
	}
	return &CopyPlan{dir: dir, log: log, cfg: c, changed: make(chan struct{}, 1)}
}

// Config is the settings in force (its Copy* fields).
func (p *CopyPlan) Config() config.Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// Changed is sent on when Set changed the settings (one pending at most).
func (p *CopyPlan) Changed() <-chan struct{} { return p.changed }

// Line is the settings in force in a line, for the admin page; "" when
// no target is set.
func (p *CopyPlan) Line() string {
	cfg := p.Config()
	if cfg.CopyTarget == "" {
		return ""
	}
	bw := "no bandwidth limit"
	if cfg.CopyBwLimit > 0 {
		bw = fmt.Sprintf("at most %d KiB/s", cfg.CopyBwLimit)
	}
	return fmt.Sprintf("to %s, daily at %s, keeping what the last %d runs replaced or removed, %s",
		copies.Redacted(cfg.CopyTarget), copies.Clock(cfg.CopyAt), cfg.CopyKeep, bw)
}

// Form is the settings as the admin page's form shows them.
func (p *CopyPlan) Form() CopyForm {
	cfg := p.Config()
	return CopyForm{Target: cfg.CopyTarget, HasPassword: cfg.CopyTargetPassword != "", At: copies.Clock(cfg.CopyAt),
		Keep: strconv.Itoa(cfg.CopyKeep), BwLimit: strconv.Itoa(cfg.CopyBwLimit)}
}

// Set takes the admin page's settings: checked as the config file's are
// (an error names each line's problem), kept in the state (over the
// config file's), in force at once. An empty password keeps the one set.
func (p *CopyPlan) Set(f CopyForm, password string) error {
	cur := p.Config()
	if password == "" {
		password = cur.CopyTargetPassword
	}
	lines, next, err := copyLines(f, password)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return fmt.Errorf("the copies' folder: %w", err)
	}
	if err := state.WriteFile(copies.SettingsFile(p.dir), []byte(lines), 0o600); err != nil {
		return fmt.Errorf("keep the copy settings: %w", err)
	}
	cur.CopyTarget, cur.CopyTargetPassword, cur.CopyAt = next.CopyTarget, next.CopyTargetPassword, next.CopyAt
	cur.CopyKeep, cur.CopyBwLimit = next.CopyKeep, next.CopyBwLimit
	p.mu.Lock()
	p.cfg = cur
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
	p.log.Info("copy settings changed on the admin page", "target", copies.Redacted(cur.CopyTarget), "at", copies.Clock(cur.CopyAt),
		"keep", cur.CopyKeep, "bwlimit_kib", cur.CopyBwLimit)
	return nil
}

// copyLines are f's settings as the config file's lines, and as parsed
// by the config's rules.
func copyLines(f CopyForm, password string) (string, config.Config, error) {
	var b strings.Builder
	for _, kv := range [][2]string{{"copy_target", strings.TrimSpace(f.Target)}, {"copy_target_password", password},
		{"copy_at", strings.TrimSpace(f.At)}, {"copy_keep", strings.TrimSpace(f.Keep)}, {"copy_bwlimit_kib", strings.TrimSpace(f.BwLimit)}} {
		line, err := config.Line(kv[0], kv[1])
		if err != nil {
			return "", config.Config{}, err
		}
		b.WriteString(line)
	}
	next, probs := config.Parse("the form", strings.NewReader(b.String()))
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i], _, _ = strings.Cut(p.Msg, "; using the default")
		}
		return "", config.Config{}, errors.New(strings.Join(msgs, "; "))
	}
	return b.String(), next, nil
}
