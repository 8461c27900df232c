// Package systemd holds the unit files for running bonesync as a service on
// Debian-based systems; its tests check them with systemd's own tools and
// check the .deb packages `make deb` builds.
package systemd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/listen"
)

var units = []string{"bonesync.service", "bonesync.socket", "bonesync-bench.service"}

func deb(t *testing.T, arch string) string {
	t.Helper()
	m, _ := filepath.Glob("../out/bonesync_*_" + arch + ".deb")
	if len(m) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no %s .deb in out/ (make deb)", arch)
		}
		t.Skipf("no %s .deb in out/ (make deb)", arch)
	}
	return m[len(m)-1]
}

// root is a file-system tree with the host's systemd units and the amd64
// package installed in it, for systemd-analyze --root.
func root(t *testing.T) string {
	t.Helper()
	r := t.TempDir()
	if out, err := exec.Command("dpkg-deb", "-x", deb(t, "amd64"), r).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v %s", err, out)
	}
	if out, err := exec.Command("cp", "-rn", "/lib/systemd/system/.", filepath.Join(r, "lib/systemd/system")).CombinedOutput(); err != nil {
		t.Fatalf("cp host units: %v %s", err, out)
	}
	return r
}

func TestUnitsVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Fatal("systemd-analyze missing (apt-get install systemd)")
	}
	r := root(t)
	for _, u := range units {
		out, err := exec.Command("systemd-analyze", "verify", "--root="+r, filepath.Join(r, "lib/systemd/system", u)).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
		}
	}
}

// The exposure level systemd-analyze security gives the service; the README
// records it.
func TestUnitsSecurity(t *testing.T) {
	out, _ := exec.Command("systemd-analyze", "security", "--offline=yes", "bonesync.service").CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for bonesync.service: ([0-9.]+) (\w+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no exposure level:\n%s", out)
	}
	level, _ := strconv.ParseFloat(m[1], 64)
	t.Logf("systemd-analyze security: exposure %s %s", m[1], m[2])
	if level > 2.0 {
		t.Errorf("exposure level %.1f %s, want at most 2.0", level, m[2])
	}
	for _, want := range []string{"✓ NoNewPrivileges=", "✓ ProtectSystem=", "✓ SystemCallFilter=", "✓ RestrictAddressFamilies="} {
		if !strings.Contains(string(out), want) {
			t.Errorf("security report lacks %q", want)
		}
	}
}

func TestDebPackages(t *testing.T) {
	for _, arch := range []string{"amd64", "armhf"} {
		d := deb(t, arch)
		contents, err := exec.Command("dpkg-deb", "-c", d).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"./usr/bin/bonesync", "./lib/systemd/system/bonesync.service", "./lib/systemd/system/bonesync.socket",
			"./lib/systemd/system/bonesync-bench.service", "./etc/bonesync/bonesync.conf", "./usr/share/doc/bonesync/README.md", "./usr/share/doc/bonesync/docs/debian.md"} {
			if !strings.Contains(string(contents), want+"\n") {
				t.Errorf("%s lacks %s", filepath.Base(d), want)
			}
		}
		if strings.Contains(string(contents), "var/lib") {
			t.Errorf("%s ships files in /var/lib, where the user's data lives", filepath.Base(d))
		}
		field := func(f string) string {
			out, _ := exec.Command("dpkg-deb", "-f", d, f).Output()
			return strings.TrimSpace(string(out))
		}
		if field("Architecture") != arch || field("Package") != "bonesync" {
			t.Errorf("%s: control Architecture %q Package %q", filepath.Base(d), field("Architecture"), field("Package"))
		}
		x := t.TempDir()
		exec.Command("dpkg-deb", "-e", d, x).Run()
		if b, _ := os.ReadFile(filepath.Join(x, "conffiles")); strings.TrimSpace(string(b)) != "/etc/bonesync/bonesync.conf" {
			t.Errorf("%s conffiles = %q", filepath.Base(d), b)
		}
		post, _ := os.ReadFile(filepath.Join(x, "postinst"))
		if !strings.Contains(string(post), "enable bonesync.socket bonesync.service") {
			t.Errorf("%s postinst does not enable the service", filepath.Base(d))
		}
		if rm, _ := os.ReadFile(filepath.Join(x, "postrm")); strings.Contains(string(rm), "rm -rf") {
			t.Errorf("%s postrm deletes data", filepath.Base(d))
		}
		exec.Command("dpkg-deb", "-x", d, x).Run()
		desc, _ := exec.Command("file", "-b", filepath.Join(x, "usr/bin/bonesync")).Output()
		want := map[string]string{"amd64": "x86-64", "armhf": "ARM, EABI5"}[arch]
		if !strings.Contains(string(desc), want) || !strings.Contains(string(desc), "statically linked") {
			t.Errorf("%s binary is %s, want static %s", filepath.Base(d), desc, want)
		}
	}
}

// The socket unit listens on the box's ports (listen.Ports), in their
// order: systemd passes the sockets unnamed, so the server assigns them by
// it. A new port in the table needs its ListenStream line here.
func TestUnitsSocketPorts(t *testing.T) {
	b, err := os.ReadFile("bonesync.socket")
	if err != nil {
		t.Fatal(err)
	}
	var streams []string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "ListenStream="); ok {
			streams = append(streams, v)
		}
	}
	// Where the unit moves a port off its default, and why: port 22 is
	// the system's own OpenSSH on a Debian install.
	moved := map[string]string{listen.SSH.Name: "2222"}
	if len(streams) != len(listen.Ports) {
		t.Fatalf("bonesync.socket listens on %v, want one line per port of %d (listen.Ports)", streams, len(listen.Ports))
	}
	for i, p := range listen.Ports {
		want := strconv.Itoa(p.DefaultPort())
		if m, ok := moved[p.Name]; ok {
			want = m
		}
		if streams[i] != want {
			t.Errorf("ListenStream line %d = %s, want %s (%s)", i+1, streams[i], want, p.Name)
		}
	}
}
