package clock

import (
	"context"
	"time"
)

// Every calls do after first, then every interval, until ctx ends: the
// one loop of the box's background work (the trash's purge, the
// previews' sweep, the notices' checks, the shares' expiry). A first of
// 0 calls do at once.
func Every(ctx context.Context, first, every time.Duration, do func()) {
	wait := first
	for {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		wait = every
		do()
	}
}
