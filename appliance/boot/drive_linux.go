package boot

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/usbgadget"
	"github.com/bonesync/bonesync/appliance/vfat"
	"github.com/bonesync/bonesync/appliance/welcome"
)

// usbDir holds the start drive's image (tmpfs).
const usbDir = "/run/bonesync-usb"

// driveLook is how often the start drive looks whether what it shows
// changed (the CA made at the first start, the report after the
// benchmark, a new address): a stat of two files and the addresses.
const driveLook = 5 * time.Second

// startDrive is the USB device port's read-only drive: a FAT volume made
// in memory (package vfat) with the welcome page (package welcome) as
// "Start here.html", the CA in the forms devices take, and the report as
// text. It is made again when what it shows changes, and the computer
// sees a new medium.
type startDrive struct {
	s     *System
	shown string // key() of what the image in use shows
	n     int    // images made
	file  string // the image in use
}

// key is what changes with what the drive shows: the CA's and the
// report's files, and the addresses. A look at it is two stats; the
// drive's content is made only when it changed.
func (d *startDrive) key() string {
	dir := &state.Dir{Path: StateDir}
	var k strings.Builder
	for _, f := range []string{state.CACert, state.Report} {
		if fi, err := os.Stat(dir.Join(f)); err == nil {
			fmt.Fprintf(&k, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	for _, a := range d.addresses() {
		fmt.Fprintf(&k, "%s\n", a.URL)
	}
	return k.String()
}

// content is what the drive shows now.
func (d *startDrive) content() ([]vfat.File, error) {
	dir := &state.Dir{Path: StateDir}
	addrs := d.addresses()
	now := time.Now().UTC()
	ca, err := pki.LoadCA(dir)
	if err != nil {
		// The first start makes it in a moment: the drive says so, and
		// changes once it is there.
		return []vfat.File{{Name: "Starting.txt", ModTime: now, Data: []byte("bonesync is starting for the first time and making its certificate authority.\r\n" +
			"This drive shows the start page in a minute or two (unplug and plug the cable again if it does not).\r\n")}}, nil
	}
	cert := ca.Cert
	host := d.s.usb.name() + ".local"
	var page bytes.Buffer
	if err := welcome.Write(&page, welcome.Page{CAFiles: "", CAURL: "http://" + usbLinks[1].box.String() + "/ca.crt",
		HTTPS: "https://" + host, Fingerprint: pki.Fingerprint(cert), Addresses: addrs}); err != nil {
		return nil, fmt.Errorf("start page: %w", err)
	}
	files := []vfat.File{
		{Name: "Start here.html", Data: page.Bytes(), ModTime: now},
		{Name: "ca.crt", Data: ca.PEM(), ModTime: cert.NotBefore},
		{Name: "ca.der", Data: cert.Raw, ModTime: cert.NotBefore},
		{Name: "bonesync.mobileconfig", Data: welcome.MobileConfig(cert.Raw, host, 443), ModTime: cert.NotBefore},
	}
	if b, err := dir.Read(state.Report); err == nil {
		if r, err := report.Parse(b); err == nil {
			var text bytes.Buffer
			if r.Console(&text) == nil {
				files = append(files, vfat.File{Name: "report.txt", Data: bytes.ReplaceAll(text.Bytes(), []byte("\n"), []byte("\r\n")), ModTime: now})
			}
		}
	}
	return files, nil
}

// addresses are the ways to the box the page lists: over USB, then the
// network's addresses and the name.
func (d *startDrive) addresses() []welcome.Address {
	var out []welcome.Address
	for _, l := range d.s.usb.addresses() {
		out = append(out, welcome.Address{What: l.who, URL: "https://" + l.box.String() + "/"})
	}
	if st := d.s.net.State(); st != nil {
		for _, a := range st.Addrs {
			out = append(out, welcome.Address{What: "On the network (" + st.Interface + ")", URL: "https://" + a.IP.String() + "/"})
		}
	}
	out = append(out, welcome.Address{What: "By name, on the network or over USB (mDNS)", URL: "https://" + d.s.usb.name() + ".local/"})
	return out
}

// refresh makes the drive's image anew if what it shows changed: the new
// image and what it shows, or "" when the image in use is current. The
// caller records it (use) once the drive shows it. What it reads is the
// state's files: nothing there may stop PID 1.
func (d *startDrive) refresh() (_, _ string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("start drive: %v", r)
		}
	}()
	key := d.key()
	if key == d.shown && d.file != "" {
		return "", "", nil
	}
	files, err := d.content()
	if err != nil {
		return "", "", err
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	img, err := vfat.Image("BONESYNC", binary.BigEndian.Uint32(h.Sum(nil)), files)
	if err != nil {
		return "", "", fmt.Errorf("start drive: %w", err)
	}
	if err := os.MkdirAll(usbDir, 0o700); err != nil {
		return "", "", err
	}
	d.n++
	name := filepath.Join(usbDir, fmt.Sprintf("drive-%d.img", d.n))
	if err := os.WriteFile(name, img, 0o600); err != nil {
		os.Remove(name) // dropped: tmpfs; what matters is the write's error
		return "", "", fmt.Errorf("start drive: %w", err)
	}
	return name, key, nil
}

// use records img, showing key, as the drive's image, and removes the
// one before.
func (d *startDrive) use(img, key string) {
	if d.file != "" && d.file != img {
		os.Remove(d.file) // dropped: tmpfs, and the next image has another name
	}
	d.file, d.shown = img, key
}

// keep makes the drive anew whenever what it shows changes, until ctx
// ends.
func (d *startDrive) keep(ctx context.Context, g *usbgadget.Gadget) {
	t := time.NewTicker(driveLook)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		img, key, err := d.refresh()
		if err != nil {
			d.s.Log.Error("USB device port: the start drive was not made again", "err", err)
			continue
		}
		if img == "" {
			continue
		}
		if err := g.SetDrive(img); err != nil {
			// Tried again at the next look: the key is not recorded.
			os.Remove(img) // dropped: tmpfs
			d.s.Log.Error("USB device port: the start drive was not changed", "err", err)
			continue
		}
		d.use(img, key)
		d.s.Log.Info("USB device port: the start drive shows the box as it is now", "image", img)
	}
}
