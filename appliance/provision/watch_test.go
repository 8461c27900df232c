package provision

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/bonesync/bonesync/appliance/pki"
)

// stamps are the state directory's entries: name, inode, size and mtime.
func stamps(t *testing.T, dir string) map[string][3]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][3]int64{}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = [3]int64{int64(fi.Sys().(*syscall.Stat_t).Ino), fi.Size(), fi.ModTime().UnixNano()}
	}
	return out
}

func sameStamps(a, b map[string][3]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Ensure with nothing changed writes nothing: every file it would write
// holds the same bytes already.
func TestEnsureUnchangedWritesNothing(t *testing.T) {
	o := opts(t)
	ensure(t, o)
	before := stamps(t, o.State.Path)
	o.NoWait = true
	ensure(t, o)
	if after := stamps(t, o.State.Path); !sameStamps(before, after) {
		t.Errorf("a refresh with nothing changed rewrote state files:\nbefore %v\nafter  %v", before, after)
	}
}

// The watcher runs Ensure only when an input changed: a new decision (as
// `bonesync bench` writes it) or a new address reaches Apply at the next
// look; with nothing new a look costs no Ensure at all.
func TestWatcherPicksUpChanges(t *testing.T) {
	o := opts(t)
	ensure(t, o)
	var applied []*Box
	w := &Watcher{Options: o, Apply: func(b *Box) { applied = append(applied, b) }}
	w.Started()
	if w.Check(context.Background()) || len(applied) != 0 {
		t.Fatal("the watcher ran Ensure with nothing changed")
	}
	// `bonesync bench` from the console: a new benchmark and decision.
	bench := o
	bench.Rebench = true
	rebenched := ensure(t, bench)
	if !w.Check(context.Background()) || len(applied) != 1 {
		t.Fatal("a new decision was not picked up")
	}
	if applied[0].Report.CAFingerprint == "" || applied[0].Report != nil && applied[0].Choice.TLS.Key != rebenched.Choice.TLS.Key {
		t.Errorf("applied choice %+v, the new decision is %+v", applied[0].Choice, rebenched.Choice)
	}
	if w.Check(context.Background()) {
		t.Error("the watcher ran Ensure again with nothing new")
	}
	// A new address: the certificate is reissued for it.
	w.Options.Addrs = func() []net.IP { return pki.Addrs("127.0.0.1", "10.0.0.9") }
	if !w.Check(context.Background()) || len(applied) != 2 {
		t.Fatal("a new address was not picked up")
	}
	leaf := applied[1].Server.Leaf
	if got := leaf.IPAddresses[len(leaf.IPAddresses)-1].String(); got != "10.0.0.9" {
		t.Errorf("the certificate after the new address has %s", got)
	}
}

// What a refresh costs on an idle box: a look at the inputs, against the
// Ensure that every refresh ran before (loading and verifying the CA,
// re-encoding the report).
func BenchmarkIdleRefresh(b *testing.B) {
	o := opts(b)
	if _, err := Ensure(context.Background(), o); err != nil {
		b.Fatal(err)
	}
	o.NoWait = true
	b.Run("watcher", func(b *testing.B) {
		w := &Watcher{Options: o, Apply: func(*Box) {}}
		w.Started()
		for b.Loop() {
			if w.Check(context.Background()) {
				b.Fatal("a change on an idle box")
			}
		}
	})
	b.Run("ensure", func(b *testing.B) {
		for b.Loop() {
			if _, err := Ensure(context.Background(), o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
