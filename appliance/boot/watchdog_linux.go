package boot

import (
	"context"
	"fmt"
	"time"

	"github.com/u-root/u-root/pkg/watchdog"
)

// watchdogTimeout is how long the box may hang before the hardware resets
// it. PID 1 feeds it at a third of that.
const watchdogTimeout = 60 * time.Second

func startWatchdog(ctx context.Context, s *System) error {
	w, err := watchdog.Open(watchdog.Dev)
	if err != nil {
		return fmt.Errorf("no hardware watchdog (%v); going on without", err)
	}
	if err := w.SetTimeout(watchdogTimeout); err != nil {
		fmt.Fprintf(s.Log, "bonesync: watchdog timeout: %v\n", err)
	}
	timeout, err := w.Timeout()
	if err != nil || timeout <= 0 {
		timeout = watchdogTimeout
	}
	go func() {
		t := time.NewTicker(timeout / 3)
		defer t.Stop()
		for range t.C {
			w.KeepAlive()
		}
	}()
	fmt.Fprintf(s.Log, "bonesync: watchdog armed, %v\n", timeout)
	return nil
}
