package provision

import (
	"context"
	"errors"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
)

// Watcher runs Ensure again while the server runs, but only when one of its
// inputs changed since the last run: a state file (a `bonesync bench` from
// the console writes a new decision and keys), the box's addresses, or the
// day (a certificate nearing expiry is reissued). An idle box then neither
// writes to its card nor spends the instructions of loading and verifying
// its CA and re-encoding its report; a look costs a few stat calls.
type Watcher struct {
	Options Options // as for Ensure; NoWait and Rebench are set by the watcher
	Every   time.Duration
	// Apply receives each new Box.
	Apply func(*Box)

	last  inputs
	warns string // the last warning printed, so that it is printed once
}

// inputs are what Ensure's result depends on, besides the config (read once
// at start).
type inputs struct {
	files []fileStamp
	addrs []string
	day   int64
}

type fileStamp struct {
	name             string
	size, mtime, ino int64
}

// watched are the state files Ensure reads.
var watched = []string{state.CACert, state.CAKey, state.TLSKey, state.TLSCert, state.SSHHostKey,
	state.TLSOtherKey, state.TLSOtherCert, state.SSHOtherHostKey, state.Decision, state.Report}

func (w *Watcher) look() inputs {
	o := w.Options
	var in inputs
	for _, name := range watched {
		st := fileStamp{name: name}
		if fi, err := os.Stat(o.State.Join(name)); err == nil {
			st.size, st.mtime = fi.Size(), fi.ModTime().UnixNano()
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				st.ino = int64(sys.Ino)
			}
		}
		in.files = append(in.files, st)
	}
	for _, ip := range addrs(o) {
		in.addrs = append(in.addrs, ip.String())
	}
	slices.Sort(in.addrs)
	in.day = o.Clock.Now().Unix() / 86400
	return in
}

func (a inputs) equal(b inputs) bool {
	return a.day == b.day && slices.Equal(a.files, b.files) && slices.Equal(a.addrs, b.addrs)
}

// Started records the inputs as they are after the Ensure that started the
// server, so that the first look finds nothing new.
func (w *Watcher) Started() { w.last = w.look() }

// Run looks every w.Every until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	t := time.NewTicker(w.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.Check(ctx)
		}
	}
}

// Check runs Ensure if an input changed, and hands a new Box to Apply. It
// reports whether it did.
func (w *Watcher) Check(ctx context.Context) bool {
	now := w.look()
	if now.equal(w.last) {
		return false
	}
	o := w.Options
	o.Rebench, o.NoWait = false, true
	// The inputs as Ensure leaves them, taken before it unlocks: a write
	// by `bonesync bench` right after must count as a change.
	var after inputs
	o.whileLocked = func() { after = w.look() }
	b, err := Ensure(ctx, o)
	switch {
	case errors.Is(err, state.ErrBusy):
		return false // a `bonesync bench` is at work; look again next time
	case errors.Is(err, ErrNeedsBenchmark):
		w.warn("refresh: still serving the previous choice", err)
		w.last = now // looking again changes nothing until an input does
		return false
	case err != nil:
		w.warn("refresh: still serving the previous certificate", err)
		return false
	}
	w.warns = ""
	w.last = after
	w.Apply(b)
	return true
}

// warn logs msg and err, once until they change.
func (w *Watcher) warn(msg string, err error) {
	key := msg + ": " + err.Error()
	if key != w.warns && w.Options.Log != nil {
		w.Options.Log.Warn(msg, "err", err)
	}
	w.warns = key
}
