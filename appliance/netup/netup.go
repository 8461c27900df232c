// Package netup brings the box onto the network when bonesync runs as PID 1:
// loopback up, the hostname set, and one Ethernet interface addressed by
// DHCPv4, else by a configured static address, else by an IPv4 link-local
// address (RFC 3927), so that the box is always reachable on its own wire.
// IPv6 link-local addresses are left to the kernel; there is no DHCPv6.
package netup

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/bonesync/bonesync/appliance/dnsname"
)

// DefaultDHCPTimeout is how long Up waits for a carrier and a DHCP lease when
// Config.DHCPTimeout is zero.
const DefaultDHCPTimeout = 15 * time.Second

// DefaultResolvConf is where Up writes DNS settings when Config.ResolvConf is
// empty.
const DefaultResolvConf = "/etc/resolv.conf"

// Config is how to bring the network up.
type Config struct {
	// Hostname, if set, becomes the kernel hostname and is sent to the DHCP
	// server. It must be one DNS label: letters, digits and inner hyphens,
	// at most 63 characters.
	Hostname string

	// Interface, if set, is the interface to configure. Otherwise Up takes
	// the first by name of eth*, then en* (end0, enp1s0...), then any other
	// non-loopback interface with a MAC address.
	Interface string

	// Static, if set, is used when DHCP gets no lease: an IPv4 address with
	// its prefix length, e.g. "192.168.1.50/24".
	Static string
	// Gateway is the default router for Static, optional. It must lie in
	// Static's subnet.
	Gateway string
	// DNS are the name servers for Static, optional.
	DNS []string

	// DHCPTimeout bounds the whole DHCP attempt: waiting for a carrier and
	// then for a lease (requests are resent after 2 s, 4 s, 8 s...). Zero
	// means DefaultDHCPTimeout.
	DHCPTimeout time.Duration

	// ResolvConf is the file Up writes name servers to, when DHCP or DNS
	// names any. Empty means DefaultResolvConf.
	ResolvConf string

	// RetryEvery is Keep's first wait before asking DHCP again after a
	// fall-back (doubling up to 5 minutes). Zero means 30 s.
	RetryEvery time.Duration

	// Log receives one line per step; nil discards them.
	Log *slog.Logger
}

func (c Config) retryEvery() time.Duration {
	if c.RetryEvery > 0 {
		return c.RetryEvery
	}
	return 30 * time.Second
}

// State is what came up.
type State struct {
	// Interface is the name of the configured interface.
	Interface string
	// Addrs are the IPv4 addresses Up put on it.
	Addrs []net.IPNet
	// Method is how the address was obtained: "dhcp", "static" or
	// "link-local".
	Method string
	// Gateway is the default router Up installed, or nil.
	Gateway net.IP
	// Lease and Renew are a DHCP lease's length and when to renew it (T1).
	Lease, Renew time.Duration
}

// Methods reported in State.Method.
const (
	MethodDHCP      = "dhcp"
	MethodStatic    = "static"
	MethodLinkLocal = "link-local"
)

// dhcpTimeout returns DHCPTimeout, or its default.
func (c Config) dhcpTimeout() time.Duration {
	if c.DHCPTimeout > 0 {
		return c.DHCPTimeout
	}
	return DefaultDHCPTimeout
}

// resolvConf returns ResolvConf, or its default.
func (c Config) resolvConf() string {
	if c.ResolvConf != "" {
		return c.ResolvConf
	}
	return DefaultResolvConf
}

// log writes one line to Log, if any.
func (c Config) log(msg string, attrs ...any) {
	if c.Log != nil {
		c.Log.Info("netup: "+msg, attrs...)
	}
}

// static is Config's static fallback, parsed.
type static struct {
	addr    *net.IPNet // nil: no static fallback
	gateway net.IP
	dns     []net.IP
}

// check validates c and returns its static fallback, parsed. It touches
// nothing, so a bad Config is refused before the network is changed.
func (c Config) check() (static, error) {
	var s static
	if c.Hostname != "" && !dnsname.ValidLabel(c.Hostname) {
		return s, fmt.Errorf("netup: hostname %q is not a DNS label", c.Hostname)
	}
	if c.Static == "" {
		if c.Gateway != "" || len(c.DNS) > 0 {
			return s, fmt.Errorf("netup: gateway and DNS need a static address")
		}
		return s, nil
	}
	ip, subnet, err := net.ParseCIDR(c.Static)
	if err != nil || ip.To4() == nil {
		return s, fmt.Errorf("netup: static address %q is not IPv4 address/prefix", c.Static)
	}
	s.addr = &net.IPNet{IP: ip.To4(), Mask: subnet.Mask}
	if c.Gateway != "" {
		gw := net.ParseIP(c.Gateway).To4()
		if gw == nil || !subnet.Contains(gw) {
			return s, fmt.Errorf("netup: gateway %q is not an IPv4 address in %s", c.Gateway, subnet)
		}
		s.gateway = gw
	}
	for _, d := range c.DNS {
		ip := net.ParseIP(d)
		if ip == nil {
			return s, fmt.Errorf("netup: DNS server %q is not an IP address", d)
		}
		s.dns = append(s.dns, ip)
	}
	return s, nil
}
