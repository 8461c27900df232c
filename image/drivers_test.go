package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/u-root/u-root/pkg/dt"

	"github.com/bonesync/bonesync/appliance/kmod"
	"github.com/bonesync/bonesync/board"
)

// The pinned kernel package, read from scripts/boot-packages.lock and
// cached by scripts/fetch-boot.sh.
const (
	bootLock  = "../scripts/boot-packages.lock"
	debCache  = "../out/cache/debs"
	bbbDTB    = "am335x-boneblack.dtb"
	kernelPkg = "linux-image-"
)

var (
	kernelOnce sync.Once
	kernel     struct {
		mods    *kmod.Modules
		dtb     []byte
		skip    string // why the package is unavailable
		fatal   string // why reading it failed
		version string
	}
)

// testKernel extracts the cached kernel package once per test binary, runs
// depmod on it, reads its module metadata and the BeagleBone Black's DTB,
// and removes the extracted tree again (everything is held in memory).
func testKernel(t *testing.T) (*kmod.Modules, []byte) {
	t.Helper()
	kernelOnce.Do(loadKernel)
	if kernel.fatal != "" {
		t.Fatal(kernel.fatal)
	}
	if kernel.skip != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: run scripts/fetch-boot.sh to fetch it", kernel.skip)
		}
		t.Skipf("%s (run scripts/fetch-boot.sh)", kernel.skip)
	}
	return kernel.mods, kernel.dtb
}

func loadKernel() {
	deb, version, err := pinnedKernelDeb()
	if err != nil {
		kernel.fatal = err.Error()
		return
	}
	if _, err := os.Stat(deb); err != nil {
		kernel.skip = "kernel package not cached: " + deb
		return
	}
	for _, tool := range []string{"dpkg-deb", "depmod"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := exec.LookPath("/usr/sbin/" + tool); err != nil {
				kernel.skip = tool + " not installed (Debian packages dpkg, kmod)"
				return
			}
		}
	}
	dir, err := os.MkdirTemp("", "bonesync-kernel-")
	if err != nil {
		kernel.fatal = err.Error()
		return
	}
	defer os.RemoveAll(dir)
	run := func(name string, args ...string) bool {
		if p, err := exec.LookPath(name); err == nil {
			name = p
		} else {
			name = "/usr/sbin/" + name
		}
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			kernel.fatal = name + " " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(out)
			return false
		}
		return true
	}
	if !run("dpkg-deb", "-x", deb, dir) || !run("depmod", "-b", dir, version) {
		return
	}
	kernel.mods, err = kmod.ReadModules(filepath.Join(dir, "lib/modules", version))
	if err != nil {
		kernel.fatal = err.Error()
		return
	}
	kernel.dtb, err = os.ReadFile(filepath.Join(dir, "usr/lib/linux-image-"+version, bbbDTB))
	if err != nil {
		kernel.fatal = err.Error()
		return
	}
	kernel.version = version
}

// pinnedKernelDeb returns the cached kernel package's path and its kernel
// version (6.1.0-50-armmp).
func pinnedKernelDeb() (deb, version string, err error) {
	f, err := os.Open(bootLock)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && strings.HasPrefix(fs[0], kernelPkg) {
			return filepath.Join(debCache, fs[0]+"_"+fs[1]+"_armhf.deb"), strings.TrimPrefix(fs[0], kernelPkg), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", os.ErrNotExist
}

func loadBoard(t *testing.T, name string) *board.Board {
	t.Helper()
	b, err := board.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestModulesRead(t *testing.T) {
	m, _ := testKernel(t)
	for _, tc := range []struct {
		name         string
		has, builtin bool
		path         string
	}{
		{"sdhci_omap", true, false, "kernel/drivers/mmc/host/sdhci-omap.ko"},
		{"sdhci-omap", true, false, "kernel/drivers/mmc/host/sdhci-omap.ko"},
		{"ti_cpsw_new", true, false, "kernel/drivers/net/ethernet/ti/ti_cpsw_new.ko"},
		{"omap_serial", false, true, ""},
		{"no_such_module", false, false, ""},
	} {
		if got := m.Has(tc.name); got != tc.has {
			t.Errorf("Has(%q) = %v, want %v", tc.name, got, tc.has)
		}
		if got := m.Builtin(tc.name); got != tc.builtin {
			t.Errorf("Builtin(%q) = %v, want %v", tc.name, got, tc.builtin)
		}
		if got := m.Path(tc.name); got != tc.path {
			t.Errorf("Path(%q) = %q, want %q", tc.name, got, tc.path)
		}
	}
}

// checkLoadOrder fails unless every module's dependencies come before it.
func checkLoadOrder(t *testing.T, m *kmod.Modules, order []string) {
	t.Helper()
	pos := map[string]int{}
	for i, n := range order {
		if _, dup := pos[n]; dup {
			t.Errorf("%s appears twice in %v", n, order)
		}
		pos[n] = i
	}
	for i, n := range order {
		for _, d := range m.Deps(n) {
			if j, ok := pos[d]; !ok || j >= i {
				t.Errorf("%s (at %d) needs %s, at %d (ok %v)", n, i, d, j, ok)
			}
		}
	}
}

func TestClosureBeagleBone(t *testing.T) {
	m, _ := testKernel(t)
	b := loadBoard(t, "beaglebone-black")
	got, err := m.Closure(b.Modules)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Closure(%v) = %v", b.Modules, got)
	checkLoadOrder(t, m, got)
	for _, want := range []string{"ti_cpsw_new", "davinci_mdio", "libphy", "sdhci", "sdhci_omap", "ext4", "jbd2", "fat", "vfat"} {
		if !slices.Contains(got, want) {
			t.Errorf("Closure(board modules) lacks %s", want)
		}
	}
	// Deterministic.
	again, _ := m.Closure(b.Modules)
	if !slices.Equal(got, again) {
		t.Errorf("Closure not deterministic:\n%v\n%v", got, again)
	}
}

func TestClosureErrors(t *testing.T) {
	m, _ := testKernel(t)
	got, err := m.Closure([]string{"omap_serial", "sdhci-omap"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sdhci", "sdhci_pltfm", "sdhci_omap"}; !slices.Equal(got, want) &&
		!slices.Equal(got, []string{"sdhci_pltfm", "sdhci", "sdhci_omap"}) {
		t.Errorf("Closure(omap_serial, sdhci-omap) = %v, want %v (builtin dropped)", got, want)
	}
	_, err = m.Closure([]string{"ext4", "nonesuch", "bogus_driver"})
	if err == nil || !strings.Contains(err.Error(), "nonesuch") || !strings.Contains(err.Error(), "bogus_driver") {
		t.Errorf("Closure(unknown) error = %v, want one naming nonesuch and bogus_driver", err)
	}
}

func TestModulesForCPSW(t *testing.T) {
	m, _ := testKernel(t)
	mods, builtin := m.ModulesFor([]string{"ti,am335x-cpsw-switch", "ti,cpsw-switch"})
	t.Logf("ModulesFor(cpsw switch) = %v, builtin %v", mods, builtin)
	if !slices.Contains(mods, "ti_cpsw_new") {
		t.Errorf("ModulesFor(cpsw switch) = %v, want ti_cpsw_new among them", mods)
	}
	if slices.Contains(mods, "ti_cpsw") {
		t.Errorf("ModulesFor(cpsw switch) = %v: the old ti_cpsw does not drive the switch binding", mods)
	}
	mods, _ = m.ModulesFor([]string{"ti,omap4-rng"})
	if want := []string{"omap_rng"}; !slices.Equal(mods, want) {
		t.Errorf("ModulesFor(ti,omap4-rng) = %v, want %v", mods, want)
	}
}

func TestEnabledNodes(t *testing.T) {
	_, dtb := testKernel(t)
	nodes, err := EnabledNodes(dtb)
	if err != nil {
		t.Fatal(err)
	}
	find := func(compat string) []Node {
		var out []Node
		for _, n := range nodes {
			if slices.Contains(n.Compatible, compat) {
				out = append(out, n)
			}
		}
		return out
	}
	if len(nodes) == 0 || nodes[0].Path != "/" || !slices.Contains(nodes[0].Compatible, "ti,am335x-bone-black") {
		t.Errorf("first node = %+v, want the root, compatible ti,am335x-bone-black", nodes[0])
	}
	rng := find("ti,omap4-rng")
	if len(rng) != 1 || !strings.HasPrefix(rng[0].Name, "rng@") {
		t.Errorf("nodes compatible ti,omap4-rng = %+v, want one rng@...", rng)
	}
	// The BeagleBone Black enables the first two MMC controllers (SD card,
	// eMMC) and leaves mmc3 (for a Wi-Fi cape) disabled.
	mmc := find("ti,am335-sdhci")
	if len(mmc) != 2 {
		t.Errorf("enabled nodes compatible ti,am335-sdhci = %+v, want 2", mmc)
	}
	// Only the debug UART is enabled.
	if uarts := find("ti,am3352-uart"); len(uarts) != 1 {
		t.Errorf("enabled UARTs = %+v, want 1", uarts)
	}
	for _, n := range nodes {
		if n.Path != "/" && !strings.HasSuffix(n.Path, "/"+n.Name) {
			t.Errorf("node %+v: path does not end in its name", n)
		}
	}
	t.Logf("%d enabled nodes with a compatible property", len(nodes))
	if _, err := EnabledNodes([]byte("not a device tree")); err == nil {
		t.Error("EnabledNodes(garbage) succeeded")
	}
}

func TestEnabledNodesSynthetic(t *testing.T) {
	str := func(name, v string) dt.Property { return dt.PropertyString(name, v) }
	compat := func(cs ...string) dt.Property {
		return dt.Property{Name: "compatible", Value: []byte(strings.Join(cs, "\x00") + "\x00")}
	}
	root := dt.NewNode("", dt.WithProperty(compat("vendor,board", "vendor,soc")), dt.WithChildren(
		dt.NewNode("cpus", dt.WithChildren(dt.NewNode("cpu@0", dt.WithProperty(str("device_type", "cpu"), compat("arm,cortex-a8"))))),
		dt.NewNode("bus@1000", dt.WithProperty(compat("simple-bus"), str("status", "okay")), dt.WithChildren(
			dt.NewNode("serial@0", dt.WithProperty(compat("vendor,uart"), str("status", "ok"))),
			dt.NewNode("serial@100", dt.WithProperty(compat("vendor,uart"), str("status", "disabled"))),
			dt.NewNode("nocompat@200"),
		)),
		dt.NewNode("bus@2000", dt.WithProperty(compat("simple-bus"), str("status", "disabled")), dt.WithChildren(
			dt.NewNode("rng@0", dt.WithProperty(compat("vendor,rng"), str("status", "okay"))),
		)),
		dt.NewNode("gpu@3000", dt.WithProperty(compat("vendor,gpu"), str("status", "fail"))),
	))
	fdt := &dt.FDT{Header: dt.Header{Magic: 0xd00dfeed, Version: 17, LastCompVersion: 16}, RootNode: root}
	var buf bytes.Buffer
	if _, err := fdt.Write(&buf); err != nil {
		t.Fatal(err)
	}
	nodes, err := EnabledNodes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{
		{Path: "/", Name: "", Compatible: []string{"vendor,board", "vendor,soc"}},
		{Path: "/cpus/cpu@0", Name: "cpu@0", Compatible: []string{"arm,cortex-a8"}},
		{Path: "/bus@1000", Name: "bus@1000", Compatible: []string{"simple-bus"}},
		{Path: "/bus@1000/serial@0", Name: "serial@0", Compatible: []string{"vendor,uart"}},
	}
	if !reflect.DeepEqual(nodes, want) {
		t.Errorf("EnabledNodes =\n%+v\nwant\n%+v", nodes, want)
	}
}

func TestCheckDriversBeagleBone(t *testing.T) {
	m, dtb := testKernel(t)
	b := loadBoard(t, "beaglebone-black")
	included, err := m.Closure(b.Modules)
	if err != nil {
		t.Fatal(err)
	}
	checks := CheckDrivers(b, dtb, m, included)
	t.Logf("driver check for %s:\n%s", b.Name, FormatDriverChecks(checks))
	if len(checks) != len(b.Devices) {
		t.Fatalf("%d checks for %d devices", len(checks), len(b.Devices))
	}
	for i, c := range checks {
		if !c.OK || c.Problem != "" || c.Driver == "" || c.How == "" || c.What != b.Devices[i].What {
			t.Errorf("check %+v: want OK with a driver", c)
		}
	}
	for what, want := range map[string]DriverCheck{
		"SD card and eMMC":                             {Driver: "sdhci_omap", How: HowModule},
		"serial console (debug UART)":                  {Driver: "omap_serial", How: HowBuiltinByName},
		"Ethernet switch (CPSW)":                       {Driver: "ti_cpsw_new", How: HowModule},
		"USB host port (MUSB controller, AM335x glue)": {Driver: "musb_dsps", How: HowModule},
		"USB PHY":                                {Driver: "phy_am335x", How: HowModule},
		"USB PHY control module":                 {Driver: "phy_am335x_control", How: HowModule},
		"USB DMA (CPPI 4.1)":                     {Driver: "cppi41", How: HowModule},
		"USB mass storage (a USB disk or stick)": {Driver: "usb_storage", How: HowModule},
		"USB Attached SCSI (a fast USB disk)":    {Driver: "uas", How: HowModule},
		"SCSI disks (/dev/sdX, for USB disks)":   {Driver: "sd_mod", How: HowModule},
	} {
		i := slices.IndexFunc(checks, func(c DriverCheck) bool { return c.What == what })
		if i < 0 || checks[i].Driver != want.Driver || checks[i].How != want.How {
			t.Errorf("check for %q = %+v, want driver %s, %s", what, checks, want.Driver, want.How)
		}
	}

	// Without sdhci_omap, exactly the SD card fails, naming it.
	without := slices.DeleteFunc(slices.Clone(included), func(n string) bool { return n == "sdhci_omap" })
	checks = CheckDrivers(b, dtb, m, without)
	t.Logf("without sdhci_omap:\n%s", FormatDriverChecks(checks))
	for _, c := range checks {
		sd := c.What == "SD card and eMMC"
		if c.OK == sd {
			t.Errorf("check %+v: want OK %v", c, !sd)
		}
		if sd && (!strings.Contains(c.Problem, "add sdhci_omap") || c.How != HowNotIncluded || c.Driver != "sdhci_omap") {
			t.Errorf("SD card check = %+v, want one saying to add sdhci_omap", c)
		}
	}
}

// Without the glue of the USB host port, exactly that check fails: the
// image would boot with no USB disk.
func TestCheckDriversBeagleBoneUSB(t *testing.T) {
	m, dtb := testKernel(t)
	b := loadBoard(t, "beaglebone-black")
	included, err := m.Closure(slices.DeleteFunc(slices.Clone(b.Modules), func(n string) bool { return n == "musb_dsps" }))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range CheckDrivers(b, dtb, m, included) {
		usb := c.What == "USB host port (MUSB controller, AM335x glue)"
		if c.OK == usb {
			t.Errorf("check %+v: want OK %v", c, !usb)
		}
		if usb && !strings.Contains(c.Problem, "musb_dsps") {
			t.Errorf("USB check = %+v, want one naming musb_dsps", c)
		}
	}
}

func TestCheckDriversProblems(t *testing.T) {
	m, dtb := testKernel(t)
	b := &board.Board{Name: "test", Devices: []board.Device{
		{What: "absent", Compatible: []string{"vendor,nothing-like-it"}},
		{What: "disabled", Compatible: []string{"ti,am335x-cpsw", "ti,am3352-d_can"}}, // only disabled nodes
		{What: "PHY", Module: "smsc"},
		{What: "builtin module", Module: "omap_serial"},
		{What: "ghost", Module: "no_such_driver"},
		{What: "uart without builtin name", Compatible: []string{"ti,am3352-uart"}},
	}}
	checks := CheckDrivers(b, dtb, m, []string{"libphy"})
	t.Logf("\n%s", FormatDriverChecks(checks))
	for i, want := range []struct {
		ok      bool
		problem string
	}{
		{false, `no enabled node in DTB with compatible "vendor,nothing-like-it"`},
		{false, `no enabled node in DTB with compatible "ti,am335x-cpsw" or "ti,am3352-d_can"`},
		{false, "add smsc"},
		{true, ""},
		{false, "no module no_such_driver"},
		{false, "no driver for"},
	} {
		if c := checks[i]; c.OK != want.ok || !strings.Contains(c.Problem, want.problem) {
			t.Errorf("check %+v: want OK %v, problem containing %q", c, want.ok, want.problem)
		}
	}
	// No DTB: devices found through it cannot be checked.
	checks = CheckDrivers(loadBoard(t, "beaglebone-black"), nil, m, nil)
	if c := checks[0]; c.OK || !strings.Contains(c.Problem, "no device tree") {
		t.Errorf("check without DTB = %+v, want a failure for want of a device tree", c)
	}
}

func TestCheckDriversQemuVirt(t *testing.T) {
	m, _ := testKernel(t)
	b := loadBoard(t, "qemu-virt")
	included, err := m.Closure(b.Modules)
	if err != nil {
		t.Fatal(err)
	}
	checks := CheckDrivers(b, nil, m, included)
	t.Logf("driver check for %s:\n%s", b.Name, FormatDriverChecks(checks))
	for _, c := range checks {
		if !c.OK {
			t.Errorf("check %+v: want OK", c)
		}
	}
}
