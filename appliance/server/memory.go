package server

import (
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// memoryLimit is the Go runtime's soft memory limit while serving (unless
// GOMEMLIMIT says otherwise): with the binary's own pages it keeps the
// process under 48 MB with a password being hashed (12 MiB of Argon2id,
// 19 for a hash an earlier version made), where the collector's default
// pace would let garbage from earlier hashes pile up first. It is set after
// the first-boot benchmark, whose figures it must not change.
const memoryLimit = 30 << 20

func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	// No transparent huge pages from here on: where the kernel gives them
	// unasked (THP "always", the default of many PC kernels), a fault in
	// a fresh 2 MiB region of the heap, or khugepaged later, makes it one
	// huge page, resident whole, and the heap's few MiB of slack grow. The
	// board's kernel has none; this keeps the .deb's service on a PC as
	// small. Best effort: a kernel before 3.15 does not know the option.
	unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0)
	debug.FreeOSMemory() // what the benchmark used
}
