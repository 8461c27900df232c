package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/bonesync/bonesync/appliance/config"
)

// Partition sizes, in 512-byte sectors. Both are multiples of 32 sectors
// and 1 MiB aligned: dosfstools 4.2 otherwise rounds the FAT's total sectors
// down and the AM335x boot ROM then refuses the card.
const (
	partStart   = 2048      // 1 MiB: room for the MBR and alignment
	bootSectors = 128 << 11 // 128 MiB FAT32
	dataSectors = 64 << 11  // 64 MiB ext4, grown to the card at first boot
)

// extlinuxConf boots the same way on the board and in QEMU: the kernel takes
// its console from the device tree's stdout-path (ttyO0 on the board, ttyAMA0
// on virt); the board's U-Boot picks dtbs/am335x-boneblack.dtb, QEMU's
// U-Boot ignores fdtdir and passes QEMU's own tree. The kernel's messages stay
// on: when a board misbehaves, the serial console is all there is.
const extlinuxConf = `default bonesync
label bonesync
    kernel /zImage
    initrd /initrd.img
    fdtdir /dtbs
    append panic=10
`

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
	extlinux := filepath.Join(stage, "extlinux.conf")
	conf := filepath.Join(stage, "bonesync.conf")
	readme := filepath.Join(stage, "README.txt")
	os.MkdirAll(stage, 0o755)
	os.WriteFile(extlinux, []byte(extlinuxConf), 0o644)
	os.WriteFile(conf, []byte(config.Example()), 0o644)
	os.WriteFile(readme, []byte(bootReadme), 0o644)
	files = append(files,
		file{extlinux, "extlinux/extlinux.conf"},
		file{p.kernel, "zImage"},
		file{initrd, "initrd.img"},
		file{conf, "bonesync.conf"},
		file{readme, "README.txt"},
	)
	if o.board.DTB != "" {
		files = append(files, file{filepath.Join(p.dtbDir, o.board.DTB), "dtbs/" + o.board.DTB})
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
		if dir := path.Dir(f.dst); dir != "." && !made[dir] {
			if _, err := sh(env, "mmd", "-i", out, "::/"+dir); err != nil {
				return err
			}
			made[dir] = true
		}
		if _, err := sh(env, "mcopy", "-m", "-i", out, f.src, "::/"+f.dst); err != nil {
			return err
		}
	}
	return nil
}

const bootReadme = `bonesync boot partition

bonesync.conf   the appliance's settings: edit it here before the first
                boot, from any computer. Every setting is listed, commented
                out, at its default. A mistake is reported on the serial
                console with its line number and the default is used.
MLO, u-boot.img the boot loader (Debian's u-boot-omap)
zImage, dtbs/   the kernel and device tree (Debian's linux-image-armmp)
initrd.img      bonesync itself and the drivers it needs
`
