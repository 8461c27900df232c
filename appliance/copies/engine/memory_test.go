package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rclone/rclone/fs/cache"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
)

// A run's draw fits beside a login's hash: four checkers while four of
// the largest folder's listings fit, then two, then one, and what one
// folder needs beyond runRoom said, not drawn.
func TestPlanMemory(t *testing.T) {
	for _, c := range []struct {
		largest, checkers int
		over              bool
	}{{0, 4, false}, {100, 4, false}, {700, 4, false}, {1000, 2, false}, {2000, 1, false}, {3000, 1, false}, {10000, 1, true}} {
		p := planMemory(c.largest)
		if p.Checkers != c.checkers || (p.Over > 0) != c.over || p.Run > runRoom || p.Run <= 0 {
			t.Errorf("planMemory(%d) = %+v, want %d checkers, over %v, a draw of at most %d", c.largest, p, c.checkers, c.over, runRoom)
		}
		if p.Transfers != transfers || p.Backlog != backlog {
			t.Errorf("planMemory(%d) = %+v", c.largest, p)
		}
	}
	if runRoom+12<<20 != budget.Admission {
		t.Errorf("runRoom %d leaves no room for a login's 12 MiB hash in %d", runRoom, budget.Admission)
	}
}

// The run's remotes are opened one key derivation at a time, each under a
// draw of the whole admission; the sync then finds its backup folder's
// remote in the engine's cache (a second derivation otherwise, with the
// transfers' memory in use); close drops them all.
func TestRemotesOpenedOnce(t *testing.T) {
	ctx := context.Background()
	st := copies.Settings{Target: filepath.Join(t.TempDir(), "copy"), Password: "correct horse battery staple"}
	root, err := configure(st)
	if err != nil {
		t.Fatal(err)
	}
	mem := budget.New(budget.Admission, budget.Options{})
	backup := root + "old/20260102-030405"
	rem, err := openRemotes(ctx, mem, root, backup)
	if err != nil {
		t.Fatal(err)
	}
	k := mem.Stats().Kinds
	if len(k) != 1 || k[0].Kind != "copy" || k[0].Granted != 4 || k[0].Peak != budget.Admission || k[0].InUse != 0 {
		t.Errorf("the derivations' draws: %+v, want 4 of the whole admission, one at a time, all given back", k)
	}
	if f, err := cache.Get(ctx, backup); err != nil || f != rem.backup {
		t.Errorf("the sync's backup folder: a remote made again (%v)", err)
	}
	rem.close()
	if n := cache.Entries(); n != 0 {
		t.Errorf("%d remotes left in the engine's cache after the run", n)
	}
}
