package datadisk

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Label is the ext4 label of a disk that `data_disk = auto` takes, and
// that `disk adopt` gives the disk it formats.
const Label = "BONESYNC"

// Want is the config's data_disk: Card (the default), Auto, a label or a
// file system UUID.
const (
	Card = "card"
	Auto = "auto"
)

// FS is an ext4 file system's identity, from its superblock.
type FS struct {
	Label string
	UUID  string // as blkid writes it: 8-4-4-4-12 hex
}

// Superblock fields at byte 1024 of an ext4 file system.
const (
	sbOffset     = 1024
	sbMagic      = 0x38 // uint16, 0xEF53
	sbUUID       = 0x68 // [16]byte
	sbVolumeName = 0x78 // [16]byte
)

// ReadSuperblock is the 1024-byte ext4 superblock of the device or file
// at path; an error if it holds no ext4 (or ext2/3) file system.
func ReadSuperblock(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sb := make([]byte, 1024)
	if _, err := f.ReadAt(sb, sbOffset); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if binary.LittleEndian.Uint16(sb[sbMagic:]) != 0xEF53 {
		return nil, fmt.Errorf("%s holds no ext4 file system", path)
	}
	return sb, nil
}

// Probe reads the identity of the ext4 file system on path.
func Probe(path string) (FS, error) {
	sb, err := ReadSuperblock(path)
	if err != nil {
		return FS{}, err
	}
	return FS{Label: strings.TrimRight(string(sb[sbVolumeName:sbVolumeName+16]), "\x00"), UUID: FormatUUID(sb[sbUUID : sbUUID+16])}, nil
}

// FormatUUID writes 16 bytes as blkid does.
func FormatUUID(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Matches says whether fs is the disk want names: Auto takes the label
// Label; anything else is a label or a UUID (any case).
func (fs FS) Matches(want string) bool {
	switch want {
	case "", Card:
		return false
	case Auto:
		return fs.Label == Label
	}
	return fs.Label == want || strings.EqualFold(fs.UUID, want)
}

// Device is a block device the kernel lists: a disk or a partition.
type Device struct {
	Name   string // sda, sda1
	Disk   string // the whole disk it is on: sda
	Size   int64  // bytes
	Model  string // the disk's, as the USB bridge reports it
	Serial string // the USB device's serial number, if it has one
	FS     *FS    // its ext4 file system, if any
}

// Path is the device's node.
func (d Device) Path() string { return "/dev/" + d.Name }

// String describes the device for the console.
func (d Device) String() string {
	s := fmt.Sprintf("%s  %.1f GB", d.Name, float64(d.Size)/1e9)
	if d.Model != "" {
		s += "  " + d.Model
	}
	if d.Serial != "" {
		s += "  serial " + d.Serial
	}
	if d.FS != nil {
		s += fmt.Sprintf("  ext4 %q %s", d.FS.Label, d.FS.UUID)
	}
	return s
}

// Devices lists the disks (and their partitions) under sys (/sys/class/block)
// other than those in skip (the disk the box booted from, the board's
// eMMC), loop devices and RAM disks.
func Devices(sys string, skip ...string) []Device {
	entries, _ := os.ReadDir(sys)
	var out []Device
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "loop") || strings.HasPrefix(name, "ram") || strings.HasPrefix(name, "zram") {
			continue
		}
		dir := filepath.Join(sys, name)
		d := Device{Name: name, Disk: name}
		if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
			target, err := filepath.EvalSymlinks(dir)
			if err != nil {
				continue
			}
			d.Disk = filepath.Base(filepath.Dir(target))
		}
		if slices.Contains(skip, d.Disk) {
			continue
		}
		sectors, _ := readInt(filepath.Join(dir, "size"))
		if sectors == 0 {
			continue // an empty card reader
		}
		d.Size = sectors * 512
		disk := filepath.Join(sys, d.Disk)
		d.Model = strings.TrimSpace(readText(filepath.Join(disk, "device", "vendor")) + " " + readText(filepath.Join(disk, "device", "model")))
		d.Serial = usbSerial(disk)
		if fs, err := Probe("/dev/" + name); err == nil {
			d.FS = &fs
		}
		out = append(out, d)
	}
	return out
}

// Find is the device whose file system want names; an error says why none.
func Find(devs []Device, want string) (Device, error) {
	var found []Device
	for _, d := range devs {
		if d.FS != nil && d.FS.Matches(want) {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1 && want == Auto:
		names := make([]string, len(found))
		for i, d := range found {
			names[i] = d.Name + " " + d.FS.UUID
		}
		return Device{}, fmt.Errorf("%d disks are labelled %s (%s): set data_disk to the UUID of the one to use", len(found), Label, strings.Join(names, ", "))
	case len(found) > 1:
		return found[0], nil // one file system seen twice (a disk and its partition): the first
	}
	if want == Auto {
		return Device{}, fmt.Errorf("no disk labelled %s is %w", Label, ErrMissing)
	}
	return Device{}, fmt.Errorf("no disk with the label or UUID %q is %w", want, ErrMissing)
}

// ErrMissing is Find's error when no disk holds the file system.
var ErrMissing = errors.New("plugged in")

// usbSerial walks up from the disk's sysfs node to its USB device and
// reads the serial number the device reports.
func usbSerial(disk string) string {
	p, err := filepath.EvalSymlinks(filepath.Join(disk, "device"))
	if err != nil {
		return ""
	}
	for ; p != "/" && p != "."; p = filepath.Dir(p) {
		if s := readText(filepath.Join(p, "serial")); s != "" {
			if _, err := os.Stat(filepath.Join(p, "idVendor")); err == nil {
				return s
			}
		}
	}
	return ""
}

func readText(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

func readInt(p string) (int64, error) {
	return strconv.ParseInt(readText(p), 10, 64)
}
