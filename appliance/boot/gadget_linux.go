package boot

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/dhcpd"
	"github.com/bonesync/bonesync/appliance/kmod"
	"github.com/bonesync/bonesync/appliance/mdns"
	"github.com/bonesync/bonesync/appliance/usbgadget"
)

// The USB device port's links, as the BeagleBoard.org images number them
// (docs/usb.md): the box is .2 of a /30 and the computer gets .1 from the
// box's DHCP server. Windows binds RNDIS, macOS and Linux CDC-ECM (Linux
// both).
var usbLinks = []struct {
	fn       string // "rndis", "ecm"
	box, per net.IP
	who      string
}{
	{"rndis", net.IPv4(192, 168, 7, 2).To4(), net.IPv4(192, 168, 7, 1).To4(), "Windows, over USB"},
	{"ecm", net.IPv4(192, 168, 6, 2).To4(), net.IPv4(192, 168, 6, 1).To4(), "macOS and Linux, over USB"},
}

// usbWait is how long the port's controller may take to appear after its
// driver loaded (the MUSB glue probes late); the boot does not wait for
// it.
const usbWait = 30 * time.Second

// usbPort is the gadget on the USB device port and what runs behind it.
type usbPort struct {
	g       *usbgadget.Gadget
	udc     string
	offered []string
	mu      sync.Mutex
	links   []usbLink // up, with their addresses
	host    string    // the box's name: the config's, then the one the network step claimed
	named   bool      // the network step claimed it: announced over mDNS
	stops   []func()  // the mDNS announcements
}

// usbLink is one network link of the port: its interface and the box's
// address there.
type usbLink struct {
	iface string
	box   net.IP
	who   string
}

// startUSB makes the gadget on the board's USB device port: a network
// link (RNDIS and CDC-ECM, DHCP, mDNS), the console (CDC-ACM) and the
// start drive, each unless the config's usb_device leaves it out. It never
// holds the boot back: a controller that is not there yet is waited for
// in the background, and none at all (no port, no cable needed) is fine.
func startUSB(ctx context.Context, s *System) error {
	dev := s.Board.USBDevice
	want := s.Config.USB
	if dev == nil || !(want.Network || want.Console || want.Drive) {
		return nil
	}
	l, err := kmod.NewLoader(s.Log)
	if err != nil {
		return err
	}
	for _, m := range dev.Modules {
		if err := l.Load(m); err != nil {
			return fmt.Errorf("USB device port: %w", err)
		}
	}
	if err := unix.Mount("configfs", usbgadget.ConfigFS, "configfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil && err != unix.EBUSY {
		return fmt.Errorf("mount configfs: %w", err)
	}
	s.usb = &usbPort{host: s.Config.Hostname}
	if udc := findUDC(dev.UDC); udc != "" {
		return s.makeGadget(ctx, udc)
	}
	go func() {
		deadline := time.Now().Add(usbWait)
		for time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
			if udc := findUDC(dev.UDC); udc != "" {
				if err := s.makeGadget(ctx, udc); err != nil {
					s.Log.Error("USB device port: not set up", "err", err)
				}
				return
			}
		}
		s.Log.Info("USB device port: no device controller, so nothing is offered over USB", "udc", dev.UDC)
	}()
	return nil
}

// findUDC is the device controller named, or the first there is when
// none is named; "" when it is not there.
func findUDC(name string) string {
	names, _ := filepath.Glob("/sys/class/udc/*")
	for _, n := range names {
		if b := filepath.Base(n); name == "" || b == name {
			return b
		}
	}
	return ""
}

// makeGadget makes the gadget on udc and starts what is behind it.
func (s *System) makeGadget(ctx context.Context, udc string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("USB device port: %v", r)
		}
	}()
	want := s.Config.USB
	seed := macSeed()
	spec := usbgadget.Spec{
		Name: "bonesync", Manufacturer: "bonesync", Product: s.Board.USBDevice.Product,
		Serial:  fmt.Sprintf("%016x", seed),
		Network: want.Network, Console: want.Console,
		RNDISDev: gadgetMAC(seed, 1), RNDISHost: gadgetMAC(seed, 2),
		ECMDev: gadgetMAC(seed, 3), ECMHost: gadgetMAC(seed, 4),
		DriveVendor: "bonesync", DriveModel: "start drive",
	}
	drive := &startDrive{s: s}
	if want.Drive {
		img, key, err := drive.refresh()
		if err != nil {
			return err
		}
		drive.use(img, key)
		spec.Drive = img
	}
	g, err := usbgadget.Make(usbgadget.ConfigFS, udc, spec)
	if err != nil {
		if g != nil {
			g.Remove() // dropped: the error that matters is Make's
		}
		return err
	}
	var offered []string
	if want.Network {
		if err := s.usb.upLinks(ctx, s, g); err != nil {
			s.Log.Error("USB device port: no network link", "err", err)
		} else {
			offered = append(offered, "network 192.168.7.2 (Windows), 192.168.6.2 (macOS, Linux)")
		}
	}
	if want.Console {
		if err := s.addConsole(ctx, g.TTY()); err != nil {
			s.Log.Error("USB device port: no console", "err", err)
		} else {
			offered = append(offered, "console "+filepath.Base(g.TTY()))
		}
	}
	if want.Drive {
		go drive.keep(ctx, g)
		offered = append(offered, "start drive")
	}
	s.usb.mu.Lock()
	s.usb.g, s.usb.udc, s.usb.offered = g, udc, offered
	s.usb.mu.Unlock()
	s.Log.Info("USB device port ready: plug it into a computer", "udc", udc, "offers", strings.Join(offered, ", "))
	return nil
}

// String is the port's line of the console's status: what it offers and
// whether a computer took it (the controller's state, as the kernel
// reports it).
func (p *usbPort) String() string {
	if p == nil {
		return "off (usb_device = none, or the board has no device port)"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.g == nil {
		return "no device controller (yet)"
	}
	st, err := os.ReadFile(filepath.Join("/sys/class/udc", p.udc, "state"))
	state := strings.TrimSpace(string(st))
	if err != nil {
		state = "unknown"
	}
	if state == "configured" {
		state = "a computer is using it"
	}
	return fmt.Sprintf("%s; %s (%s)", strings.Join(p.offered, ", "), state, p.udc)
}

// upLinks gives the gadget's network interfaces their addresses, brings
// them up and serves DHCP on them.
func (p *usbPort) upLinks(ctx context.Context, s *System, g *usbgadget.Gadget) error {
	rndis, ecm := g.Interfaces()
	var errs []error
	for _, l := range usbLinks {
		iface := rndis
		if l.fn == "ecm" {
			iface = ecm
		}
		if iface == "" {
			errs = append(errs, fmt.Errorf("%s: no interface", l.fn))
			continue
		}
		// No cable, no route: a home network that uses the same /24 is
		// never captured by a link no one is plugged into.
		if err := os.WriteFile("/proc/sys/net/ipv4/conf/"+iface+"/ignore_routes_with_linkdown", []byte("1"), 0); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", iface, err))
			continue
		}
		link, err := netlink.LinkByName(iface)
		if err == nil {
			err = netlink.AddrReplace(link, &netlink.Addr{IPNet: &net.IPNet{IP: l.box, Mask: net.CIDRMask(30, 32)}})
		}
		if err == nil {
			err = netlink.LinkSetUp(link)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", iface, err))
			continue
		}
		d := dhcpd.Link{Iface: iface, Box: l.box, Peer: l.per, Mask: net.CIDRMask(30, 32), Lease: time.Hour}
		go func() {
			if err := dhcpd.Serve(ctx, d, s.Log); err != nil {
				s.Log.Error("USB device port: no DHCP", "iface", iface, "err", err)
			}
		}()
		p.mu.Lock()
		p.links = append(p.links, usbLink{iface: iface, box: l.box, who: l.who})
		p.mu.Unlock()
	}
	p.announce(ctx, "")
	return errors.Join(errs...)
}

// announce announces the box over mDNS on the port's links as host, once
// both the links and the name are known ("": the name is not yet).
func (p *usbPort) announce(ctx context.Context, host string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if host != "" {
		p.host, p.named = host, true
	}
	if !p.named || len(p.links) == 0 || len(p.stops) > 0 {
		return
	}
	for _, l := range p.links {
		iface, err := net.InterfaceByName(l.iface)
		if err != nil {
			continue
		}
		if stop, err := mdns.Announce(ctx, p.host, []net.IP{l.box}, iface, services()); err == nil {
			p.stops = append(p.stops, stop)
		}
	}
}

// name is the box's name as the network step claimed it, the config's
// until then (the network step runs beside the drive's looks).
func (p *usbPort) name() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host
}

// addresses are the port's links, for the start drive's page.
func (p *usbPort) addresses() []usbLink {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.links)
}

// stop ends the mDNS announcements (at shutdown). The gadget stays:
// the console's last lines go to a computer reading it too.
func (p *usbPort) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	for _, stop := range p.stops {
		stop()
	}
	p.stops = nil
	p.mu.Unlock()
}

// macSeed is what the gadget's serial number and MAC addresses come from,
// the same at every boot so that a computer keeps its settings for the
// box (Windows its network's profile and COM port number): the MAC
// address of the board's Ethernet port.
func macSeed() uint64 {
	h := fnv.New64a()
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if len(i.HardwareAddr) == 6 && !strings.HasPrefix(i.Name, "usb") && i.Flags&net.FlagLoopback == 0 {
			h.Write(i.HardwareAddr)
			break
		}
	}
	return h.Sum64()
}

// gadgetMAC is the n-th MAC address made from seed: locally administered,
// not multicast.
func gadgetMAC(seed uint64, n byte) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", seed, n)
	b := h.Sum(nil)[:6]
	b[0] = b[0]&^0x01 | 0x02
	return net.HardwareAddr(b).String()
}
