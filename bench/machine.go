package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/measure"
)

// machine is what the run is on and what it compares.
type machine struct {
	Host, CPU, Kernel string
	Cores             int
	Go, Bonesync      string
	Nginx, OpenSSL    string
	OpenSSH, Qemu     string
	ArmPackages       string // the armhf packages counted under qemu-arm
	// Spawn is the median time of fork+exec+exit of /bin/true: what sshd's
	// process per connection pays before any work, high in some VMs.
	Spawn time.Duration
}

func spawnTime() time.Duration {
	var d []time.Duration
	for range 21 {
		t0 := time.Now()
		if exec.Command("/bin/true").Run() != nil {
			return 0
		}
		d = append(d, time.Since(t0))
	}
	return measure.Percentile(d, 50)
}

func thisMachine(o *options) machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	m.Host, _ = os.Hostname()
	m.Kernel = strings.TrimSpace(readFile("/proc/sys/kernel/osrelease"))
	m.CPU = cpuModel()
	m.Bonesync = strings.TrimSpace(output(o.bonesync, "version"))
	m.Nginx = firstMatch(output("/usr/sbin/nginx", "-v"), `nginx/\S+`) + pkgVersion("nginx")
	v := output("/usr/sbin/nginx", "-V")
	if s := firstMatch(v, `running with OpenSSL [^)]*`); s != "" {
		m.OpenSSL = strings.TrimPrefix(s, "running with ")
	} else {
		m.OpenSSL = firstMatch(v, `OpenSSL [0-9.]+[^\n]*`)
	}
	m.OpenSSL += pkgVersion("libssl3")
	m.OpenSSH = firstMatch(output("/usr/sbin/sshd", "-V"), `OpenSSH_[^,\s]+`) + pkgVersion("openssh-server")
	m.Qemu = strings.TrimSpace(strings.SplitN(output("qemu-arm", "--version"), "\n", 2)[0])
	m.ArmPackages = strings.ReplaceAll(strings.TrimSpace(readFile(filepath.Join(o.sysroot, "VERSIONS"))), "\n", ", ")
	m.Spawn = spawnTime()
	return m
}

func readFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

// output runs a command for its version line; sshd -V and nginx -v print
// on stderr and sshd exits non-zero, so both streams are taken as they are.
func output(name string, args ...string) string {
	b, _ := exec.Command(name, args...).CombinedOutput()
	return string(b)
}

func firstMatch(s, re string) string {
	return regexp.MustCompile(re).FindString(s)
}

// pkgVersion is " (Debian package VERSION)", or "" if dpkg does not know it.
func pkgVersion(pkg string) string {
	b, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil || len(b) == 0 {
		return ""
	}
	return " (Debian " + pkg + " " + string(b) + ")"
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
