package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// An idle server writes nothing to its state directory: over several
// refresh periods (1 s here, 30 s by default) every file keeps its inode,
// size and modification time, and no file comes or goes.
func testIdleWritesNothing(t *testing.T, b *box) {
	state := cloneState(t, b.state)
	startBox(t, state, "-files", t.TempDir(), "-refresh", "1s")
	time.Sleep(1500 * time.Millisecond)
	before := stateStamps(t, state)
	time.Sleep(3500 * time.Millisecond)
	after := stateStamps(t, state)
	for name, st := range after {
		if before[name] != st {
			t.Errorf("%s was written while idle (%v -> %v)", name, before[name], st)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("%s was removed while idle", name)
		}
	}
}

func stateStamps(t *testing.T, dir string) map[string][3]int64 {
	t.Helper()
	out := map[string][3]int64{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil || fi.IsDir() {
			continue
		}
		out[e.Name()] = [3]int64{int64(fi.Sys().(*syscall.Stat_t).Ino), fi.Size(), fi.ModTime().UnixNano()}
	}
	return out
}
