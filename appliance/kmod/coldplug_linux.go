package kmod

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/u-root/u-root/pkg/kmodule"
	"golang.org/x/sys/unix"
)

// Loader loads modules of the running kernel from /lib/modules/RELEASE.
type Loader struct {
	prober  *kmodule.Prober
	aliases Aliases
	loaded  map[string]bool
	log     io.Writer
}

// NewLoader reads the running kernel's modules.dep and modules.alias.
func NewLoader(log io.Writer) (*Loader, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	rel := unix.ByteSliceToString(u.Release[:])
	dir := filepath.Join("/lib/modules", rel)
	f, err := os.Open(filepath.Join(dir, "modules.alias"))
	if err != nil {
		return nil, fmt.Errorf("kernel modules for %s: %w", rel, err)
	}
	defer f.Close()
	al, err := ReadAliases(f)
	if err != nil {
		return nil, err
	}
	p, err := kmodule.NewProber(kmodule.ProbeOpts{RootDir: "/", KVer: rel})
	if err != nil {
		return nil, fmt.Errorf("modules.dep for %s: %w", rel, err)
	}
	return &Loader{prober: p, aliases: al, loaded: map[string]bool{}, log: log}, nil
}

// Load loads a module by name with its dependencies; one already loaded or
// built in is fine.
func (l *Loader) Load(name string) error {
	if l.loaded[name] {
		return nil
	}
	if err := l.prober.Probe(name, ""); err != nil && !strings.Contains(err.Error(), "exists") {
		return fmt.Errorf("load %s: %w", name, err)
	}
	l.loaded[name] = true
	return nil
}

// Coldplug loads the modules for every device the kernel has found, by the
// devices' modalias files under /sys/devices. Loading a bus driver brings new
// devices (virtio_pci, then virtio-net; the CPSW, then its PHY on MDIO), so it
// repeats until a pass loads nothing new. It returns the modules it loaded.
func (l *Loader) Coldplug() []string {
	var all []string
	for pass := 0; pass < 6; pass++ {
		var fresh []string
		for _, alias := range modaliases() {
			for _, m := range l.aliases.Match(alias) {
				if l.loaded[m] {
					continue
				}
				if err := l.Load(m); err != nil {
					fmt.Fprintf(l.log, "modules: %v\n", err)
					l.loaded[m] = true // do not retry a broken module forever
					continue
				}
				fresh = append(fresh, m)
			}
		}
		if len(fresh) == 0 {
			break
		}
		all = append(all, fresh...)
		time.Sleep(200 * time.Millisecond) // let the new drivers probe
	}
	return all
}

func modaliases() []string {
	var out []string
	filepath.WalkDir("/sys/devices", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == "modalias" && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil {
				if s := strings.TrimSpace(string(b)); s != "" {
					out = append(out, s)
				}
			}
		}
		return nil
	})
	return out
}
