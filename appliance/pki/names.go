package pki

import (
	"net"
	"os"
	"slices"
	"strings"

	"github.com/bonesync/bonesync/appliance/dnsname"
)

// PermittedRanges are the addresses a bonesync CA may ever certify: loopback,
// the private IPv4 ranges, link-local, unique-local and link-local IPv6. A box
// on a home network has no other address worth a certificate, and a CA that
// could not name a public address cannot be used against one.
var PermittedRanges = mustCIDRs(
	"127.0.0.0/8", "::1/128",
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
	"fc00::/7", "fe80::/10",
)

func mustCIDRs(ss ...string) []*net.IPNet {
	var out []*net.IPNet
	for _, s := range ss {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			panic(err)
		}
		out = append(out, n)
	}
	return out
}

// Names are the names and addresses a leaf certificate is issued for.
type Names struct {
	DNS []string
	IPs []net.IP
}

// HomeSuffixes are the domains home routers and RFC 8375 put a box's name
// under (besides mDNS's .local): bonesync.lan, bonesync.home.arpa,
// bonesync.internal, and those several ISPs' routers use (.home,
// .localdomain, .box, .home.lan). The config's extra_domains add more
// (fritz.box by default), and so does the search domain the router's DHCP
// gave when the CA is made (LearnedDomains).
var HomeSuffixes = []string{"local", "lan", "home.arpa", "internal", "home", "localdomain", "box", "home.lan"}

// LearnedDomains are the domains in resolvConf's search and domain lines
// (PID 1 writes the router's DHCP answer there; a PC's resolver has its
// own), at most 4 of at most 4 labels each: the box's name under them is
// what the household's devices will look it up by.
func LearnedDomains(resolvConf string) []string {
	b, err := os.ReadFile(resolvConf)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "search" && f[0] != "domain") {
			continue
		}
		for _, d := range f[1:] {
			d = strings.Trim(strings.ToLower(d), ".")
			labels := strings.Split(d, ".")
			if d == "" || len(labels) > 4 || slices.Contains(out, d) || slices.Contains(HomeSuffixes, d) ||
				slices.ContainsFunc(labels, func(l string) bool { return !dnsname.ValidLabel(l) }) {
				continue
			}
			if out = append(out, d); len(out) == 4 {
				return out
			}
		}
	}
	return out
}

// BoxDNSNames are the DNS names a box called hostname answers to, and the
// only ones a CA made for it is permitted to certify: the name alone,
// under each of HomeSuffixes and extra, and localhost.
func BoxDNSNames(hostname string, extra []string) []string {
	h := strings.ToLower(hostname)
	names := []string{h}
	for _, s := range append(slices.Clone(HomeSuffixes), extra...) {
		if s = strings.Trim(strings.ToLower(s), "."); s != "" && !slices.Contains(names, h+"."+s) {
			names = append(names, h+"."+s)
		}
	}
	return append(names, "localhost")
}

// BoxNames returns the names of a box called hostname with the given
// addresses, dropping addresses outside PermittedRanges (a leaf naming them
// would not verify against the CA).
func BoxNames(hostname string, extra []string, addrs []net.IP) Names {
	n := Names{DNS: BoxDNSNames(hostname, extra)}
	for _, ip := range addrs {
		if Permitted(ip) && !slices.ContainsFunc(n.IPs, ip.Equal) {
			n.IPs = append(n.IPs, ip)
		}
	}
	return n
}

// Permitted reports whether ip lies in PermittedRanges.
func Permitted(ip net.IP) bool {
	for _, r := range PermittedRanges {
		if r.Contains(ip) {
			return true
		}
	}
	return false
}

// InterfaceAddrs returns this machine's current interface addresses that a
// leaf may carry, loopback included.
func InterfaceAddrs() []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	var ips []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && Permitted(n.IP) {
			ips = append(ips, n.IP)
		}
	}
	return ips
}

// same reports whether a and b hold the same names and addresses, in any order.
func same(a, b Names) bool {
	if len(a.DNS) != len(b.DNS) || len(a.IPs) != len(b.IPs) {
		return false
	}
	for _, d := range a.DNS {
		if !slices.Contains(b.DNS, d) {
			return false
		}
	}
	for _, ip := range a.IPs {
		if !slices.ContainsFunc(b.IPs, ip.Equal) {
			return false
		}
	}
	return true
}
