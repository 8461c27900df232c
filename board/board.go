// Package board is what bonesync knows about each board it runs on, kept as
// data: one board.json per board in this directory, embedded in the binary.
// The image builder reads it to choose boot files and kernel modules and to
// check drivers; PID 1 reads it to find its console, LEDs and budget.
package board

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
)

//go:embed */board.json
var files embed.FS

// Board describes one board.
type Board struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	// Compatible lists device-tree compatible strings that identify the
	// board at run time (/proc/device-tree/compatible).
	Compatible []string `json:"compatible"`
	// DTB is the device tree the board boots with, a file of the kernel
	// package; empty if the firmware supplies its own.
	DTB string `json:"dtb,omitempty"`
	// Console is the serial console device and its speed.
	Console string `json:"console"`
	Baud    int    `json:"baud"`
	// BootFiles are copied to the FAT boot partition, in this order (the
	// AM335x boot ROM wants MLO first).
	BootFiles []BootFile `json:"boot_files,omitempty"`
	// UBoot is the U-Boot that boots the card, for the boot-loader check:
	// a path inside the pinned packages, or an absolute path on the
	// machine that runs QEMU.
	UBoot string `json:"u_boot,omitempty"`
	// Devices are what bonesync needs on this board; the image builder
	// proves each has a driver.
	Devices []Device `json:"devices"`
	// Modules are always put in the initramfs and loaded at boot, in this
	// order (file systems, PHY drivers probed over MDIO rather than from the
	// device tree). crc32c_generic comes first: ext4 with metadata checksums
	// needs it, and modules.dep does not say so (only a softdep does).
	Modules []string `json:"modules"`
	// LEDs maps a state (booting, benchmarking, serving, error) to a
	// /sys/class/leds name.
	LEDs map[string]string `json:"leds,omitempty"`
	// NoTimeServers keeps the board from asking the config's time servers
	// (QEMU: its user network reaches the build machine's network, and a
	// test sends nothing outside).
	NoTimeServers bool `json:"no_time_servers,omitempty"`
	// USBDevice is the board's USB device port, where PID 1 sets up its
	// gadget (network, console, drive); nil: the board has none.
	USBDevice *USBDevice `json:"usb_device,omitempty"`
	// QuickBenchmark benchmarks on the quick budget (provision.QuickBudget)
	// in place of the config's (emulators, where crypto runs 20-80x
	// slower).
	QuickBenchmark bool `json:"quick_benchmark,omitempty"`
	// EMMC is the board's built-in flash, which `emmc flash` copies the
	// system to; nil if it has none.
	EMMC *EMMC `json:"emmc,omitempty"`
}

// EMMC is how the running kernel names the board's eMMC.
type EMMC struct {
	// Device is its whole-disk block device: mmcblk1 on the BeagleBone
	// Black, whose device tree's /aliases number the MMC hosts.
	Device string `json:"device"`
	// Host, when set, is part of the disk's sysfs path that only the
	// eMMC's controller has (its bus address: 481d8000.mmc, a PCI slot):
	// the disk is found by it, whatever its name, and a disk named
	// Device elsewhere is not taken for it.
	Host string `json:"host,omitempty"`
	What string `json:"what"`
}

// USBDevice is a USB device (peripheral) port and the gadget PID 1 makes
// on it.
type USBDevice struct {
	// What says which port it is, for people.
	What string `json:"what"`
	// UDC is the port's USB device controller as /sys/class/udc names it;
	// "" takes the first there is (QEMU's virt machine has none unless a
	// test loads dummy_hcd).
	UDC string `json:"udc,omitempty"`
	// Product is the name a computer shows for the gadget.
	Product string `json:"product"`
	// Modules are the gadget's functions' drivers, loaded when the gadget
	// is made (put in the initramfs with the board's modules).
	Modules []string `json:"modules"`
}

// BootFile is a file taken from a Debian package onto the boot partition.
type BootFile struct {
	Package string `json:"package"` // e.g. u-boot-omap
	From    string `json:"from"`    // path inside the package
	To      string `json:"to"`      // path on the FAT partition
}

// Device is one piece of hardware bonesync needs, matched to its driver by
// the device tree's compatible strings, or named as a module.
type Device struct {
	What       string   `json:"what"`
	Compatible []string `json:"compatible,omitempty"`
	// Module names the driver when the device is not matched through the
	// device tree (an Ethernet PHY found over MDIO, a PCI device).
	Module string `json:"module,omitempty"`
	// Builtin names a driver built into the kernel that carries no alias
	// for its compatible strings (the AM335x UART's omap_serial).
	Builtin string `json:"builtin,omitempty"`
}

// Load returns the named board.
func Load(name string) (*Board, error) {
	b, err := files.ReadFile(path.Join(name, "board.json"))
	if err != nil {
		return nil, fmt.Errorf("no board %q (have %v)", name, Names())
	}
	// A misspelt field is an error, not a setting silently left out.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var bd Board
	if err := dec.Decode(&bd); err != nil {
		return nil, fmt.Errorf("board %s: %w", name, err)
	}
	return &bd, nil
}

// Names lists the boards.
func Names() []string {
	var names []string
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "board.json" {
			names = append(names, path.Dir(p))
		}
		return nil
	})
	sort.Strings(names)
	return names
}

// All returns every board.
func All() ([]*Board, error) {
	var out []*Board
	for _, n := range Names() {
		b, err := Load(n)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Match returns the board whose compatible strings meet the running
// machine's, or nil.
func Match(compatible []string) *Board {
	all, _ := All()
	for _, b := range all {
		for _, c := range b.Compatible {
			if slices.Contains(compatible, c) {
				return b
			}
		}
	}
	return nil
}
