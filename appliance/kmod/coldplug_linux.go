package kmod

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Loader loads modules of the running kernel from /lib/modules/RELEASE.
type Loader struct {
	dir    string
	mods   *Modules
	loaded map[string]bool // by module name
	failed map[string]bool
	log    *slog.Logger
}

// NewLoader reads the running kernel's module metadata.
func NewLoader(log *slog.Logger) (*Loader, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	rel := unix.ByteSliceToString(u.Release[:])
	dir := filepath.Join("/lib/modules", rel)
	m, err := ReadModules(dir)
	if err != nil {
		return nil, fmt.Errorf("kernel modules for %s: %w", rel, err)
	}
	return &Loader{dir: dir, mods: m, loaded: map[string]bool{}, failed: map[string]bool{}, log: log}, nil
}

// Load loads a module by name, its dependencies first; one already loaded,
// or built into the kernel, is fine. Names match whether they are spelt
// with '-' or '_' (nls_iso8859-1.ko is module nls_iso8859_1).
func (l *Loader) Load(name string) error {
	order, err := l.mods.Closure([]string{name})
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	for _, m := range order {
		if err := l.loadOne(m); err != nil {
			return err
		}
	}
	return nil
}

// loadOne loads one module file with finit_module(2); the .ko files in the
// initramfs are uncompressed, so the kernel reads them as they are.
func (l *Loader) loadOne(name string) error {
	if l.loaded[name] {
		return nil
	}
	f, err := os.Open(filepath.Join(l.dir, l.mods.Path(name)))
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), "", 0); err != nil && !errors.Is(err, unix.EEXIST) {
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
			for _, m := range l.mods.Match(alias) {
				if l.loaded[m] || l.failed[m] {
					continue
				}
				if err := l.Load(m); err != nil {
					l.log.Warn("module not loaded", "module", m, "err", err)
					l.failed[m] = true // do not retry a broken module forever
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
