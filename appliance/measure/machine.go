package measure

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Machine is what the benchmark ran on.
type Machine struct {
	CPU       string
	Board     string
	Cores     int
	Arch      string
	Kernel    string
	Go        string
	Time      time.Time
	LoadGen   string
	Emulated  bool
	Hostname  string
	GOMAXPROC int
}

// ThisMachine describes the machine we are running on; now comes from the
// clock floor.
func ThisMachine(now time.Time) Machine {
	m := Machine{
		Cores: runtime.NumCPU(), Arch: runtime.GOARCH + goarm(), Go: runtime.Version(),
		Time: now.UTC(), GOMAXPROC: runtime.GOMAXPROCS(0),
	}
	m.CPU, m.Emulated = cpuModel()
	if b, err := os.ReadFile("/proc/device-tree/model"); err == nil {
		m.Board = strings.TrimRight(string(b), "\x00\n")
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
		m.Hostname = unix.ByteSliceToString(u.Nodename[:])
	}
	return m
}

// cpuModel reads the CPU's name from /proc/cpuinfo. Under qemu-user the file
// is the host's, so a 32-bit ARM binary that sees an x86 CPU says so.
func cpuModel() (string, bool) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown", false
	}
	defer f.Close()
	var model, hardware string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "model name" && model == "":
			model = v
		case k == "Hardware" && hardware == "":
			hardware = v
		}
	}
	if hardware != "" {
		model += " (" + hardware + ")"
	}
	if model == "" {
		model = "unknown"
	}
	emulated := runtime.GOARCH == "arm" && (strings.Contains(model, "Intel") || strings.Contains(model, "AMD"))
	return model, emulated
}
