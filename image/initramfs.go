package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/bonesync/bonesync/appliance/kmod"
	"github.com/bonesync/bonesync/appliance/update"
)

// writeInitramfs writes the initramfs with u-root's cpio package: bonesync as
// /init, /dev/console (devtmpfs is not mounted for an initramfs and PID 1
// needs a console from its first instruction), and the kernel modules the
// boards need with a modules.dep and modules.alias trimmed to them, so that
// coldplug only ever asks for modules that are there. Every record carries the
// same owner and time, so the archive is reproducible; it is gzipped with no
// name or time in the header.
func writeInitramfs(o *options, p *packages, m *kmod.Modules, included []string, out string) error {
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return fmt.Errorf("%w (make build-arm)", err)
	}
	modRoot := path.Join("lib/modules", p.kver)
	var recs []cpio.Record
	keys := strings.TrimPrefix(update.BuiltInKeys, "/")
	for _, d := range []string{"dev", "proc", "sys", "run", "tmp", "etc", path.Dir(keys), "boot", "perm", modRoot} {
		recs = append(recs, cpio.Directory(d, 0o755))
	}
	pub := update.Key(o.key.Public().(ed25519.PublicKey))
	recs = append(recs,
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.StaticFile("init", string(bin), 0o755),
		// The key this image's update bundles are signed with.
		cpio.StaticFile(keys, fmt.Sprintf("# bundles signed with this key (%s) update this box\n%s\n", pub.Fingerprint(), pub), 0o644),
	)
	keep := map[string]bool{}
	for _, name := range included {
		rel := m.Path(name)
		if rel == "" {
			continue // built in
		}
		keep[rel] = true
		b, err := os.ReadFile(filepath.Join(p.moduleDir, rel))
		if err != nil {
			return err
		}
		recs = append(recs, cpio.StaticFile(path.Join(modRoot, rel), string(b), 0o644))
	}
	for _, f := range []struct {
		name string
		keep func(line string) bool
	}{
		{"modules.dep", func(l string) bool { return keep[strings.TrimSuffix(strings.Fields(l)[0], ":")] }},
		{"modules.alias", func(l string) bool {
			f := strings.Fields(l)
			return len(f) == 3 && slices.Contains(included, f[2])
		}},
		{"modules.builtin", func(string) bool { return true }},
		{"modules.order", func(l string) bool { return keep[strings.TrimSpace(l)] }},
	} {
		b, err := filterLines(filepath.Join(p.moduleDir, f.name), f.keep)
		if err != nil {
			return err
		}
		recs = append(recs, cpio.StaticFile(path.Join(modRoot, f.name), string(b), 0o644))
	}
	slices.SortStableFunc(recs, func(a, b cpio.Record) int { return strings.Compare(a.Name, b.Name) })
	var raw bytes.Buffer
	w := cpio.Newc.Writer(&raw)
	for i := range recs {
		recs[i] = cpio.MakeReproducible(recs[i])
		recs[i].MTime = uint64(o.epoch.Unix())
	}
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		return err
	}
	if err := cpio.WriteTrailer(w); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if _, err := gz.Write(raw.Bytes()); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	fmt.Fprintf(o.log, "initramfs: %d modules, %.1f MiB (%.1f MiB uncompressed)\n", len(keep), float64(fileSize(out))/(1<<20), float64(raw.Len())/(1<<20))
	return f.Close()
}

func filterLines(file string, keep func(string) bool) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.TrimSpace(l) != "" && keep(l) {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes(), sc.Err()
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
