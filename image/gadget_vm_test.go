//go:build vm

package main

// The USB device port's test: the card `make image` wrote, booted through
// U-Boot in QEMU, with the kernel's dummy_hcd standing for the cable and a
// computer (the guest's own host drivers take the gadget). The computer's
// side is image/testdata/usbcheck, in an initramfs appended to the slot's:
// the card's bonesync is unchanged and still PID 1, and no release carries
// the checker. See usbcheck's doc for what it does.

import (
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/bonesync/bonesync/appliance/kmod"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/update"
)

// The computer's drivers, and dummy_hcd, the cable.
var usbHostModules = []string{"dummy_hcd", "usb_storage", "sd_mod", "cdc_ether", "rndis_host", "cdc_acm"}

func TestGadget(t *testing.T) {
	t.Parallel()
	img := builtImage(t)
	card := flashCard(t, img, "mcopy")
	appendInitramfs(t, card, usbcheckArchive(t, card))

	v := bootVM(t, card)
	v.waitFor(t, `bonesync: USB device port ready: plug it into a computer udc=dummy_udc.0 offers=network 192.168.7.2 \(Windows\), 192.168.6.2 \(macOS, Linux\), console ttyGS0, start drive`, 3*time.Minute)
	end := v.waitFor(t, `usbcheck: (PASS|FAIL[^\n]*)`, 12*time.Minute)
	log := v.log.String()
	if end[1] != "PASS" {
		t.Fatalf("the computer's side: %s\n%s", end[1], tail(log))
	}
	for _, want := range []string{
		"usbcheck: drive: /dev/sd", "read-only 1",
		"Start here.html, bonesync.mobileconfig, ca.crt, ca.der, report.txt",
		"leased 192.168.7.1/30 from 192.168.7.2 (router [], DNS [])",
		"leased 192.168.6.1/30 from 192.168.6.2 (router [], DNS [])",
		"https://192.168.7.2/ca.crt over", "https://192.168.6.2/ca.crt over", "verified against the drive's CA as 192.168.7.2, same CA true",
		"usbcheck: console: /dev/ttyACM0 greets with the report's summary",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the computer's side did not say %q", want)
		}
	}
	for _, bad := range []string{"boot step failed", "usbcheck: FAIL"} {
		if strings.Contains(log, bad) {
			t.Errorf("the serial log says %q:\n%s", bad, tail(log))
		}
	}
	if n := len(regexp.MustCompile(`usbcheck: network: bonesync.local answers over mDNS on \S+: true`).FindAllString(log, -1)); n != 2 {
		t.Errorf("the box answered for its name over mDNS on %d of the 2 USB links", n)
	}
	// The console's greeting holds the first start's password, the one the
	// UART showed.
	if pw := regexp.MustCompile(`password ([a-z0-9-]{23})`).FindStringSubmatch(log); pw == nil || !strings.Contains(log, "the first login's password "+pw[1]+", and the prompt") {
		t.Errorf("the USB console's greeting lacks the first login's password the UART showed (%q)", pw)
	}
	// Ethernet serves as before, and the CA there is the drive's.
	ca, _ := v.served(t)
	if !strings.Contains(log, fingerprintLine(t, ca)) {
		t.Errorf("the CA over Ethernet is not the one whose fingerprint the drive showed")
	}
	v.poweroff(t)
	checkFAT(t, card, "after the USB test")
}

// fingerprintLine is how usbcheck names the CA: "fingerprint XX:XX...".
func fingerprintLine(t *testing.T, caPEM []byte) string {
	t.Helper()
	return "the CA's fingerprint " + pemFingerprint(t, caPEM)
}

// usbcheckArchive is the test's initramfs: usbcheck as /init, the card's
// own /init (bonesync) beside it, and the modules of usbHostModules with
// their dependencies, named in the order they load.
func usbcheckArchive(t *testing.T, card string) []byte {
	t.Helper()
	dir := t.TempDir()
	checker := filepath.Join(dir, "usbcheck")
	build := exec.Command("go", "build", "-trimpath", "-o", checker, "./image/testdata/usbcheck")
	build.Dir = ".."
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm", "GOARM=7", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build usbcheck: %v\n%s", err, out)
	}
	bin, _ := os.ReadFile(checker)
	recs := []cpio.Record{cpio.Directory("usbcheck", 0o755), cpio.Directory("usbcheck/modules", 0o755),
		cpio.StaticFile("init", string(bin), 0o755), cpio.StaticFile("usbcheck/bonesync", string(cardInit(t, card)), 0o755)}
	o := &options{lock: "../scripts/boot-packages.lock", cache: "../out/cache", work: dir}
	p, err := extract(o)
	if err != nil {
		t.Fatalf("the kernel's modules: %v", err)
	}
	m, err := kmod.ReadModules(p.moduleDir)
	if err != nil {
		t.Fatal(err)
	}
	order, err := m.Closure(usbHostModules)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range order {
		if m.Path(name) == "" {
			continue // built in
		}
		ko, err := os.ReadFile(filepath.Join(p.moduleDir, m.Path(name)))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, cpio.StaticFile(fmt.Sprintf("usbcheck/modules/%02d-%s.ko", i, name), string(ko), 0o644))
	}
	var raw bytes.Buffer
	w := cpio.Newc.Writer(&raw)
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}

// cardInit is the card's bonesync: /init of slot a's initramfs.
func cardInit(t *testing.T, card string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(bootFile(t, card, "slot-a/initrd.img")))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Name == "init" {
			b, _ := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
			return b
		}
	}
	t.Fatal("slot a's initramfs has no /init")
	return nil
}

// appendInitramfs puts archive after slot a's initramfs on the card, as
// the kernel takes several (the boot script loads slot.env's length).
func appendInitramfs(t *testing.T, card string, archive []byte) {
	t.Helper()
	env := update.ParseEnv(bootFile(t, card, "slot-a/slot.env"))
	size, err := strconv.ParseInt(env["bonesync_initrd"], 16, 64)
	if err != nil || size <= 0 {
		t.Fatalf("slot a's slot.env: %q", env)
	}
	initrd := bootFile(t, card, "slot-a/initrd.img")[:size]
	initrd = append(append(initrd, make([]byte, (4-len(initrd)%4)%4)...), archive...)
	env["bonesync_initrd"] = fmt.Sprintf("%x", len(initrd))
	envBytes, err := env.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"initrd.img": initrd, "slot.env": envBytes} {
		local := filepath.Join(dir, name)
		os.WriteFile(local, b, 0o644)
		if out, err := exec.Command("mcopy", "-o", "-i", card+"@@"+fmt.Sprint(partStart*512), local, "::/slot-a/"+name).CombinedOutput(); err != nil {
			t.Fatalf("mcopy %s: %v %s", name, err, out)
		}
	}
}

// pemFingerprint is the SHA-256 of a PEM certificate as pki.Fingerprint
// writes it.
func pemFingerprint(t *testing.T, caPEM []byte) string {
	t.Helper()
	b, _ := pem.Decode(caPEM)
	if b == nil {
		t.Fatalf("not PEM: %q", caPEM)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return pki.Fingerprint(c)
}
