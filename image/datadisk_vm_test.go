//go:build vm

package main

import (
	"bytes"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDataDisk: the box's files move onto a USB disk and live there. The
// image as `make image` wrote it boots in QEMU with a blank USB disk on an
// xHCI controller; a store of 300 files is uploaded; `disk adopt sda`
// formats the disk and moves the files, and the power is cut three times
// on the way (during the first pass, as the server stops for the last pass,
// and just after the switch, while the card's copy is removed). After the
// boots, every file is there with its digest and is served from the disk.
// Then the disk is unplugged while a client uploads (QEMU's device_del):
// HTTPS answers 503 with why, SFTP refuses, and with the disk plugged back
// the files are served again, without a reboot, and the upload completes.
func TestDataDisk(t *testing.T) {
	t.Parallel()
	img := builtImage(t)
	start := time.Now()
	card := flashCard(t, img, "sftp", "e2fsck")
	usb := blankDisk(t, card, "usb.img", 2<<30) // blank, as from the shop
	opts := vmOptions{monitor: true, devices: []string{"-device", "qemu-xhci,id=xhci",
		"-drive", "if=none,id=usb,file=" + usb + ",format=raw", "-device", "usb-storage,bus=xhci.0,drive=usb,id=usbdisk,serial=BSTEST0001"}}

	v := startVMWith(t, card, opts)
	v.waitFor(t, `serving HTTPS`, 10*time.Minute)
	m := regexp.MustCompile(`password ([a-z0-9-]{23})`).FindStringSubmatch(v.log.String())
	if m == nil {
		t.Fatalf("no admin password on the console")
	}
	pw := m[1]

	// The household's files: 300 of 1 to 160 KiB in five folders.
	tree := filepath.Join(filepath.Dir(card), "tree")
	sums := map[string][20]byte{}
	r := rand.New(rand.NewSource(24))
	for i := 0; i < 300; i++ {
		rel := fmt.Sprintf("folder%d/file%03d.bin", i%5, i)
		b := make([]byte, 1024+r.Intn(160<<10))
		r.Read(b)
		os.MkdirAll(filepath.Join(tree, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(tree, rel), b, 0o644)
		sums[rel] = sha1.Sum(b)
	}
	if out, err := v.sftp(t, pw, "put -r "+tree+" tree"); err != nil {
		t.Fatalf("upload the store: %v\n%s", err, tail(out))
	}
	ca, _ := v.served(t)

	mark := len(v.log.String())
	io.WriteString(v.console, "\ndisk\n")
	v.waitAfter(t, mark, `sda +2\.1 GB +QEMU QEMU HARDDISK +serial BSTEST0001`, time.Minute)

	// Cut 1: during the first pass, the server serving from the card.
	mark = len(v.log.String())
	io.WriteString(v.console, "disk adopt sda\n")
	v.waitAfter(t, mark, `moving the files to the data disk; the card serves`, 2*time.Minute)
	time.Sleep(2 * time.Second)
	v.powerCut()
	t.Logf("cut 1, during the first pass: %v", time.Since(start).Round(time.Second))

	// Booted without the disk, the card serves every file; the move waits.
	noDisk := vmOptions{}
	v = startVMWith(t, card, noDisk)
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	v.checkFiles(t, pw, sums, "after cut 1, from the card")
	if st := v.status(t); !strings.Contains(st, "files:   moving the files to the USB disk") {
		t.Errorf("status does not say a move is under way:\n%s", st)
	}
	v.poweroff(t)

	// Cut 2: with the disk, the move starts again; cut as the server stops
	// for the last pass (before or after the switch is recorded).
	v = startVMWith(t, card, opts)
	v.waitFor(t, `finishing the move to the data disk a stop interrupted`, 5*time.Minute)
	v.waitFor(t, `stopping the server for the last pass`, 5*time.Minute)
	v.powerCut()
	t.Logf("cut 2, at the last pass: %v", time.Since(start).Round(time.Second))

	// Without the disk: the card serves (the switch was not recorded) or
	// nothing does (it was): never an old or half store.
	v = startVMWith(t, card, noDisk)
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	if strings.Contains(v.log.String(), "serving no files why=") {
		if code, body := v.get(t, ca, pw, "tree/folder0/file000.bin"); code != 503 || !strings.Contains(body, "not plugged in") {
			t.Errorf("switched, without the disk: %d %q, want 503 and why", code, body)
		}
		t.Log("cut 2 came after the switch")
	} else {
		v.checkFiles(t, pw, sums, "after cut 2, from the card")
		t.Log("cut 2 came before the switch")
	}
	v.poweroff(t)

	// Cut 3: just after the switch, while the card's copy is removed.
	v = startVMWith(t, card, opts)
	v.waitFor(t, `removing the card's copy of the files`, 5*time.Minute)
	v.powerCut()
	t.Logf("cut 3, after the switch: %v", time.Since(start).Round(time.Second))

	v = startVMWith(t, card, opts)
	v.waitFor(t, `data disk mounted dev=/dev/sda`, 5*time.Minute)
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	v.checkFiles(t, pw, sums, "after cut 3, from the disk")
	v.waitFor(t, `the card's copy of the files is removed`, 5*time.Minute)
	if st := v.status(t); !regexp.MustCompile(`files: +files on the USB disk [0-9a-f-]{36}`).MatchString(st) {
		t.Errorf("status does not say the files are on the USB disk:\n%s", st)
	}

	// Unplugged while a client uploads.
	big := filepath.Join(filepath.Dir(card), "big.bin")
	b := make([]byte, 24<<20)
	r.Read(b)
	os.WriteFile(big, b, 0o644)
	upload := make(chan error, 1)
	go func() {
		out, err := v.sftp(t, pw, "put "+big+" big.bin")
		if err != nil {
			err = fmt.Errorf("%v: %s", err, out)
		}
		upload <- err
	}()
	time.Sleep(3 * time.Second)
	mark = len(v.log.String())
	v.monitor(t, "device_del usbdisk")
	v.waitAfter(t, mark, `the data disk was unplugged`, time.Minute)
	v.waitAfter(t, mark, `serving no files why=`, 2*time.Minute)
	acked := <-upload == nil
	t.Logf("the upload during the unplug was acknowledged: %v", acked)
	code, body := v.get(t, ca, pw, "tree/folder0/file000.bin")
	if code != 503 || !strings.Contains(body, "unplugged") {
		t.Errorf("a GET with the disk unplugged: %d %q, want 503 and why", code, body)
	}
	if out, err := v.sftp(t, pw, "ls"); err == nil || !strings.Contains(out, "unplugged") {
		t.Errorf("SFTP with the disk unplugged: %v\n%s", err, out)
	}
	if st := v.status(t); !strings.Contains(st, "no files served: the data disk") {
		t.Errorf("status does not say why no files are served:\n%s", st)
	}

	// Plugged back in: served again, no reboot.
	mark = len(v.log.String())
	v.monitor(t, "drive_add 0 if=none,id=usb2,file="+usb+",format=raw")
	v.monitor(t, "device_add usb-storage,bus=xhci.0,drive=usb2,id=usbdisk2,serial=BSTEST0001")
	v.waitAfter(t, mark, `the data disk is back`, 2*time.Minute)
	v.waitAfter(t, mark, `serving HTTPS`, 2*time.Minute)
	if strings.Contains(v.log.String()[mark:], "starting as PID 1") {
		t.Error("the box rebooted to take the disk back")
	}
	if acked {
		sums["big.bin"] = sha1.Sum(b)
	} else if out, err := v.sftp(t, pw, "put "+big+" big.bin"); err != nil {
		t.Fatalf("the upload again, with the disk back: %v\n%s", err, out)
	} else {
		sums["big.bin"] = sha1.Sum(b)
	}
	v.checkFiles(t, pw, sums, "with the disk back")
	v.poweroff(t)
	t.Logf("whole data disk test %v", time.Since(start).Round(time.Second))
}

// checkFiles fetches every file over SFTP and compares it with its digest.
// The box may restart its server under it (the move's last pass): it tries
// again then.
func (v *vm) checkFiles(t *testing.T, pw string, sums map[string][20]byte, when string) {
	t.Helper()
	var out string
	var err error
	for try := 0; try < 4; try++ {
		got := filepath.Join(t.TempDir(), "got")
		os.Mkdir(got, 0o755)
		cmds := []string{"get -r tree " + got + "/tree"}
		if _, ok := sums["big.bin"]; ok {
			cmds = append(cmds, "get big.bin "+got+"/big.bin")
		}
		if out, err = v.sftp(t, pw, cmds...); err != nil {
			time.Sleep(20 * time.Second)
			continue
		}
		n := 0
		filepath.WalkDir(got, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
		for rel, sum := range sums {
			b, err := os.ReadFile(filepath.Join(got, rel))
			if !strings.HasPrefix(rel, "big") {
				b, err = os.ReadFile(filepath.Join(got, "tree", rel))
			}
			if err != nil {
				t.Errorf("%s: %s is missing: %v", when, rel, err)
			} else if sha1.Sum(b) != sum {
				t.Errorf("%s: %s has other bytes", when, rel)
			}
		}
		if n != len(sums) {
			t.Errorf("%s: %d files, want %d", when, n, len(sums))
		}
		return
	}
	t.Fatalf("%s: the files could not be fetched: %v\n%s", when, err, tail(out))
}

// get fetches a file over WebDAV as admin.
func (v *vm) get(t *testing.T, ca []byte, pw, path string) (int, string) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}}}
	req, _ := http.NewRequest("GET", "https://127.0.0.1:"+v.https+"/dav/"+path, nil)
	req.SetBasicAuth("admin", pw)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(bytes.TrimSpace(body))
}
