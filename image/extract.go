package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// packages is what the pinned .debs hold, unpacked.
type packages struct {
	root      string // every package unpacked here
	kernel    string // path of the zImage
	kver      string // e.g. 6.1.0-50-armmp
	moduleDir string // root/lib/modules/KVER
	dtbDir    string // root/usr/lib/linux-image-KVER
}

// pinned reads scripts/boot-packages.lock: package, version, sha256.
func pinned(lock string) ([][3]string, error) {
	f, err := os.Open(lock)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][3]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) == 0 || strings.HasPrefix(fl[0], "#") {
			continue
		}
		if len(fl) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", lock, sc.Text())
		}
		out = append(out, [3]string{fl[0], fl[1], fl[2]})
	}
	return out, sc.Err()
}

// extract unpacks the pinned packages (dpkg-deb -x, no root needed) and runs
// depmod, since Debian's kernel package ships no modules.dep.
func extract(o *options) (*packages, error) {
	pins, err := pinned(o.lock)
	if err != nil {
		return nil, err
	}
	p := &packages{root: filepath.Join(o.work, "root")}
	for _, pin := range pins {
		deb := filepath.Join(o.cache, "debs", fmt.Sprintf("%s_%s_armhf.deb", pin[0], pin[1]))
		if err := sha256File(deb, pin[2]); err != nil {
			return nil, fmt.Errorf("%w (run scripts/fetch-boot.sh)", err)
		}
		if out, err := exec.Command("dpkg-deb", "-x", deb, p.root).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dpkg-deb -x %s: %v %s", deb, err, out)
		}
		if strings.HasPrefix(pin[0], "linux-image-") {
			p.kver = strings.TrimPrefix(pin[0], "linux-image-")
		}
	}
	if p.kver == "" {
		return nil, fmt.Errorf("%s pins no linux-image package", o.lock)
	}
	p.kernel = filepath.Join(p.root, "boot", "vmlinuz-"+p.kver)
	p.moduleDir = filepath.Join(p.root, "lib", "modules", p.kver)
	p.dtbDir = filepath.Join(p.root, "usr", "lib", "linux-image-"+p.kver)
	if out, err := exec.Command("depmod", "-b", p.root, p.kver).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("depmod: %v %s", err, out)
	}
	return p, nil
}
