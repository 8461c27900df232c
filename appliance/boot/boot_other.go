//go:build !linux

// Package boot is bonesync as PID 1; it exists on Linux only.
package boot

import (
	"fmt"
	"os"
)

// Main reports that PID 1 is Linux only.
func Main() {
	fmt.Fprintln(os.Stderr, "bonesync: PID 1 runs on Linux only")
	os.Exit(1)
}
