package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/budget"
)

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// stat is the part of /proc/PID/stat the benchmark reads.
type stat struct {
	ppid                         int
	utime, stime, cutime, cstime uint64 // clock ticks
}

// parseStat reads a /proc/PID/stat line. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func parseStat(line string) (stat, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("stat line without ')': %q", line)
	}
	f := strings.Fields(line[i+1:])
	// f[0] is field 3 (state); ppid is field 4, utime..cstime fields 14-17.
	if len(f) < 15 {
		return stat{}, fmt.Errorf("short stat line: %q", line)
	}
	var s stat
	var err error
	num := func(k int) uint64 {
		v, e := strconv.ParseUint(f[k-3], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("stat field %d: %w", k, e)
		}
		return v
	}
	s.ppid = int(num(4))
	s.utime, s.stime, s.cutime, s.cstime = num(14), num(15), num(16), num(17)
	return s, err
}

func readStat(pid int) (stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, err
	}
	return parseStat(string(b))
}

// tree returns root and all its live descendants.
func tree(root int) []int {
	ents, _ := os.ReadDir("/proc")
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s, err := readStat(pid)
		if err != nil {
			continue
		}
		kids[s.ppid] = append(kids[s.ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i]]...)
	}
	return out
}

// treeCPU is the CPU time the process tree under root has used: each live
// process's own time plus its reaped children's (cutime, cstime). A child
// that exits and is reaped moves its whole time into its parent's cutime, so
// the sum stays consistent between two readings taken while the tree is
// quiescent: sshd's per-connection processes are counted once, whether they
// were alive or reaped when read.
func treeCPU(root int) (time.Duration, error) {
	var ticks uint64
	for i, pid := range tree(root) {
		s, err := readStat(pid)
		if err != nil {
			if i == 0 {
				return 0, err
			}
			continue // exited in between
		}
		ticks += s.utime + s.stime + s.cutime + s.cstime
	}
	return time.Duration(ticks) * clockTick, nil
}

// processCPU is the CPU time of one process, all its threads, those gone
// included, to the nanosecond: the kernel's CPU clock of another process
// (clock_getcpuclockid), which any process may read. /proc/PID/stat gives
// the same in 10 ms ticks, too coarse for a figure of 1-2 ms per MiB.
func processCPU(pid int) (time.Duration, error) {
	const cpuClockSched = 2                         // CPUCLOCK_SCHED: the time the scheduler counted
	clock := int32(^uint32(pid)<<3) | cpuClockSched // MAKE_PROCESS_CPUCLOCK
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return 0, fmt.Errorf("the CPU clock of process %d: %w", pid, err)
	}
	return time.Duration(ts.Nano()), nil
}

// statusKB reads a "Name:   N kB" line of /proc/PID/status or
// /proc/PID/smaps_rollup.
func statusKB(file, name string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return budget.ParseKB(b, name)
}

// hwmKB is the sum of VmHWM (peak resident set) over the tree's live
// processes.
func hwmKB(root int) int64 {
	var sum int64
	for _, pid := range tree(root) {
		if kb, err := statusKB(filepath.Join("/proc", strconv.Itoa(pid), "status"), "VmHWM"); err == nil {
			sum += kb
		}
	}
	return sum
}

// pssKB is the tree's proportional set size now: shared pages (libssl, the
// binary, a forked parent's pages) are divided among the processes sharing
// them, so a multi-process server is not counted several times over.
func pssKB(root int) int64 {
	var sum int64
	for _, pid := range tree(root) {
		if kb, err := statusKB(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"), "Pss"); err == nil {
			sum += kb
		}
	}
	return sum
}

// quiesce waits until root has no child processes other than those in keep
// (nginx's workers), so a CPU reading includes every connection's process.
func quiesce(root int, keep int, limit time.Duration) {
	end := time.Now().Add(limit)
	for time.Now().Before(end) && len(tree(root)) > 1+keep {
		time.Sleep(20 * time.Millisecond)
	}
}

// resetPeak starts pid's VmHWM again from its resident set now
// (/proc/PID/clear_refs), for a phase that reports its own peak.
func resetPeak(pid int) {
	// dropped: without the reset the phase reports the peak since start,
	// still a true upper bound.
	_ = os.WriteFile(filepath.Join("/proc", strconv.Itoa(pid), "clear_refs"), []byte("5"), 0)
}
