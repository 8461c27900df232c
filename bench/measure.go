package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bonesync/bonesync/appliance/measure"
)

// figures are one server's numbers for one phase.
type figures struct {
	N        int           // connections completed
	Errors   int           // connections failed
	FirstErr string        // the first failure
	Rate     float64       // completed connections per second
	P50, P95 time.Duration // connection latency
	CPU      time.Duration // server CPU time over the window, all its processes
	HWMKB    int64         // sum of VmHWM of the server's processes at the end
	PSSKB    int64         // the largest PSS of the whole process tree, sampled
	Resumed  int           // connections that resumed a TLS session
	Detail   string        // what was negotiated
}

// CPUPer is the server's CPU time per completed connection.
func (f figures) CPUPer() time.Duration {
	if f.N == 0 {
		return 0
	}
	return f.CPU / time.Duration(f.N)
}

// phase is the load of one measurement.
type phase struct {
	clients   int
	warm, dur time.Duration
	src       *sources
}

// loadPhase puts the load c on s: a warm-up (not counted), then dur of load
// between two readings of the server's CPU time, each taken once the server
// has no connection left.
func loadPhase(ctx context.Context, s *server, p phase, c conn) (figures, error) {
	if w := drive(ctx, p.src, p.clients, p.warm, c); len(w.latencies) == 0 {
		return figures{}, fmt.Errorf("%s: warm-up failed: %s%s", s.name, w.firstErr, s.tail())
	}
	settle(s)
	cpu0, err := treeCPU(s.pid())
	if err != nil {
		return figures{}, fmt.Errorf("%s: %w", s.name, err)
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // PSS every 100 ms
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := pssKB(s.pid()); kb > peak.Load() {
				peak.Store(kb)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	r := drive(ctx, p.src, p.clients, p.dur, c)
	settle(s)
	close(stop)
	wg.Wait()
	cpu1, err := treeCPU(s.pid())
	if err != nil {
		return figures{}, fmt.Errorf("%s: %w", s.name, err)
	}
	f := figures{
		N: len(r.latencies), Errors: r.errors, FirstErr: r.firstErr,
		Rate: float64(len(r.latencies)) / r.elapsed.Seconds(),
		CPU:  cpu1 - cpu0, HWMKB: hwmKB(s.pid()), PSSKB: peak.Load(),
		Resumed: r.resumed, Detail: r.detail,
	}
	f.P50, f.P95 = measure.Percentile(r.latencies, 50), measure.Percentile(r.latencies, 95)
	return f, ctx.Err()
}

// settle waits until the server has served every connection: sshd's
// per-connection processes have exited and been reaped, and a moment for
// closes and the Go runtime's clean-up after the burst.
func settle(s *server) {
	time.Sleep(300 * time.Millisecond)
	quiesce(s.pid(), s.keep, 10*time.Second)
}
