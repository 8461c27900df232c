package kmod

import (
	"errors"
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
	dir     string
	deps    map[string][]string // module path -> the paths it needs, from modules.dep
	byName  map[string]string   // module name ('_' for '-') -> path
	aliases Aliases
	loaded  map[string]bool // by path
	failed  map[string]bool
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
	dep, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, fmt.Errorf("kernel modules for %s: %w", rel, err)
	}
	defer dep.Close()
	l := &Loader{dir: dir, aliases: al, loaded: map[string]bool{}, failed: map[string]bool{}, log: log}
	if l.deps, l.byName, err = ReadDeps(dep); err != nil {
		return nil, err
	}
	return l, nil
}

// Load loads a module by name, its dependencies first; one already loaded is
// fine. Names match whether they are spelt with '-' or '_' (file names mix
// them: nls_iso8859-1.ko is module nls_iso8859_1).
func (l *Loader) Load(name string) error {
	p, ok := l.byName[Canonical(name)]
	if !ok {
		return fmt.Errorf("load %s: no such module", name)
	}
	return l.loadPath(p, 0)
}

func (l *Loader) loadPath(p string, depth int) error {
	if l.loaded[p] {
		return nil
	}
	if depth > 32 {
		return fmt.Errorf("load %s: dependency loop", p)
	}
	for _, d := range l.deps[p] {
		if err := l.loadPath(d, depth+1); err != nil {
			return err
		}
	}
	f, err := os.Open(filepath.Join(l.dir, p))
	if err != nil {
		return fmt.Errorf("load %s: %w", p, err)
	}
	defer f.Close()
	if err := kmodule.FileInit(f, "", 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("load %s: %w", p, err)
	}
	l.loaded[p] = true
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
				p, ok := l.byName[Canonical(m)]
				if !ok || l.loaded[p] || l.failed[p] {
					continue
				}
				if err := l.loadPath(p, 0); err != nil {
					fmt.Fprintf(l.log, "modules: %v\n", err)
					l.failed[p] = true // do not retry a broken module forever
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
