package usbgadget

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Make writes what configfs takes; a directory stands for configfs (which
// makes the attributes itself, so only what is written is checked here;
// the boot test in QEMU binds a real gadget: image/gadget_vm_test.go).
func TestMakeWritesTheGadget(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "usb_gadget"), 0o755)
	s := Spec{Name: "g", Manufacturer: "bonesync", Product: "P", Serial: "0123",
		Network: true, RNDISDev: "02:00:00:00:00:01", RNDISHost: "02:00:00:00:00:02", ECMDev: "02:00:00:00:00:03", ECMHost: "02:00:00:00:00:04",
		Console: true, Drive: "/run/drive.img", DriveVendor: "bonesync", DriveModel: "start drive"}
	g, err := Make(root, "musb-hdrc.0", s)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "usb_gadget", "g")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		return string(b)
	}
	for rel, want := range map[string]string{
		"idVendor": "0x1d6b", "idProduct": "0x0104", "bDeviceClass": "0xEF", "UDC": "musb-hdrc.0",
		"strings/0x409/serialnumber": "0123", "configs/c.1/MaxPower": "500",
		"os_desc/use": "1", "os_desc/qw_sign": "MSFT100",
		"functions/rndis.usb0/host_addr":                             "02:00:00:00:00:02",
		"functions/rndis.usb0/os_desc/interface.rndis/compatible_id": "RNDIS",
		"functions/ecm.usb0/dev_addr":                                "02:00:00:00:00:03",
		"functions/mass_storage.usb0/lun.0/ro":                       "1",
		"functions/mass_storage.usb0/lun.0/removable":                "1",
		"functions/mass_storage.usb0/lun.0/file":                     "/run/drive.img",
		"functions/mass_storage.usb0/lun.0/inquiry_string":           "bonesyncstart drive     ",
	} {
		if got := read(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	for _, fn := range []string{"rndis.usb0", "ecm.usb0", "acm.usb0", "mass_storage.usb0"} {
		if target, err := os.Readlink(filepath.Join(dir, "configs/c.1", fn)); err != nil || target != filepath.Join(dir, "functions", fn) {
			t.Errorf("configuration's %s -> %q (%v)", fn, target, err)
		}
	}
	if _, err := os.Readlink(filepath.Join(dir, "os_desc/c.1")); err != nil {
		t.Errorf("OS descriptors name no configuration: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "functions/acm.usb0/port_num"), []byte("0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "functions/rndis.usb0/ifname"), []byte("usb0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "functions/ecm.usb0/ifname"), []byte("(unnamed net_device)\n"), 0o644)
	if tty := g.TTY(); tty != "/dev/ttyGS0" {
		t.Errorf("TTY = %q", tty)
	}
	if r, e := g.Interfaces(); r != "usb0" || e != "" {
		t.Errorf("Interfaces = %q, %q", r, e)
	}
	if err := g.SetDrive("/run/drive-2.img"); err != nil || read("functions/mass_storage.usb0/lun.0/file") != "/run/drive-2.img" {
		t.Errorf("SetDrive: %v", err)
	}
}

func TestMakeRefuses(t *testing.T) {
	if _, err := Make(t.TempDir(), "udc", Spec{Name: "g", Console: true}); err == nil || !strings.Contains(err.Error(), "libcomposite") {
		t.Errorf("no usb_gadget in configfs: %v", err)
	}
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "usb_gadget"), 0o755)
	if _, err := Make(root, "udc", Spec{Name: "g"}); err == nil {
		t.Error("a gadget with no function was made")
	}
	if got := inquiry("a-very-long-vendor", "model"); len(got) != 24 || !strings.HasPrefix(got, "a-very-lmodel") {
		t.Errorf("inquiry = %q", got)
	}
}
