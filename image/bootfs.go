package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/firstlogin"
	"github.com/bonesync/bonesync/appliance/update"
)

// Partition sizes, in 512-byte sectors. Both are multiples of 32 sectors
// and 1 MiB aligned: dosfstools 4.2 otherwise rounds the FAT's total sectors
// down and the AM335x boot ROM then refuses the card.
const (
	partStart   = 2048      // 1 MiB: room for the MBR and alignment
	bootSectors = 256 << 11 // 256 MiB FAT32: two system slots
	dataSectors = 64 << 11  // 64 MiB ext4, grown to the card at first boot
)

// The card boots through bonesync's boot script (boot.scr, from package
// update), which U-Boot's distro boot runs on the board and in QEMU alike.
// It picks one of two system slots, slot-a and slot-b, each a kernel, the
// initramfs with bonesync and the board's device tree; both hold this
// build. Every file the box may write later (the slots, their slot.env,
// bonesync/boot.env) is made here at its full size, so the box overwrites
// sectors in place and never changes the FAT's tables or directories.
// The kernel takes its console from the device tree's stdout-path (ttyO0
// on the board, ttyAMA0 on virt); QEMU's U-Boot has no fdtfile and passes
// QEMU's own tree. The kernel's messages stay on: when a board misbehaves,
// the serial console is all there is.

// slotFiles are the files of one slot: their names in the slot (as the
// bundle names them) and where this build's copies are.
func slotFiles(o *options, p *packages, initrd string) map[string]string {
	files := map[string]string{update.KernelFile: p.kernel, update.InitrdFile: initrd}
	if o.board.DTB != "" {
		files[update.DTBDir+"/"+o.board.DTB] = filepath.Join(p.dtbDir, o.board.DTB)
	}
	return files
}

// writeBootFS makes the FAT32 boot partition with dosfstools and mtools (no
// root, no loop device), files copied in order with MLO first, the config
// file with every setting commented. Times come from SOURCE_DATE_EPOCH.
func writeBootFS(o *options, p *packages, initrd, out string) error {
	stage := filepath.Join(o.work, "bootfs")
	type file struct{ src, dst string }
	var files []file
	for _, bf := range o.board.BootFiles {
		files = append(files, file{filepath.Join(p.root, bf.From), bf.To})
	}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return err
	}
	var stageErr error // the first file that could not be staged
	staged := func(name string, b []byte) string {
		path := filepath.Join(stage, strings.ReplaceAll(name, "/", "_"))
		if err := os.WriteFile(path, b, 0o644); err != nil && stageErr == nil {
			stageErr = err
		}
		return path
	}
	files = append(files,
		file{staged("boot.scr", update.BootScript(o.epoch)), "boot.scr"},
		file{staged("bonesync.conf", []byte(config.Example())), "bonesync.conf"},
		file{staged("README.txt", []byte(bootReadme)), "README.txt"},
		// At its full size: the box rewrites it in place, never making a
		// file (which writes the FAT's tables: a cut then leaves it dirty).
		file{staged(firstlogin.NoteFile, firstlogin.Placeholder()), firstlogin.NoteFile},
	)
	state, err := update.NewBootState("a")
	if err != nil {
		return err
	}
	files = append(files, file{staged("boot.env", state), update.StateFile})
	// Both slots hold this build, each file padded to its capacity.
	sf := slotFiles(o, p, initrd)
	info := update.SlotInfo{Version: o.version}
	names := make([]string, 0, len(sf))
	for name := range sf {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, slot := range []string{"a", "b"} {
		for _, name := range names {
			padded := filepath.Join(stage, slot+"-"+strings.ReplaceAll(name, "/", "_"))
			size, err := padTo(sf[name], padded, update.Capacity(name))
			if err != nil {
				return err
			}
			switch name {
			case update.KernelFile:
				info.Kernel = size
			case update.InitrdFile:
				info.Initrd = size
			default:
				info.DTB = size
			}
			files = append(files, file{padded, update.SlotDir(slot) + "/" + name})
		}
		env, err := info.Bytes()
		if err != nil {
			return err
		}
		files = append(files, file{staged(slot+"-slot.env", env), update.SlotDir(slot) + "/" + update.SlotEnv})
	}
	if stageErr != nil {
		return fmt.Errorf("stage the boot files: %w", stageErr)
	}
	epoch := strconv.FormatInt(o.epoch.Unix(), 10)
	env := []string{"SOURCE_DATE_EPOCH=" + epoch, "MTOOLS_SKIP_CHECK=1", "MTOOLS_NO_VFAT=0"}
	volID := fmt.Sprintf("%08x", uint32(o.epoch.Unix())^0xb0e5)
	if _, err := sh(env, "mkfs.vfat", "-F", "32", "-n", "BONESYNC", "-i", volID, "--invariant",
		"-g", "64/32", "-h", strconv.Itoa(partStart), "-C", out, strconv.Itoa(bootSectors/2)); err != nil {
		return err
	}
	made := map[string]bool{}
	for _, f := range files {
		if err := os.Chtimes(f.src, o.epoch, o.epoch); err != nil {
			return err
		}
		dir := path.Dir(f.dst)
		for _, d := range parents(dir) {
			if made[d] {
				continue
			}
			if _, err := sh(env, "mmd", "-i", out, "::/"+d); err != nil {
				return err
			}
			made[d] = true
		}
		if _, err := sh(env, "mcopy", "-m", "-i", out, f.src, "::/"+f.dst); err != nil {
			return err
		}
	}
	return nil
}

// parents lists dir and the directories above it, outermost first:
// "slot-a/dtbs" gives slot-a, slot-a/dtbs. "." gives none.
func parents(dir string) []string {
	if dir == "." || dir == "" {
		return nil
	}
	return append(parents(path.Dir(dir)), dir)
}

// padTo copies src to dst, zero-filled to size bytes, and returns src's
// size; it fails if src is larger.
func padTo(src, dst string, size int64) (int64, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return 0, err
	}
	if int64(len(b)) > size {
		return 0, fmt.Errorf("%s is %d bytes; a slot holds %d", src, len(b), size)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return 0, err
	}
	return int64(len(b)), os.Truncate(dst, size)
}

const bootReadme = `bonesync boot partition

bonesync.conf   the appliance's settings: edit it here before the first
                boot, from any computer. Every setting is listed, commented
                out, at its default. A mistake is reported on the serial
                console with its line number and the default is used.
FIRST-LOGIN.txt admin's password after the first start, unless
                admin_password was set in bonesync.conf; emptied once it
                is changed
MLO, u-boot.img the boot loader (Debian's u-boot-omap)
boot.scr        the boot script: boots slot a or b, an update once on trial
slot-a, slot-b  two systems: the kernel and device tree (Debian's
                linux-image-armmp), initrd.img (bonesync and the drivers it
                needs). An update goes into the slot not running; the
                files keep their size. Do not edit them.
bonesync/       boot.env: which slot boots (written by the box and U-Boot)
`
