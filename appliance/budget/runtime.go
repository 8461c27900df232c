package budget

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// GCPercent is the collector's pace while serving (GOGC): a collection
// once the heap has grown by four times what the last one left live,
// not by as much again (the default, 100). A serving box's live heap is
// 2-3 MB (the report, keys, tables, the copy engine's package state), so
// the heap grows to about 16 MB between collections, under RuntimeLimit,
// which takes over as the heap nears it: under a flood the limit paces
// the collector and the Ceiling holds as before. At the default pace the
// board's binary collected once per 43 full TLS connections and once per
// MiB of an SFTP put, about 16 M instructions each (issue 37).
const GCPercent = 400

// LimitRuntime sets the Go runtime's soft memory limit for serving
// (RuntimeLimit, unless GOMEMLIMIT says otherwise): with the binary's own
// pages it keeps the process under the Ceiling with the Budget's grants in
// use, where the collector's default pace would let garbage from earlier
// work (an earlier hash, an earlier preview) pile up first, and paces the
// collector at GCPercent below it. The server calls it after the
// first-boot benchmark, whose figures it must not change; `bonesync copy
// run` and `copy restore`, processes of their own, call it before they
// run.
func LimitRuntime() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(RuntimeLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	// No transparent huge pages from here on: where the kernel gives them
	// unasked (THP "always", the default of many PC kernels), a fault in
	// a fresh 2 MiB region of the heap, or khugepaged later, makes it one
	// huge page, resident whole, and the heap's few MiB of slack grow. The
	// board's kernel has none; this keeps the .deb's service on a PC as
	// small. Best effort: a kernel before 3.15 does not know the option.
	unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0)
	debug.FreeOSMemory() // what the benchmark used
	dropStartupPages()
}

// dropStartupPages lets go of the binary's read-only pages that starting
// up touched: the init code of every package linked in (the copy
// engine's, rclone's, among them) and what the first-boot benchmark ran,
// which serving may never touch again. They stay in the page cache (on
// the board, in the initramfs); the ones serving needs come back at their
// next use. Only read-only mappings of the executable are dropped: for
// them MADV_DONTNEED only unmaps, it cannot lose a byte.
func dropStartupPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line) // start-end perms offset dev inode path
		if len(f) < 6 || f[5] != exe || strings.Contains(f[1], "w") || !strings.HasSuffix(f[1], "p") {
			continue
		}
		start, end, ok := strings.Cut(f[0], "-")
		lo, err1 := strconv.ParseUint(start, 16, 64)
		hi, err2 := strconv.ParseUint(end, 16, 64)
		if !ok || err1 != nil || err2 != nil || hi <= lo {
			continue
		}
		unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
	}
}

// Resident is the process's resident memory now and at its peak (VmRSS
// and VmHWM), in bytes; zeros where /proc does not say.
func Resident() (now, peak int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	now, _ = ParseKB(b, "VmRSS")
	peak, _ = ParseKB(b, "VmHWM")
	return now << 10, peak << 10
}

// ParseKB reads a field in kB from a /proc file of "Name: value kB" lines
// (status, smaps_rollup): the one reader of them, for the box's status,
// its tests and the benchmark.
func ParseKB(b []byte, name string) (int64, error) {
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if ok && k == name {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s", name)
}
