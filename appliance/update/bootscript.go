package update

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"time"
)

// The card's boot partition, as the image builder lays it out and the box
// writes it. Every file is made at its capacity so that the box only ever
// overwrites sectors in place.
const (
	StateFile  = "bonesync/boot.env" // BootState
	SlotEnv    = "slot.env"          // SlotInfo, in each slot
	KernelFile = "zImage"
	InitrdFile = "initrd.img"
	DTBDir     = "dtbs" // the board's device tree, named as U-Boot's fdtfile
)

// Capacities of a slot's files: room for the kernel (5.4 MB in Debian
// bookworm's armmp) and the initramfs (6.2 MB) to grow several times over.
const (
	KernelCapacity = 24 << 20
	InitrdCapacity = 64 << 20
	// On the board U-Boot loads the DTB at fdt_addr_r, 512 KiB below the
	// initramfs at ramdisk_addr_r (ti_armv7_common.h).
	DTBCapacity = 512 << 10
)

// SlotDir is a slot's directory on the boot partition: slot-a, slot-b.
func SlotDir(slot string) string { return "slot-" + slot }

// Capacity is the room for a slot file ("zImage", "initrd.img",
// "dtbs/NAME"), 0 for a name a slot does not hold.
func Capacity(name string) int64 {
	switch {
	case name == KernelFile:
		return KernelCapacity
	case name == InitrdFile:
		return InitrdCapacity
	case len(name) > len(DTBDir)+1 && name[:len(DTBDir)+1] == DTBDir+"/" && validFile(name[len(DTBDir)+1:]):
		return DTBCapacity
	}
	return 0
}

// BootScriptText is the boot script, in U-Boot's shell. U-Boot's distro
// boot (both the board's am335x_evm build and QEMU's qemu_arm) finds
// boot.scr on the boot partition and runs it with devtype, devnum and
// distro_bootpart set. It boots the default slot, or an armed trial slot
// once: it clears the trial in boot.env (fatwrite, in place: the file keeps
// its size and clusters) before booting it, so a trial that never becomes
// healthy is followed by the default slot again, with no one at the
// console. A slot whose slot.env or files do not load is skipped for the
// other. It tells the kernel which disk it booted from: bonesync.boot= the
// boot partition's PARTUUID (an MBR's is the disk signature and the
// partition number, SSSSSSSS-PP), which PID 1 mounts the partitions of, so
// that a card and an eMMC both holding bonesync are told apart. A card
// whose system was moved to the eMMC (bonesync_moved=1 in its boot.env,
// written by `emmc flash` once the eMMC is verified) boots nothing: the
// script ends and distro boot goes on to the next device (the board's
// boot_targets: mmc0, the card, then mmc1, the eMMC). The commands it
// uses are the ones image/bootloader.go proves the board's U-Boot has.
const BootScriptText = `# bonesync: choose a system slot (appliance/update)
setenv bonesync_slot
setenv bonesync_trial
setenv bonesync_tried
setenv bonesync_now
setenv bonesync_moved
setenv bonesync_disk
if load ${devtype} ${devnum}:${distro_bootpart} ${kernel_addr_r} bonesync/boot.env; then
	env import -t ${kernel_addr_r} ${filesize} bonesync_slot bonesync_trial bonesync_tried bonesync_moved
fi
part uuid ${devtype} ${devnum}:${distro_bootpart} bonesync_disk
if test "${bonesync_moved}" = 1; then
	echo "bonesync: the system on this card was moved to the eMMC (bonesync_moved=1 in bonesync/boot.env): on to the next boot device"
else
	if test "${bonesync_slot}" != b; then
		setenv bonesync_slot a
	fi
	setenv bonesync_first ${bonesync_slot}
	if test "${bonesync_trial}" = a || test "${bonesync_trial}" = b; then
		setenv bonesync_tried ${bonesync_trial}
		setenv bonesync_trial
		env export -t -s 0x200 ${kernel_addr_r} bonesync_slot bonesync_tried
		if fatwrite ${devtype} ${devnum}:${distro_bootpart} ${kernel_addr_r} bonesync/boot.env 0x200; then
			echo "bonesync: slot ${bonesync_tried} on trial, once"
			setenv bonesync_first ${bonesync_tried}
			setenv bonesync_now ${bonesync_tried}
		else
			echo "bonesync: cannot clear the trial in boot.env; not trying slot ${bonesync_tried}"
		fi
	fi
	if test "${bonesync_first}" = a; then
		setenv bonesync_second b
	else
		setenv bonesync_second a
	fi
	for s in ${bonesync_first} ${bonesync_second}; do
		setenv bonesync_version
		setenv bonesync_kernel
		setenv bonesync_initrd
		setenv bonesync_dtb
		if load ${devtype} ${devnum}:${distro_bootpart} ${kernel_addr_r} slot-${s}/slot.env; then
			env import -t ${kernel_addr_r} ${filesize} bonesync_version bonesync_kernel bonesync_initrd bonesync_dtb
		fi
		if test -n "${bonesync_kernel}" && test -n "${bonesync_initrd}"; then
			echo "bonesync: booting slot ${s}, version ${bonesync_version}"
			if load ${devtype} ${devnum}:${distro_bootpart} ${ramdisk_addr_r} slot-${s}/initrd.img ${bonesync_initrd} && load ${devtype} ${devnum}:${distro_bootpart} ${kernel_addr_r} slot-${s}/zImage ${bonesync_kernel}; then
				setenv bootargs "panic=10 bonesync.slot=${s}"
				if test -n "${bonesync_disk}"; then
					setenv bootargs "${bootargs} bonesync.boot=${bonesync_disk}"
				fi
				if test "${s}" = "${bonesync_now}"; then
					setenv bootargs "${bootargs} bonesync.trial=1"
				fi
				setenv bonesync_fdt ${fdt_addr}
				if test -n "${fdtfile}" && test -n "${fdt_addr_r}" && test -n "${bonesync_dtb}" && load ${devtype} ${devnum}:${distro_bootpart} ${fdt_addr_r} slot-${s}/dtbs/${fdtfile} ${bonesync_dtb}; then
					setenv bonesync_fdt ${fdt_addr_r}
				fi
				bootz ${kernel_addr_r} ${ramdisk_addr_r}:${bonesync_initrd} ${bonesync_fdt}
			fi
		fi
		echo "bonesync: slot ${s} does not boot"
	done
fi
`

// BootScript is BootScriptText as boot.scr: a legacy U-Boot image of type
// script (what `mkimage -A arm -T script -C none` makes), dated t.
func BootScript(t time.Time) []byte {
	text := []byte(BootScriptText)
	// A script image's data: the lengths of its parts (one), a zero, the
	// script.
	data := binary.BigEndian.AppendUint32(nil, uint32(len(text)))
	data = binary.BigEndian.AppendUint32(data, 0)
	data = append(data, text...)
	h := make([]byte, 64)
	binary.BigEndian.PutUint32(h[0:], 0x27051956) // magic
	binary.BigEndian.PutUint32(h[8:], uint32(t.Unix()))
	binary.BigEndian.PutUint32(h[12:], uint32(len(data)))
	binary.BigEndian.PutUint32(h[24:], crc32.ChecksumIEEE(data))
	h[28], h[29], h[30], h[31] = 5, 2, 6, 0 // OS Linux, arch ARM, type script, no compression
	copy(h[32:], "bonesync boot script")
	binary.BigEndian.PutUint32(h[4:], crc32.ChecksumIEEE(h))
	return append(h, data...)
}

// validFile is a plain file name: no path, not . or .., not hidden.
func validFile(n string) bool {
	return n != "" && n[0] != '.' && !bytes.ContainsAny([]byte(n), "/\\\x00")
}
