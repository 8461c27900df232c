package boot

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/partition"
	"github.com/bonesync/bonesync/appliance/update"
)

// The labels the image builder gives the card's partitions.
const (
	DataLabel = "bonesync-data"
	BootLabel = "BONESYNC"
)

// Disk is the card bonesync booted from.
type Disk struct {
	Name      string // e.g. mmcblk0, vda
	BootPart  string // device of partition 1 (FAT)
	DataPart  string // device of partition 2 (ext4)
	Grown     bool   // this boot grew the data partition
	SizeBytes int64
}

// mountCard finds the disk U-Boot booted from (by its boot partition's
// PARTUUID, or the data partition's label), mounts the boot
// partition read-only and the data partition read-write, growing the data
// partition and its file system to the end of the card if they do not reach
// it (the first boot after flashing; or finishing a grow a power cut
// interrupted).
func mountCard(_ context.Context, s *System) error {
	boot := bootPartUUID()
	var d *Disk
	deadline := time.Now().Add(20 * time.Second) // SD cards take a moment
	for d == nil && time.Now().Before(deadline) {
		d = findCard(boot)
		if d == nil {
			time.Sleep(250 * time.Millisecond)
		}
	}
	if d == nil && boot != "" {
		s.Log.Warn("no disk has the boot partition U-Boot booted from: looking for the data partition's label", "partuuid", boot)
		d = findCard("")
	}
	if d == nil {
		return fmt.Errorf("no partition labelled %s: is this a bonesync card?", DataLabel)
	}
	if boot != "" {
		s.Log.Info("booted from", "disk", d.Name, "partuuid", boot)
	}
	s.disk = d
	if err := unix.Mount(d.BootPart, BootMount, "vfat", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "iocharset=iso8859-1,codepage=437"); err != nil {
		s.Log.Error("cannot mount the boot partition: going on with the default config", "part", d.BootPart, "on", BootMount, "err", err)
	} else {
		s.loadConfig()
	}
	grew, err := growPartition(d)
	if err != nil {
		s.Log.Error("cannot grow the data partition", "err", err)
	}
	if err := unix.Mount(d.DataPart, PermMount, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOATIME, "errors=remount-ro"); err != nil {
		return fmt.Errorf("mount %s on %s: %w", d.DataPart, PermMount, err)
	}
	if err := growFS(d, s); err != nil {
		s.Log.Error("cannot grow the data file system", "err", err)
	}
	d.Grown = grew
	var st unix.Statfs_t
	if unix.Statfs(PermMount, &st) == nil {
		s.Log.Info("data partition mounted", "part", d.DataPart, "on", PermMount, "free_gib", fmt.Sprintf("%.1f", float64(st.Bavail*uint64(st.Bsize))/(1<<30)))
	}
	return nil
}

// bootPartUUID is the boot script's bonesync.boot=, "" if it passed none.
func bootPartUUID() string {
	b, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return ""
	}
	return update.ParseCmdline(string(b)).Boot
}

func (s *System) loadConfig() {
	c, probs := configLoad(ConfigFile)
	for _, p := range probs {
		s.Log.Warn("config problem", "at", fmt.Sprintf("%s:%d", p.File, p.Line), "problem", p.Msg)
	}
	s.Config = c
	s.Hostname = c.Hostname
}

// findCard returns the disk bonesync booted from, or nil: the one whose
// boot partition has the PARTUUID the boot script passed (bonesync.boot=),
// else, from a boot script before it, the disk whose second partition is
// the bonesync data partition (a card and an eMMC both holding bonesync
// are then told apart by nothing: the first found).
func findCard(boot string) *Disk {
	if boot != "" {
		return findByPartUUID(boot)
	}
	entries, _ := os.ReadDir("/sys/class/block")
	for _, e := range entries {
		name := e.Name()
		if _, err := os.Stat(filepath.Join("/sys/class/block", name, "partition")); err == nil {
			continue // a partition, not a disk
		}
		if fs, _ := datadisk.Probe("/dev/" + partition.Name(name, 2)); fs.Label == DataLabel {
			return newDisk(name, 1)
		}
	}
	return nil
}

// findByPartUUID returns the disk whose MBR has the signature of the
// PARTUUID boot, its partition the boot partition, or nil.
func findByPartUUID(boot string) *Disk {
	sig, n, err := partition.ParsePartUUID(boot)
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir("/sys/class/block")
	for _, e := range entries {
		name := e.Name()
		if _, err := os.Stat(filepath.Join("/sys/class/block", name, "partition")); err == nil {
			continue
		}
		if got, ok := diskSignature("/dev/" + name); ok && got == sig {
			return newDisk(name, n)
		}
	}
	return nil
}

// diskSignature reads the MBR's disk signature of the disk at path.
func diskSignature(path string) (uint32, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b := make([]byte, 512)
	if _, err := f.ReadAt(b, 0); err != nil {
		return 0, false
	}
	return partition.Signature(b)
}

func newDisk(name string, bootPart int) *Disk {
	size, _ := sysfsInt(filepath.Join("/sys/class/block", name, "size"))
	return &Disk{Name: name, BootPart: "/dev/" + partition.Name(name, bootPart), DataPart: "/dev/" + partition.Name(name, 2), SizeBytes: size * 512}
}

func sysfsInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// ext4 superblock fields the grow reads (datadisk reads the superblock).
const (
	sbBlocksLo    = 4  // uint32
	sbLogBlock    = 24 // uint32: block size = 1024 << n
	sbBlocksHi    = 0x150
	sbFeatureIcpt = 0x60 // incompat features; 0x80 = 64bit
)

// growPartition extends partition 2 in the MBR to the end of the card
// (aligned to 1 MiB) and tells the kernel. It reports whether it grew.
func growPartition(d *Disk) (bool, error) {
	sys := filepath.Join("/sys/class/block", filepath.Base(d.DataPart))
	start, err := sysfsInt(filepath.Join(sys, "start"))
	if err != nil {
		return false, err
	}
	size, err := sysfsInt(filepath.Join(sys, "size"))
	if err != nil {
		return false, err
	}
	diskSectors := d.SizeBytes / 512
	newSize := (diskSectors-start)/2048*2048 - 0
	if newSize <= size+2048 { // already fills the card (within 1 MiB)
		return false, nil
	}
	f, err := os.OpenFile("/dev/"+d.Name, os.O_RDWR|unix.O_SYNC, 0)
	if err != nil {
		return false, err
	}
	defer f.Close() // dropped: O_SYNC: each write is on the card when it returns
	mbr := make([]byte, 512)
	if _, err := f.ReadAt(mbr, 0); err != nil {
		return false, err
	}
	if mbr[510] != 0x55 || mbr[511] != 0xAA {
		return false, errors.New("no MBR on the card")
	}
	if got := partition.Entry(mbr, 2).Start / partition.SectorSize; got != start {
		return false, fmt.Errorf("MBR partition 2 starts at %d, the kernel says %d", got, start)
	}
	partition.SetSize(mbr, 2, newSize*partition.SectorSize)
	if _, err := f.WriteAt(mbr, 0); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	// Tell the kernel the partition is larger, without a re-read of the
	// whole table (which fails while partition 1 is mounted).
	if err := partition.Resize(f, 2, partition.Part{Start: start * 512, Size: newSize * 512}); err != nil {
		return false, fmt.Errorf("BLKPG resize: %w", err)
	}
	return true, nil
}

// ext4ResizeFS is EXT4_IOC_RESIZE_FS, _IOW('f', 16, __u64).
const ext4ResizeFS = 0x40086610

// growFS grows the mounted ext4 file system to fill its partition (online).
func growFS(d *Disk, s *System) error {
	sb, err := datadisk.ReadSuperblock(d.DataPart)
	if err != nil {
		return err
	}
	blockSize := int64(1024) << binary.LittleEndian.Uint32(sb[sbLogBlock:])
	blocks := int64(binary.LittleEndian.Uint32(sb[sbBlocksLo:]))
	if binary.LittleEndian.Uint32(sb[sbFeatureIcpt:])&0x80 != 0 {
		blocks |= int64(binary.LittleEndian.Uint32(sb[sbBlocksHi:])) << 32
	}
	partSectors, err := sysfsInt(filepath.Join("/sys/class/block", filepath.Base(d.DataPart), "size"))
	if err != nil {
		return err
	}
	want := partSectors * 512 / blockSize
	if want <= blocks {
		return nil
	}
	s.Log.Info("growing the data partition to fill the card", "part", d.DataPart, "from_mib", blocks*blockSize>>20, "to_mib", want*blockSize>>20)
	dir, err := os.Open(PermMount)
	if err != nil {
		return err
	}
	defer dir.Close()
	n := uint64(want)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, dir.Fd(), ext4ResizeFS, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return fmt.Errorf("EXT4_IOC_RESIZE_FS: %w", errno)
	}
	return nil
}
