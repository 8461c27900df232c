// Command usbcheck is the USB device port test's computer: the other end
// of the cable, inside the same QEMU guest. The kernel's dummy_hcd joins a
// device controller (where bonesync makes its gadget) to a host controller
// (where the kernel's own host drivers, rndis_host, cdc_ether, cdc-acm and
// usb-storage, take the gadget as a computer would). It lives with the
// test data, in an initramfs the test appends to the card's own: no
// release carries it, and the shipped binary has no switch for it.
//
// As the kernel's /init it loads dummy_hcd and the host drivers, starts
// itself as the checker, and executes the card's bonesync as PID 1. The
// checker mounts the start drive, takes the CA from it, gets a lease on
// each network link in a network namespace of its own (the computer's
// side), fetches a page over HTTPS verified against that CA with the
// link's address as the name, and reads the console's greeting; it prints
// "usbcheck: " lines on the console and ends with PASS or FAIL.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/mdns"
)

const (
	self    = "/init"              // the file stays after bonesync's exec
	modules = "/usbcheck/modules"  // NN-name.ko, loaded in name order
	box     = "/usbcheck/bonesync" // the card's own /init
	drive   = "/run/usbcheck-drive"
)

func main() {
	if os.Getpid() == 1 {
		pid1()
	}
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "check":
		err = check()
	case len(os.Args) > 2 && os.Args[1] == "host":
		err = host(os.Args[2], os.Args[3:])
		if errors.Is(err, errNoCarrier) {
			os.Exit(noCarrier)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "usbcheck: host side: %v\n", err)
			os.Exit(1)
		}
		return
	default:
		err = fmt.Errorf("usage: usbcheck check | host CA IFACE...")
	}
	if err != nil {
		say("FAIL %v", err)
		os.Exit(1)
	}
	say("PASS")
}

func say(format string, args ...any) {
	fmt.Printf("usbcheck: "+format+"\n", args...)
}

// pid1 loads the modules, starts the checker and becomes bonesync.
func pid1() {
	kos, _ := filepath.Glob(filepath.Join(modules, "*.ko"))
	sort.Strings(kos)
	for _, ko := range kos {
		f, err := os.Open(ko)
		if err == nil {
			err = unix.FinitModule(int(f.Fd()), "", 0)
			f.Close()
		}
		if err != nil && err != unix.EEXIST {
			say("FAIL load %s: %v", filepath.Base(ko), err)
		}
	}
	cmd := exec.Command(self, "check")
	// Not /dev/null: /dev is bonesync's to mount.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stdout
	if err := cmd.Start(); err != nil {
		say("FAIL start the checker: %v", err)
	}
	err := syscall.Exec(box, []string{"/init"}, os.Environ())
	say("FAIL exec bonesync: %v", err)
	select {}
}

// check is the computer's side, step by step.
func check() error {
	if err := waitFor("/sys/class/net/lo", 2*time.Minute); err != nil {
		return err
	}
	ca, err := readDrive()
	if err != nil {
		return fmt.Errorf("drive: %w", err)
	}
	if err := network(ca); err != nil {
		return fmt.Errorf("network: %w", err)
	}
	if err := console(ca); err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

func waitFor(path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s in %v", path, d)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// byDriver are the devices under class (net, tty, block) bound to driver.
func byDriver(class, driver string) []string {
	var out []string
	ds, _ := filepath.Glob(filepath.Join("/sys/class", class, "*"))
	for _, d := range ds {
		for _, link := range []string{"device/driver", "device/../driver"} {
			if t, err := os.Readlink(filepath.Join(d, link)); err == nil && filepath.Base(t) == driver {
				out = append(out, filepath.Base(d))
				break
			}
		}
	}
	return out
}

// readDrive mounts the start drive read-only once it shows the report,
// checks its files and returns the CA it holds.
func readDrive() ([]byte, error) {
	deadline := time.Now().Add(8 * time.Minute)
	var dev string
	for dev == "" {
		ds, _ := filepath.Glob("/sys/block/sd*")
		for _, d := range ds {
			model, _ := os.ReadFile(filepath.Join(d, "device/model"))
			if strings.TrimSpace(string(model)) == "start drive" {
				dev = filepath.Base(d)
			}
		}
		if dev == "" {
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("no USB drive with the model \"start drive\"")
			}
			time.Sleep(time.Second)
		}
	}
	ro, _ := os.ReadFile(filepath.Join("/sys/block", dev, "ro"))
	say("drive: /dev/%s, read-only %s", dev, strings.TrimSpace(string(ro)))
	if strings.TrimSpace(string(ro)) != "1" {
		return nil, fmt.Errorf("/dev/%s is writable", dev)
	}
	os.MkdirAll(drive, 0o755)
	for {
		// The drive is made again when the report is there: a new
		// medium, read at the next mount.
		if err := unix.Mount("/dev/"+dev, drive, "vfat", unix.MS_RDONLY, "iocharset=iso8859-1,codepage=437"); err != nil {
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("mount /dev/%s: %w", dev, err)
			}
			time.Sleep(2 * time.Second)
			continue
		}
		_, err := os.Stat(filepath.Join(drive, "report.txt"))
		if err == nil {
			break
		}
		unix.Unmount(drive, 0)
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the drive never showed report.txt")
		}
		time.Sleep(3 * time.Second)
	}
	defer unix.Unmount(drive, 0)
	ca, err := os.ReadFile(filepath.Join(drive, "ca.crt"))
	if err != nil {
		return nil, err
	}
	page, err := os.ReadFile(filepath.Join(drive, "Start here.html"))
	if err != nil {
		return nil, err
	}
	rep, _ := os.ReadFile(filepath.Join(drive, "report.txt"))
	fp := fingerprint(ca)
	text := strings.ReplaceAll(string(page), "<wbr>", "") // where the page lets the fingerprint wrap
	for _, want := range []string{"Welcome to bonesync", "https://192.168.7.2/", "https://192.168.6.2/", fp} {
		if !strings.Contains(text, want) {
			return nil, fmt.Errorf("Start here.html lacks %q", want)
		}
	}
	if !bytes.Contains(rep, []byte("CA fingerprint")) {
		return nil, fmt.Errorf("report.txt holds no report: %.200q", rep)
	}
	names, _ := os.ReadDir(drive)
	var list []string
	for _, n := range names {
		list = append(list, n.Name())
	}
	say("drive: %s; the CA's fingerprint %s", strings.Join(list, ", "), fp)
	return ca, nil
}

func fingerprint(pemCA []byte) string {
	b, _ := pem.Decode(pemCA)
	if b == nil {
		return "(not PEM)"
	}
	sum := sha256.Sum256(b.Bytes)
	var parts []string
	for _, c := range sum {
		parts = append(parts, fmt.Sprintf("%02X", c))
	}
	return strings.Join(parts, ":")
}

// network moves the host side's interfaces into a namespace of their own
// (a computer's: nothing of the box's there) and runs host in it.
func network(ca []byte) error {
	var ifaces []string
	deadline := time.Now().Add(2 * time.Minute)
	for len(ifaces) < 2 {
		ifaces = append(byDriver("net", "rndis_host"), byDriver("net", "cdc_ether")...)
		if time.Now().After(deadline) {
			return fmt.Errorf("the host side has %v, not an RNDIS and an ECM interface", ifaces)
		}
		time.Sleep(time.Second)
	}
	say("network: the host side's interfaces %v (rndis_host, cdc_ether)", ifaces)
	caFile := "/run/usbcheck-ca.crt"
	if err := os.WriteFile(caFile, ca, 0o644); err != nil {
		return err
	}
	for _, name := range ifaces {
		err := onLink(caFile, name)
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == noCarrier {
			// The computer's driver never heard the link come up; a
			// computer's user would unplug and plug in again: the
			// driver is bound to the interface again, and asks again.
			if name, err = rebind(name); err == nil {
				err = onLink(caFile, name)
			}
		}
		if err != nil {
			for _, n := range []string{"usb0", "usb1"} { // what the box's side of the links says
				op, _ := os.ReadFile("/sys/class/net/" + n + "/operstate")
				ca, _ := os.ReadFile("/sys/class/net/" + n + "/carrier")
				say("network: the box's %s: operstate %s carrier %s", n, bytes.TrimSpace(op), bytes.TrimSpace(ca))
			}
			return err
		}
	}
	return nil
}

// noCarrier is host's exit code when its link never came up.
const noCarrier = 3

// onLink runs host for one link, in a network namespace of its own.
func onLink(caFile, name string) error {
	cmd := exec.Command(self, "host", caFile, name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if err := cmd.Start(); err != nil {
		return err
	}
	l, err := netlink.LinkByName(name)
	if err == nil {
		err = netlink.LinkSetNsPid(l, cmd.Process.Pid)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("move %s: %w", name, err)
	}
	return cmd.Wait()
}

// rebind binds name's USB interface to its driver again (the namespace
// gone, the interface is back in this one) and returns the new
// interface's name.
func rebind(name string) (string, error) {
	var dev, drv string
	for i := 0; i < 20 && dev == ""; i++ {
		if t, err := filepath.EvalSymlinks(filepath.Join("/sys/class/net", name, "device")); err == nil {
			dev = t
			drv, _ = filepath.EvalSymlinks(filepath.Join(t, "driver"))
		} else {
			time.Sleep(250 * time.Millisecond)
		}
	}
	if dev == "" || drv == "" {
		return "", fmt.Errorf("%s: no USB interface to bind again", name)
	}
	before := byDriver("net", filepath.Base(drv))
	say("network: %s never had a carrier: binding %s to %s again", name, filepath.Base(dev), filepath.Base(drv))
	if err := os.WriteFile(filepath.Join(drv, "unbind"), []byte(filepath.Base(dev)), 0); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(drv, "bind"), []byte(filepath.Base(dev)), 0); err != nil {
		return "", err
	}
	for i := 0; i < 40; i++ {
		for _, n := range byDriver("net", filepath.Base(drv)) {
			if n == name || !slices.Contains(before, n) {
				return n, nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return "", fmt.Errorf("%s: no interface after binding again", filepath.Base(dev))
}

// host runs in the computer's namespace: a lease on each link, then
// HTTPS to the box's address there.
func host(caFile string, ifaces []string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return fmt.Errorf("the drive's ca.crt is not a certificate")
	}
	if lo, err := netlink.LinkByName("lo"); err == nil {
		netlink.LinkSetUp(lo)
	}
	// Up at once, both, as a computer's network manager brings up what
	// appears; then a lease on each in turn.
	links := map[string]netlink.Link{}
	for _, name := range ifaces {
		var l netlink.Link
		for i := 0; i < 20; i++ {
			if l, err = netlink.LinkByName(name); err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("%s never came: %w", name, err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			return err
		}
		links[name] = l
	}
	for _, name := range ifaces {
		l := links[name]
		got, err := lease(name, l)
		if err != nil {
			return err
		}
		ack := got.ACK
		mask, _ := ack.SubnetMask().Size()
		say("network: %s leased %s/%d from %s (router %v, DNS %v)", name, ack.YourIPAddr, mask, ack.ServerIdentifier(), ack.Router(), ack.DNS())
		if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: ack.YourIPAddr, Mask: ack.SubnetMask()}}); err != nil {
			return err
		}
		boxAddr := ack.ServerIdentifier().String()
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: boxAddr}}}
		var resp *http.Response
		for i := 0; i < 30; i++ {
			if resp, err = client.Get("https://" + boxAddr + "/ca.crt"); err == nil {
				break
			}
			time.Sleep(2 * time.Second)
		}
		if err != nil {
			return fmt.Errorf("HTTPS to %s: %w", boxAddr, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		say("network: https://%s/ca.crt over %s: %s, verified against the drive's CA as %s, same CA %v", boxAddr, name, resp.Status, boxAddr, bytes.Equal(bytes.TrimSpace(body), bytes.TrimSpace(ca)))
		if resp.StatusCode != 200 || !bytes.Equal(bytes.TrimSpace(body), bytes.TrimSpace(ca)) {
			return fmt.Errorf("https://%s/ca.crt: %s", boxAddr, resp.Status)
		}
		// The box answers for its name over mDNS on the link (the
		// namespace has no other).
		ifc, err := net.InterfaceByName(name)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		answers, err := mdns.Taken(ctx, "bonesync", ifc)
		cancel()
		say("network: bonesync.local answers over mDNS on %s: %v (%v)", name, answers, err)
		if !answers {
			return fmt.Errorf("no mDNS answer for bonesync.local on %s", name)
		}
	}
	return nil
}

// lease asks for a lease on l once it has a carrier (cdc_ether takes the
// link's state from the device's notifications, which may come a moment
// after the interface is opened); errNoCarrier if it has none in 10 s.
func lease(name string, l netlink.Link) (*nclient4.Lease, error) {
	carrier := false // read through netlink: /sys shows the box's namespace
	for i := 0; i < 40 && !carrier; i++ {
		if cur, err := netlink.LinkByName(name); err == nil {
			carrier = cur.Attrs().RawFlags&unix.IFF_LOWER_UP != 0
		}
		if !carrier {
			time.Sleep(250 * time.Millisecond)
		}
	}
	if !carrier {
		return nil, errNoCarrier
	}
	c, err := nclient4.New(name, nclient4.WithTimeout(5*time.Second), nclient4.WithRetry(6))
	if err != nil {
		return nil, fmt.Errorf("DHCP client on %s: %w", name, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lease, err := c.Request(ctx)
	if err != nil {
		return nil, fmt.Errorf("no lease on %s: %w", name, err)
	}
	return lease, nil
}

var errNoCarrier = errors.New("no carrier")

// console opens the host side of the console's serial port, presses
// Enter and reads the greeting: the report's summary with the CA's
// fingerprint, and the prompt.
func console(ca []byte) error {
	var tty string
	deadline := time.Now().Add(time.Minute)
	for tty == "" {
		if ts := byDriver("tty", "cdc_acm"); len(ts) > 0 {
			tty = "/dev/" + ts[0]
		} else if time.Now().After(deadline) {
			return fmt.Errorf("no tty of cdc_acm")
		} else {
			time.Sleep(time.Second)
		}
	}
	f, err := os.OpenFile(tty, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		return err
	}
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG
	t.Iflag &^= unix.ICRNL
	t.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t); err != nil {
		return err
	}
	got := make(chan []byte, 64)
	go func() {
		for {
			b := make([]byte, 4096)
			n, err := f.Read(b)
			if n > 0 {
				got <- b[:n]
			}
			if err != nil {
				close(got)
				return
			}
		}
	}()
	// The first start writes its password to the card right after the
	// report, which the drive showed before the links were tried.
	time.Sleep(2 * time.Second) // what the box's console queued while no one read it
	if _, err := f.Write([]byte("\r")); err != nil {
		return fmt.Errorf("write %s: %w", tty, err)
	}
	fp := fingerprint(ca)
	var all bytes.Buffer
	timeout := time.After(time.Minute)
	for {
		select {
		case b, ok := <-got:
			if !ok {
				return fmt.Errorf("%s closed; read %q", tty, all.String())
			}
			all.Write(b)
		case <-timeout:
			return fmt.Errorf("%s: no greeting with the CA's fingerprint %s and a prompt in a minute; read %q", tty, fp, tail(all.String()))
		}
		s := all.String()
		// The first start's password is on the console too, as on the
		// UART (the server wrote FIRST-LOGIN.txt with the report).
		if i := strings.LastIndex(s, "CA fingerprint (SHA-256):"); i >= 0 && strings.Contains(s[i:], fp[:23]) && strings.Contains(s[i:], "bonesync> ") {
			pw := "no first login's password"
			if m := regexp.MustCompile(`password: ([a-z0-9-]+)`).FindStringSubmatch(s[i:]); m != nil {
				pw = "the first login's password " + m[1]
			}
			say("console: %s greets with the report's summary (CA fingerprint %s...), %s, and the prompt", tty, fp[:23], pw)
			return nil
		}
	}
}

func tail(s string) string {
	if len(s) > 800 {
		return s[len(s)-800:]
	}
	return s
}
