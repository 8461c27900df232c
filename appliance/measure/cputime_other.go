//go:build !linux

package measure

import "time"

// On systems other than Linux there is no per-thread CPU clock here; the
// benchmark then reports wall-clock figures only.
func threadCPU() time.Duration  { return 0 }
func processCPU() time.Duration { return 0 }
