//go:build vm

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/update"
)

// TestEMMC: the system moves from the card to the eMMC. The image boots
// in QEMU with a second, blank virtio disk standing for the eMMC, its
// writes slowed to 4 MB/s; `emmc flash` is cut off by a power cut while it
// copies the boot partition, and the card boots as before and says the
// flash did not finish. A second flash runs to the end; the card is then
// marked (its boot script steps aside) and the eMMC's copy is not. Booted
// from the eMMC alone, the box serves the same CA, admin logs in over SFTP
// with the same password and finds the file uploaded before the flash, and
// an update there boots its new slot; `emmc flash` there is refused. With
// the card kept in the eMMC still boots, and `emmc card-boot` clears the
// card's mark. The eMMC's file systems are clean.
func TestEMMC(t *testing.T) {
	t.Parallel()
	img := builtImage(t)
	start := time.Now()
	versionA := update.ParseEnv(bootFile(t, img, "slot-a/slot.env"))["bonesync_version"]
	versionB := versionA + ".emmc"
	bundle := make(chan string, 1)
	go func() {
		b, err := buildBundle(t.TempDir(), versionB, "./appliance")
		if err != nil {
			t.Error(err)
		}
		bundle <- b
	}()

	card := flashCard(t, img, "sftp", "e2fsck", "fsck.vfat", "mtype")
	mmc := blankDisk(t, card, "emmc.img", 1<<30)
	const password = "moved to the eMMC"
	setAdminPassword(t, card, password)
	emmcDrive := func(extra string) vmOptions {
		return vmOptions{devices: []string{"-drive", "if=none,file=" + mmc + ",format=raw,id=emmc" + extra, "-device", "virtio-blk-pci,drive=emmc,addr=" + emmcSlot}}
	}

	// Boot 1: a file uploaded, then the flash cut off while it copies the
	// boot partition (the eMMC's writes at 4 MB/s: 256 MiB take a minute).
	v := startVMWith(t, card, emmcDrive(",throttling.bps-write=4000000"))
	v.waitFor(t, `serving HTTPS`, 10*time.Minute)
	ca, _ := v.served(t)
	note := filepath.Join(filepath.Dir(card), "note.txt")
	os.WriteFile(note, []byte("uploaded to the card before the flash\n"), 0o644)
	if out, err := v.sftp(t, password, "put "+note+" note.txt"); err != nil {
		t.Fatalf("sftp put: %v\n%s", err, out)
	}
	if st := v.console1(t, "emmc", `running: +[^\n]*\n`); !strings.Contains(st, "nothing (blank)") || !strings.Contains(st, "running: from the card") {
		t.Errorf("emmc before the flash:\n%s", st)
	}
	mark := len(v.log.String())
	io.WriteString(v.console, "emmc flash\n")
	v.waitAfter(t, mark, `emmc: boot partition copied mib=64 of=256`, 5*time.Minute)
	v.powerCut()
	checkFAT(t, card, "after a power cut during the flash")
	t.Logf("cut during the flash: %v", time.Since(start).Round(time.Second))

	// Boot 2, both disks: the card boots as before and says the flash
	// did not finish; the flash again, to the end.
	v = startVMWith(t, card, emmcDrive(""))
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	if ca2, _ := v.served(t); !bytes.Equal(ca, ca2) {
		t.Error("after the cut the card serves another CA")
	}
	// What reached the eMMC before the cut depends on the kernel's
	// writeback: a part of the copy, or nothing; never a bootable system.
	if st := v.console1(t, "emmc", `flash: +[^\n]*\n`); !regexp.MustCompile(`on it: +(a copy that did not finish|nothing \(blank\))`).MatchString(st) || !strings.Contains(st, "has not finished") {
		t.Errorf("emmc after the cut:\n%s", st)
	}
	mark = len(v.log.String())
	io.WriteString(v.console, "emmc flash\n")
	v.waitAfter(t, mark, `emmc flash: done and verified. Now power off`, 10*time.Minute)
	v.waitAfter(t, mark, `serving HTTPS`, 5*time.Minute) // the card's server again
	st := v.console1(t, "emmc", `flash: +[^\n]*\n`)
	m := regexp.MustCompile(`a bonesync system \(boot partition ([0-9a-f]{8})-01\)`).FindStringSubmatch(st)
	if m == nil || !strings.Contains(st, "verified at") {
		t.Fatalf("emmc after the flash:\n%s", st)
	}
	v.poweroff(t)
	t.Logf("flashed: %v", time.Since(start).Round(time.Second))
	checkEMMC(t, card, mmc, m[1])

	// The card alone: its boot script steps aside.
	v = startVMWith(t, card, vmOptions{})
	v.waitFor(t, `bonesync: the system on this card was moved to the eMMC`, 2*time.Minute)
	v.powerCut()

	// Boot 3, the eMMC alone (in its slot): the same box, and an update
	// there.
	v = startVMWith(t, mmc, vmOptions{reboots: true, cardAddr: emmcSlot})
	v.waitFor(t, `booted from disk=vda partuuid=`+m[1]+`-01`, 3*time.Minute)
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	if strings.Contains(v.log.String(), "benchmarking") {
		t.Error("the eMMC's first boot benchmarked again: the state was not copied")
	}
	if ca3, _ := v.served(t); !bytes.Equal(ca, ca3) {
		t.Error("the eMMC serves another CA")
	}
	back := filepath.Join(filepath.Dir(card), "back.txt")
	if out, err := v.sftp(t, password, "get note.txt "+back); err != nil {
		t.Fatalf("sftp get from the eMMC: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(back); string(got) != "uploaded to the card before the flash\n" {
		t.Errorf("the file on the eMMC = %q", got)
	}
	if st := v.console1(t, "emmc", `running: +[^\n]*\n`); !strings.Contains(st, "a bonesync system (boot partition "+m[1]+"-01)") || !strings.Contains(st, "running: from the eMMC") {
		t.Errorf("emmc on the eMMC's system:\n%s", st)
	}
	if out := v.console1(t, "emmc flash", `emmc flash: [^\n]*\n`); !strings.Contains(out, "runs from the eMMC already") {
		t.Errorf("emmc flash on the eMMC's system:\n%s", out)
	}
	b := <-bundle
	if b == "" {
		t.FailNow()
	}
	mark = len(v.log.String())
	if code, body := v.upload(password, b); code != 200 || !strings.Contains(body, "reboots now into version "+versionB) {
		t.Fatalf("PUT /admin/update on the eMMC = %d:\n%s", code, body)
	}
	v.waitAfter(t, mark, `bonesync: slot b on trial, once`, 3*time.Minute)
	v.waitAfter(t, mark, `booted from disk=vda partuuid=`+m[1]+`-01`, 3*time.Minute)
	v.waitAfter(t, mark, `its slot is now the default version=\S+ slot=b`, 5*time.Minute)
	if st := v.statusJSON(t, password); st.Version != versionB || st.System.Slot != "b" || st.System.Default != "b" {
		t.Errorf("after the update on the eMMC, /status.json = %+v", st)
	}
	v.poweroff(t)

	// Boot 4, the card kept in (after the eMMC, as U-Boot numbers them):
	// the eMMC boots, and `emmc card-boot` clears the card's mark.
	v = startVMWith(t, mmc, vmOptions{cardAddr: emmcSlot, devices: []string{
		"-drive", "if=none,file=" + card + ",format=raw,id=card", "-device", "virtio-blk-pci,drive=card,addr=0x11"}})
	v.waitFor(t, `booted from disk=vda partuuid=`+m[1]+`-01`, 3*time.Minute)
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	if out := v.console1(t, "emmc card-boot", `emmc card-boot: [^\n]*\n`); !strings.Contains(out, "the card boots its own system again") {
		t.Errorf("emmc card-boot:\n%s", out)
	}
	v.poweroff(t)
	if e := update.ParseEnv(bootFile(t, card, update.StateFile)); e["bonesync_moved"] != "" {
		t.Errorf("the card's boot.env after emmc card-boot = %v, want no mark", e)
	}
	checkFAT(t, card, "the card after emmc card-boot")
	checkFAT(t, mmc, "the eMMC after its update")
	checkExt4(t, mmc, "the eMMC after its update")
	t.Logf("whole eMMC test %v", time.Since(start).Round(time.Second))
}

// console1 runs one console command and returns what it printed up to
// the line matching last.
func (v *vm) console1(t *testing.T, command, last string) string {
	t.Helper()
	mark := len(v.log.String())
	io.WriteString(v.console, "\n"+command+"\n")
	v.waitAfter(t, mark, last, time.Minute)
	return v.log.String()[mark:]
}

// emmcSlot is the PCI slot of the eMMC's stand-in, as the qemu-virt board
// data names it ("host": "0000:00:10.0").
const emmcSlot = "0x10"

// setAdminPassword sets admin_password in bonesync.conf on the card's FAT,
// as an owner does from any computer before the first boot.
func setAdminPassword(t *testing.T, card, password string) {
	t.Helper()
	fat := card + "@@" + fmt.Sprint(partStart*512)
	conf, err := exec.Command("mtype", "-i", fat, "::/bonesync.conf").Output()
	if err != nil {
		t.Fatal(err)
	}
	conf = append(conf, "admin_password = \""+password+"\"\r\n"...)
	file := filepath.Join(t.TempDir(), "bonesync.conf")
	os.WriteFile(file, conf, 0o644)
	if out, err := exec.Command("mcopy", "-o", "-i", fat, file, "::/bonesync.conf").CombinedOutput(); err != nil {
		t.Fatalf("mcopy: %v %s", err, out)
	}
}

// checkEMMC checks the flashed eMMC against the card: its own disk
// signature (sig, as the console showed it), the card's boot entry, clean
// file systems, the card marked to step aside and the eMMC not.
func checkEMMC(t *testing.T, card, mmc, sig string) {
	t.Helper()
	read := func(p string) []byte {
		f, _ := os.Open(p)
		defer f.Close()
		b := make([]byte, 512)
		f.ReadAt(b, 0)
		return b
	}
	cm, em := read(card), read(mmc)
	if got := fmt.Sprintf("%08x", binary.LittleEndian.Uint32(em[440:])); got != sig || bytes.Equal(cm[440:444], em[440:444]) {
		t.Errorf("the eMMC's disk signature %s (console: %s) is the card's or not what was shown", got, sig)
	}
	if !bytes.Equal(cm[446:462], em[446:462]) || em[510] != 0x55 || em[511] != 0xaa {
		t.Errorf("the eMMC's boot entry is not the card's: % x", em[446:462])
	}
	checkFAT(t, mmc, "the eMMC after the flash")
	checkExt4(t, mmc, "the eMMC after the flash")
	if e := update.ParseEnv(bootFile(t, card, update.StateFile)); e["bonesync_moved"] != "1" {
		t.Errorf("the card's boot.env after the flash = %v, want the mark", e)
	}
	if e := update.ParseEnv(bootFile(t, mmc, update.StateFile)); e["bonesync_moved"] != "" || e["bonesync_slot"] != "a" {
		t.Errorf("the eMMC's boot.env = %v, want slot a and no mark", e)
	}
}

// checkExt4 runs e2fsck -fn on the disk's second partition.
func checkExt4(t *testing.T, disk, when string) {
	t.Helper()
	f, _ := os.Open(disk)
	mbr := make([]byte, 512)
	f.ReadAt(mbr, 0)
	f.Close()
	start, size := binary.LittleEndian.Uint32(mbr[470:]), binary.LittleEndian.Uint32(mbr[474:])
	part := filepath.Join(t.TempDir(), "data.ext4")
	if out, err := exec.Command("dd", "if="+disk, "of="+part, "bs=512", fmt.Sprintf("skip=%d", start), fmt.Sprintf("count=%d", size), "conv=sparse", "status=none").CombinedOutput(); err != nil {
		t.Fatalf("dd: %v %s", err, out)
	}
	if out, err := exec.Command("e2fsck", "-fn", part).CombinedOutput(); err != nil {
		t.Errorf("%s, the data partition's ext4 is not clean: %v\n%s", when, err, out)
	}
}
