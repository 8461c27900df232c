package admin_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/copies"
)

// The admin page's copy settings: checked as the config file's are, kept
// in the state over them, in force at once (the daily loop is woken), and
// read back by the next start; an empty password keeps the one set.
func TestCopySettingsFromTheAdminPage(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	base := config.Default()
	base.CopyTarget, base.CopyTargetPassword = "sftp://old@nas/x", "old-secret"
	plan := admin.NewCopyPlan(base, dir, log)

	bad := admin.CopyForm{Target: "ftp://nas/x", At: "25:00", Keep: "7", BwLimit: "0"}
	if err := plan.Set(bad, ""); err == nil || !strings.Contains(err.Error(), "copy_target") || !strings.Contains(err.Error(), "copy_at") {
		t.Fatalf("a bad form: %v", err)
	}
	if plan.Config().CopyTarget != "sftp://old@nas/x" {
		t.Fatal("a refused form changed the settings")
	}
	good := admin.CopyForm{Target: "davs://copies@box2/remote.php/dav/files/copies/home", At: "01:45", Keep: "3", BwLimit: "500"}
	if err := plan.Set(good, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-plan.Changed():
	default:
		t.Error("the daily loop was not woken")
	}
	cfg := plan.Config()
	if cfg.CopyTarget != good.Target || cfg.CopyAt != 105*time.Minute || cfg.CopyKeep != 3 || cfg.CopyBwLimit != 500 || cfg.CopyTargetPassword != "old-secret" {
		t.Errorf("in force: %+v", cfg)
	}
	if f := plan.Form(); f.At != "01:45" || !f.HasPassword || f.Target != good.Target {
		t.Errorf("the form: %+v", f)
	}
	if b, _ := os.ReadFile(copies.SettingsFile(copies.Dir(dir))); !strings.Contains(string(b), `copy_target_password = "old-secret"`) {
		t.Errorf("kept: %s", b)
	}
	// The next start (and bonesync copy run) read them over the file's.
	again := admin.NewCopyPlan(base, dir, log).Config()
	if again.CopyTarget != good.Target || again.CopyAt != 105*time.Minute {
		t.Errorf("after a restart: %q %v", again.CopyTarget, again.CopyAt)
	}
	if line := plan.Line(); !strings.Contains(line, "daily at 01:45, keeping what the last 3 runs") || !strings.Contains(line, "at most 500 KiB/s") {
		t.Errorf("the plan's line: %q", line)
	}
}
