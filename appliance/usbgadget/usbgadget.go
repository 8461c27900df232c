// Package usbgadget makes the box a composite USB device through the
// kernel's configfs (Documentation/usb/gadget_configfs.rst): what a
// computer sees when the board's device port is plugged into it. It only
// writes configfs; PID 1 (appliance/boot, gadget_linux.go) decides what to
// offer and runs the network, console and drive behind the functions.
//
// The layout follows the BeagleBoard.org images' (bb-usb-gadgets), which
// owners of the board and its guides already know: one configuration
// holding RNDIS first (for Windows, which binds it without a driver through
// Microsoft OS descriptors), CDC-ECM (for macOS and Linux), CDC-ACM (a
// serial port) and mass storage (a read-only drive); the box at
// 192.168.7.2 on the RNDIS link and 192.168.6.2 on the ECM one.
package usbgadget

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ConfigFS is where configfs is mounted on Linux.
const ConfigFS = "/sys/kernel/config"

// IDs are the Linux Foundation's vendor ID and its "Multifunction
// Composite Gadget" product, as the kernel's own g_multi and the
// BeagleBoard.org images use.
const (
	VendorID  = 0x1d6b
	ProductID = 0x0104
)

// Spec is the gadget to make.
type Spec struct {
	Name         string // the gadget's directory under usb_gadget
	Manufacturer string
	Product      string
	Serial       string // the same on every boot: hosts keep their settings by it
	// Network adds RNDIS and ECM, with these MAC addresses (the box's
	// end, the computer's end) for each.
	Network                 bool
	RNDISDev, RNDISHost     string
	ECMDev, ECMHost         string
	Console                 bool   // CDC-ACM
	Drive                   string // a volume image for the read-only drive; "": none
	DriveVendor, DriveModel string // the drive's SCSI inquiry: 8 and 16 characters at most
}

// Gadget is a gadget made in configfs.
type Gadget struct {
	dir string // ROOT/usb_gadget/NAME
}

// Function instances, by the names configfs gives them.
const (
	fnRNDIS = "rndis.usb0"
	fnECM   = "ecm.usb0"
	fnACM   = "acm.usb0"
	fnDrive = "mass_storage.usb0"
)

// Make makes the gadget under root (ConfigFS) and binds it to the device
// controller udc (a name in /sys/class/udc). A gadget left by an earlier
// run is taken apart first.
func Make(root, udc string, s Spec) (*Gadget, error) {
	g := &Gadget{dir: filepath.Join(root, "usb_gadget", s.Name)}
	if _, err := os.Stat(filepath.Join(root, "usb_gadget")); err != nil {
		return nil, fmt.Errorf("usbgadget: configfs has no usb_gadget (libcomposite not loaded?): %w", err)
	}
	if _, err := os.Stat(g.dir); err == nil {
		if err := g.Remove(); err != nil {
			return nil, err
		}
	}
	w := writer{}
	w.mkdir(g.dir)
	w.write(g.dir, "idVendor", fmt.Sprintf("0x%04x", VendorID))
	w.write(g.dir, "idProduct", fmt.Sprintf("0x%04x", ProductID))
	w.write(g.dir, "bcdDevice", "0x0100")
	w.write(g.dir, "bcdUSB", "0x0200")
	// A composite device whose functions are grouped by interface
	// association descriptors (USB IAD ECN): class 0xEF, 2, 1.
	w.write(g.dir, "bDeviceClass", "0xEF")
	w.write(g.dir, "bDeviceSubClass", "0x02")
	w.write(g.dir, "bDeviceProtocol", "0x01")
	str := filepath.Join(g.dir, "strings", "0x409") // US English
	w.mkdir(str)
	w.write(str, "manufacturer", s.Manufacturer)
	w.write(str, "product", s.Product)
	w.write(str, "serialnumber", s.Serial)
	cfg := filepath.Join(g.dir, "configs", "c.1")
	w.mkdir(filepath.Join(cfg, "strings", "0x409"))
	w.write(filepath.Join(cfg, "strings", "0x409"), "configuration", s.Product)
	w.write(cfg, "MaxPower", "500") // mA: the board can run from the cable
	var fns []string
	if s.Network {
		// Windows 10 and later bind RNDIS with their own driver when the
		// device says so in Microsoft OS descriptors.
		w.mkdir(filepath.Join(g.dir, "os_desc"))
		w.write(filepath.Join(g.dir, "os_desc"), "use", "1")
		w.write(filepath.Join(g.dir, "os_desc"), "b_vendor_code", "0xcd")
		w.write(filepath.Join(g.dir, "os_desc"), "qw_sign", "MSFT100")
		f := filepath.Join(g.dir, "functions", fnRNDIS)
		w.mkdir(f)
		w.write(f, "dev_addr", s.RNDISDev)
		w.write(f, "host_addr", s.RNDISHost)
		w.mkdir(filepath.Join(f, "os_desc", "interface.rndis"))
		w.write(filepath.Join(f, "os_desc", "interface.rndis"), "compatible_id", "RNDIS")
		w.write(filepath.Join(f, "os_desc", "interface.rndis"), "sub_compatible_id", "5162001")
		f = filepath.Join(g.dir, "functions", fnECM)
		w.mkdir(f)
		w.write(f, "dev_addr", s.ECMDev)
		w.write(f, "host_addr", s.ECMHost)
		fns = append(fns, fnRNDIS, fnECM) // RNDIS first: Windows takes the first network function
	}
	if s.Console {
		w.mkdir(filepath.Join(g.dir, "functions", fnACM))
		fns = append(fns, fnACM)
	}
	if s.Drive != "" {
		f := filepath.Join(g.dir, "functions", fnDrive)
		lun := filepath.Join(f, "lun.0")
		w.mkdir(lun)
		// removable before the file, so the file can be changed later;
		// ro before it too (it cannot change while a file is open).
		w.write(lun, "removable", "1")
		w.write(lun, "ro", "1")
		w.write(lun, "cdrom", "0")
		w.write(lun, "nofua", "1")
		w.write(lun, "inquiry_string", inquiry(s.DriveVendor, s.DriveModel))
		w.write(lun, "file", s.Drive)
		fns = append(fns, fnDrive)
	}
	if w.err != nil {
		return g, w.err
	}
	if len(fns) == 0 {
		return g, errors.New("usbgadget: no function to offer")
	}
	for _, f := range fns {
		if err := os.Symlink(filepath.Join(g.dir, "functions", f), filepath.Join(cfg, f)); err != nil {
			return g, fmt.Errorf("usbgadget: link %s into the configuration: %w", f, err)
		}
	}
	if s.Network {
		if err := os.Symlink(cfg, filepath.Join(g.dir, "os_desc", "c.1")); err != nil {
			return g, fmt.Errorf("usbgadget: OS descriptors' configuration: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(g.dir, "UDC"), []byte(udc), 0); err != nil {
		return g, fmt.Errorf("usbgadget: bind to %s: %w", udc, err)
	}
	return g, nil
}

// inquiry is a SCSI INQUIRY's vendor (8 bytes) and product (16) as
// f_mass_storage takes them: one string, the vendor padded.
func inquiry(vendor, model string) string {
	pad := func(s string, n int) string {
		if len(s) > n {
			s = s[:n]
		}
		return s + strings.Repeat(" ", n-len(s))
	}
	return pad(vendor, 8) + pad(model, 16)
}

// Interfaces are the network interfaces the kernel made for the RNDIS and
// ECM functions (usb0, usb1); "" for one that is not there.
func (g *Gadget) Interfaces() (rndis, ecm string) {
	read := func(fn string) string {
		b, err := os.ReadFile(filepath.Join(g.dir, "functions", fn, "ifname"))
		if err != nil {
			return ""
		}
		s := strings.TrimSpace(string(b))
		if s == "(unnamed net_device)" {
			return ""
		}
		return s
	}
	return read(fnRNDIS), read(fnECM)
}

// TTY is the console function's device (/dev/ttyGS0); "" if none.
func (g *Gadget) TTY() string {
	b, err := os.ReadFile(filepath.Join(g.dir, "functions", fnACM, "port_num"))
	if err != nil {
		return ""
	}
	return "/dev/ttyGS" + strings.TrimSpace(string(b))
}

// SetDrive puts another volume image in the drive, as if the medium were
// changed: the computer sees the new one at its next look.
func (g *Gadget) SetDrive(image string) error {
	lun := filepath.Join(g.dir, "functions", fnDrive, "lun.0")
	// A computer that mounted the drive forbids its removal; the box
	// ejects it anyway (forced_eject, Linux 6.0 and later).
	if err := os.WriteFile(filepath.Join(lun, "forced_eject"), []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("usbgadget: eject the drive: %w", err)
	}
	if err := os.WriteFile(filepath.Join(lun, "file"), []byte(image), 0); err != nil {
		return fmt.Errorf("usbgadget: change the drive's medium: %w", err)
	}
	return nil
}

// Remove unbinds the gadget and takes it apart, in the reverse order of
// its making (configfs refuses to remove a directory still linked).
func (g *Gadget) Remove() error {
	os.WriteFile(filepath.Join(g.dir, "UDC"), []byte("\n"), 0) // dropped: an unbound gadget refuses it, and the removals below say what failed
	cfg := filepath.Join(g.dir, "configs", "c.1")
	os.Remove(filepath.Join(g.dir, "os_desc", "c.1"))
	links, _ := filepath.Glob(filepath.Join(cfg, "*.usb0"))
	for _, l := range links {
		os.Remove(l)
	}
	var errs []error
	for _, d := range []string{
		filepath.Join(cfg, "strings", "0x409"), cfg,
		filepath.Join(g.dir, "functions", fnRNDIS), filepath.Join(g.dir, "functions", fnECM),
		filepath.Join(g.dir, "functions", fnACM), filepath.Join(g.dir, "functions", fnDrive),
		filepath.Join(g.dir, "strings", "0x409"), g.dir,
	} {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("usbgadget: take apart %s: %w", g.dir, errors.Join(errs...))
	}
	return nil
}

// writer writes configfs attributes and keeps the first error.
type writer struct{ err error }

func (w *writer) mkdir(dir string) {
	if w.err == nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			w.err = fmt.Errorf("usbgadget: %w", err)
		}
	}
}

func (w *writer) write(dir, attr, value string) {
	if w.err == nil {
		if err := os.WriteFile(filepath.Join(dir, attr), []byte(value), 0o644); err != nil {
			w.err = fmt.Errorf("usbgadget: %s = %q: %w", filepath.Join(filepath.Base(dir), attr), value, err)
		}
	}
}
