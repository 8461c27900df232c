// Package health watches the disks under the box's data: how much is
// written to them, day by day (an SD card wears out with writes), and the
// errors the kernel reports for them, for the status page, the console's
// status and the admin's notices.
//
// What it reads, all of it the kernel's:
//   - /sys/block/DISK/stat: the disk's write counters since boot;
//   - /sys/fs/ext4/PART/errors_count, first_error_time, last_error_time: the
//     errors ext4 met on the partition, kept in its superblock across boots;
//   - /dev/kmsg: the kernel's log of this boot, for the block layer's and
//     the MMC driver's I/O errors naming the disk (best effort: reading it
//     needs root or kernel.dmesg_restrict = 0);
//   - /sys/block/DISK/device/name, date, life_time, pre_eol_info: what the
//     card says of itself (an eMMC reports its wear, an SD card does not).
//
// The counters start again at each boot; Log adds them up across boots in
// the state directory and keeps one figure a day.
package health

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Disk is the block device under a path: the partition and its whole disk.
type Disk struct {
	Part  string // e.g. mmcblk0p2, sda1; equal to Whole for an unpartitioned disk
	Whole string // e.g. mmcblk0, sda
	sys   string // the sysfs root: "/sys", or a test's
}

// DiskOf finds the block device the file system holding path is on. A path
// on no block device (tmpfs, overlay, a network file system) is an error.
func DiskOf(path string) (Disk, error) {
	return diskOf(path, "/sys")
}

func diskOf(path, sys string) (Disk, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Disk{}, fmt.Errorf("the disk under %s: %w", path, err)
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	real, err := filepath.EvalSymlinks(filepath.Join(sys, "dev/block", dev))
	if err != nil {
		return Disk{}, fmt.Errorf("the disk under %s: device %s is not a block device (%v)", path, dev, err)
	}
	d := Disk{Part: filepath.Base(real), Whole: filepath.Base(real), sys: sys}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		d.Whole = filepath.Base(filepath.Dir(real))
	}
	return d, nil
}

// NamedDisk is a disk known by its names (the card PID 1 mounted).
func NamedDisk(part, whole string) Disk {
	return Disk{Part: part, Whole: whole, sys: "/sys"}
}

// Counters are a disk's I/O counters since boot.
type Counters struct {
	Reads, ReadSectors     int64
	Writes, WrittenSectors int64
}

// Counters reads the whole disk's counters (/sys/block/DISK/stat, sectors
// of 512 bytes whatever the disk's own).
func (d Disk) Counters() (Counters, error) {
	p := filepath.Join(d.sys, "block", d.Whole, "stat")
	b, err := os.ReadFile(p)
	if err != nil {
		return Counters{}, err
	}
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return Counters{}, fmt.Errorf("%s: %q is not a disk's counters", p, b)
	}
	var c Counters
	for i, v := range []*int64{&c.Reads, nil, &c.ReadSectors, nil, &c.Writes, nil, &c.WrittenSectors} {
		if v == nil {
			continue
		}
		if *v, err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return Counters{}, fmt.Errorf("%s: field %d: %w", p, i+1, err)
		}
	}
	return c, nil
}

// FSErrors are the errors ext4 recorded on the partition.
type FSErrors struct {
	Count       int       `json:"count"`
	First, Last time.Time `json:",omitzero"`
}

// FSErrors reads them; a partition that is not a mounted ext4 has none to
// report (ok false).
func (d Disk) FSErrors() (e FSErrors, ok bool) {
	dir := filepath.Join(d.sys, "fs/ext4", d.Part)
	b, err := os.ReadFile(filepath.Join(dir, "errors_count"))
	if err != nil {
		return FSErrors{}, false
	}
	e.Count, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	e.First = unixFile(filepath.Join(dir, "first_error_time"))
	e.Last = unixFile(filepath.Join(dir, "last_error_time"))
	return e, true
}

func unixFile(p string) time.Time {
	b, err := os.ReadFile(p)
	if err != nil {
		return time.Time{}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// Identity is what the card or disk says of itself.
type Identity struct {
	Name string `json:"name,omitempty"` // the card's product name, or the disk's model
	Date string `json:"date,omitempty"` // an SD card's or eMMC's manufacturing month
	// Wear is an eMMC's own estimate of its life used (life_time, in 10%
	// steps) and its spare blocks' state (pre_eol_info); SD cards and USB
	// disks have no such report.
	Wear string `json:"wear,omitempty"`
	// WearWarning is set when the eMMC says its spare blocks run low.
	WearWarning bool `json:"wear_warning,omitempty"`
}

// Identity reads the device's own description.
func (d Disk) Identity() Identity {
	dev := filepath.Join(d.sys, "block", d.Whole, "device")
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dev, name))
		return strings.TrimSpace(string(b))
	}
	id := Identity{Name: read("name"), Date: read("date")}
	if id.Name == "" {
		id.Name = strings.TrimSpace(read("vendor") + " " + read("model"))
	}
	if lt := strings.Fields(read("life_time")); len(lt) == 2 {
		a, errA := strconv.ParseUint(lt[0], 0, 8)
		b, errB := strconv.ParseUint(lt[1], 0, 8)
		if errA == nil && errB == nil {
			id.Wear = "life used " + lifeStep(max(a, b))
		}
	}
	switch read("pre_eol_info") {
	case "0x02", "0x2", "2":
		id.Wear, id.WearWarning = strings.TrimPrefix(id.Wear+", ", ", ")+"spare blocks 80% used", true
	case "0x03", "0x3", "3":
		id.Wear, id.WearWarning = strings.TrimPrefix(id.Wear+", ", ", ")+"spare blocks nearly gone: replace it", true
	}
	return id
}

// lifeStep is JEDEC's DEVICE_LIFE_TIME_EST: 1 is 0-10% used ... 10 is
// 90-100%, 11 past its life.
func lifeStep(v uint64) string {
	switch {
	case v == 0:
		return "not reported"
	case v >= 11:
		return "past the maker's estimate"
	default:
		return fmt.Sprintf("%d-%d%%", (v-1)*10, v*10)
	}
}
