package netup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/u-root/u-root/pkg/dhclient"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// firstResend is how long the DHCP client waits before it resends a request;
// the wait doubles each time, within Config.DHCPTimeout.
const firstResend = 2 * time.Second

// Up brings up loopback and one Ethernet interface (Config.Interface, or the
// one choose picks), sets the hostname if Config names one, and addresses the
// interface by the first of these that works:
//
//   - DHCPv4, within Config.DHCPTimeout (no carrier in that time counts as no
//     lease): the leased address, the routes or router it names, and its name
//     servers written to Config.ResolvConf;
//   - Config.Static, with its Gateway and DNS;
//   - an IPv4 link-local address in 169.254.0.0/16 derived from the MAC.
//
// It returns what it configured. A bad Config is refused before anything is
// changed; a name-server file that cannot be written is only logged. If ctx
// ends, Up stops and returns ctx's error. Up configures once; Keep then
// keeps the address right.
func Up(ctx context.Context, c Config) (*State, error) {
	st, err := c.check()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("netup: %w", err)
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return nil, fmt.Errorf("netup: loopback: %w", err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return nil, fmt.Errorf("netup: loopback up: %w", err)
	}
	name := c.Interface
	if name == "" {
		if name, err = pick(); err != nil {
			return nil, err
		}
	}
	l, err := netlink.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("netup: interface %s: %w", name, err)
	}
	if c.Hostname != "" {
		if err := unix.Sethostname([]byte(c.Hostname)); err != nil {
			return nil, fmt.Errorf("netup: set hostname %q: %w", c.Hostname, err)
		}
		c.log("hostname set", "hostname", c.Hostname)
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return nil, fmt.Errorf("netup: %s up: %w", name, err)
	}

	s, err := upDHCP(ctx, l, c)
	if s != nil || err != nil {
		return s, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("netup: %w", err)
	}
	if st.addr != nil {
		return upStatic(l, st, c)
	}
	return upLinkLocal(l, c)
}

// pick lists the interfaces and returns the one choose picks.
func pick() (string, error) {
	ls, err := netlink.LinkList()
	if err != nil {
		return "", fmt.Errorf("netup: list interfaces: %w", err)
	}
	var cs []link
	for _, l := range ls {
		a := l.Attrs()
		cs = append(cs, link{Name: a.Name, MAC: a.HardwareAddr, Loopback: a.Flags&net.FlagLoopback != 0})
	}
	return choose(cs)
}

// upDHCP waits for l's carrier and a DHCPv4 lease, both within
// c.DHCPTimeout, and applies the lease. It returns nil, nil if there was no
// carrier or no lease, and an error only if a lease could not be applied or
// ctx ended.
func upDHCP(ctx context.Context, l netlink.Link, c Config) (*State, error) {
	name := l.Attrs().Name
	// IfUp sets the link up and waits for its operational state to be up:
	// a carrier, for Ethernet.
	l, err := dhclient.IfUp(name, c.dhcpTimeout())
	if err != nil {
		c.log("no carrier, no DHCP", "iface", name, "err", err)
		return nil, nil
	}
	c.log("asking DHCP", "iface", name, "for_up_to", c.dhcpTimeout())
	lease, err := requestLease(ctx, l, c, c.dhcpTimeout())
	if ctx.Err() != nil {
		return nil, fmt.Errorf("netup: DHCP on %s: %w", name, ctx.Err())
	}
	if lease == nil {
		c.log("no DHCP lease", "iface", name, "err", err)
		return nil, nil
	}
	return applyLease(l, lease, c)
}

// requestLease asks for a DHCPv4 lease for up to timeout, resending after
// 2 s, 4 s, 8 s...; nil if none came.
func requestLease(ctx context.Context, l netlink.Link, c Config, timeout time.Duration) (dhclient.Lease, error) {
	deadline := time.Now().Add(timeout)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	dc := dhclient.Config{
		Timeout: min(firstResend, time.Until(deadline)),
		Retries: -1, // resend until dctx ends
	}
	if c.Hostname != "" {
		dc.Modifiers4 = []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptHostName(c.Hostname))}
	}
	var lease dhclient.Lease
	var err error
	for r := range dhclient.SendRequests(dctx, []netlink.Link{l}, true, false, dc, time.Until(deadline)) {
		if r.Err != nil {
			err = r.Err
			continue
		}
		lease = r.Lease
	}
	return lease, err
}

// applyLease puts lease's address, routes and name servers in place, as
// dhclient's Packet4.Configure does, but writes name servers to
// c.ResolvConf and only if the lease names any.
func applyLease(l netlink.Link, lease dhclient.Lease, c Config) (*State, error) {
	m, _ := lease.Message()
	if m == nil {
		return nil, errors.New("netup: DHCP lease is not DHCPv4")
	}
	p := dhclient.NewPacket4(l, m)
	a := l.Attrs()
	addr := p.Lease()
	if err := netlink.AddrReplace(l, &netlink.Addr{IPNet: addr}); err != nil {
		return nil, fmt.Errorf("netup: %s: add %s: %w", a.Name, addr, err)
	}
	s := &State{Interface: a.Name, Addrs: []net.IPNet{*addr}, Method: MethodDHCP,
		Lease: m.IPAddressLeaseTime(time.Hour)}
	// A server that says 0 (or nearly) would make a request storm.
	s.Renew = max(m.IPAddressRenewalTime(s.Lease/2), 10*time.Second)
	// RFC 3442: classless static routes, if present, replace the router
	// option.
	if routes := m.ClasslessStaticRoute(); routes != nil {
		for _, rt := range routes {
			r := &netlink.Route{LinkIndex: a.Index, Dst: rt.Dest, Gw: rt.Router}
			if r.Gw == nil || r.Gw.Equal(net.IPv4zero) {
				r.Gw, r.Scope = nil, netlink.SCOPE_LINK
			}
			if err := netlink.RouteReplace(r); err != nil {
				return nil, fmt.Errorf("netup: %s: route %s: %w", a.Name, r, err)
			}
			if ones, _ := rt.Dest.Mask.Size(); ones == 0 && r.Gw != nil {
				s.Gateway = r.Gw
			}
		}
	} else if gw := m.Router(); len(gw) > 0 {
		if err := netlink.RouteReplace(&netlink.Route{LinkIndex: a.Index, Gw: gw[0]}); err != nil {
			return nil, fmt.Errorf("netup: %s: default route via %s: %w", a.Name, gw[0], err)
		}
		s.Gateway = gw[0]
	}
	ns, search, domain := p.GatherDNSSettings()
	writeDNS(c, ns, search, domain)
	c.log("DHCP lease", "iface", a.Name, "addr", addr, "gateway", s.Gateway, "dns", ns)
	return s, nil
}

// upStatic puts the static address, gateway and name servers in place.
func upStatic(l netlink.Link, st static, c Config) (*State, error) {
	a := l.Attrs()
	if err := netlink.AddrReplace(l, &netlink.Addr{IPNet: st.addr}); err != nil {
		return nil, fmt.Errorf("netup: %s: add %s: %w", a.Name, st.addr, err)
	}
	if st.gateway != nil {
		if err := netlink.RouteReplace(&netlink.Route{LinkIndex: a.Index, Gw: st.gateway}); err != nil {
			return nil, fmt.Errorf("netup: %s: default route via %s: %w", a.Name, st.gateway, err)
		}
	}
	writeDNS(c, st.dns, nil, "")
	c.log("static address", "iface", a.Name, "addr", st.addr, "gateway", st.gateway, "dns", st.dns)
	return &State{Interface: a.Name, Addrs: []net.IPNet{*st.addr}, Method: MethodStatic, Gateway: st.gateway}, nil
}

// upLinkLocal puts the link-local address derived from l's MAC (or, lacking
// one, its name) in place. The kernel adds the 169.254.0.0/16 route.
//
// RFC 3927's ARP probe for a conflicting host is not done: two boxes whose
// MACs hash alike would both take the address.
func upLinkLocal(l netlink.Link, c Config) (*State, error) {
	a := l.Attrs()
	seed := []byte(a.HardwareAddr)
	if len(seed) == 0 {
		seed = []byte(a.Name)
	}
	addr := &net.IPNet{IP: linkLocal(seed), Mask: net.CIDRMask(16, 32)}
	if err := netlink.AddrReplace(l, &netlink.Addr{IPNet: addr, Scope: int(netlink.SCOPE_LINK)}); err != nil {
		return nil, fmt.Errorf("netup: %s: add %s: %w", a.Name, addr, err)
	}
	c.log("link-local address", "iface", a.Name, "addr", addr)
	return &State{Interface: a.Name, Addrs: []net.IPNet{*addr}, Method: MethodLinkLocal}, nil
}

// writeDNS writes name servers, search list and domain to c.ResolvConf, if
// there is at least one name server; otherwise it leaves the file alone. A
// file that cannot be written is logged, not fatal: the box is on the network
// without it, and mDNS needs no name server.
func writeDNS(c Config, ns []net.IP, search []string, domain string) {
	if len(ns) == 0 {
		return
	}
	if err := dhclient.WriteDNSSettings(ns, search, domain, c.resolvConf()); err != nil {
		c.log("DNS settings not written", "err", err)
	}
}

// Keep keeps the interface's address right after Up, until ctx ends:
//
//   - a DHCP lease is renewed at its renewal time (a new request; the server
//     may give another address), retried at half the time left, and when it
//     expires unrenewed the address is removed and the box falls back to the
//     static or link-local address as Up would;
//   - after a fall-back, DHCP is asked again in the background (after
//     c.RetryEvery, doubling up to 5 minutes; a lease request lasts
//     c.DHCPTimeout), and a lease replaces the fall-back address.
//
// changed is called with the new State each time the address changes.
func Keep(ctx context.Context, c Config, st *State, changed func(*State)) {
	cur := *st
	retry := c.retryEvery()
	var expires time.Time
	if cur.Method == MethodDHCP {
		expires = time.Now().Add(cur.Lease)
	}
	for {
		wait := retry
		if cur.Method == MethodDHCP {
			wait = cur.Renew
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		l, err := netlink.LinkByName(cur.Interface)
		if err != nil {
			c.log("interface gone", "iface", cur.Interface, "err", err)
			continue
		}
		lease, _ := requestLease(ctx, l, c, c.dhcpTimeout())
		if ctx.Err() != nil {
			return
		}
		var next *State
		switch {
		case lease != nil:
			// The old address goes first: removing a subnet's primary
			// address would take a new one in the same subnet with it.
			if addr := leaseAddr(l, lease); addr == nil || len(cur.Addrs) != 1 || addr.String() != cur.Addrs[0].String() {
				removeAddrs(l, &cur)
			}
			if next, err = applyLease(l, lease, c); err != nil {
				// The old address may be gone: never stay without one.
				c.log("lease not applied: falling back", "err", err, "retry_in", c.retryEvery())
				if next, err = fallBack(l, c); err != nil {
					c.log("no fall-back address", "err", err)
					continue
				}
				retry = c.retryEvery()
				break
			}
			retry, expires = c.retryEvery(), time.Now().Add(next.Lease)
		case cur.Method != MethodDHCP:
			retry = min(2*retry, 5*time.Minute)
			continue
		case time.Now().Before(expires):
			// Not renewed yet: ask again at half the time left (RFC 2131,
			// 4.4.5), at least a minute later.
			left := time.Until(expires)
			cur.Renew = min(max(left/2, time.Minute), left)
			c.log("lease not renewed", "iface", cur.Interface, "left", time.Until(expires).Round(time.Second))
			continue
		default:
			c.log("DHCP lease expired", "iface", cur.Interface)
			removeAddrs(l, &cur)
			if next, err = fallBack(l, c); err != nil {
				c.log("no fall-back address", "err", err)
				continue
			}
		}
		was := cur
		cur = *next
		if !sameAddrs(&was, next) {
			c.log("address changed", "iface", cur.Interface, "addr", cur.Addrs[0].String(), "method", cur.Method, "was", was.Addrs[0].String(), "was_method", was.Method)
			changed(next)
		}
	}
}

// leaseAddr is the address a lease gives.
func leaseAddr(l netlink.Link, lease dhclient.Lease) *net.IPNet {
	m, _ := lease.Message()
	if m == nil {
		return nil
	}
	return dhclient.NewPacket4(l, m).Lease()
}

// fallBack is what Up does without a lease: the static address, else
// link-local.
func fallBack(l netlink.Link, c Config) (*State, error) {
	st, err := c.check()
	if err != nil {
		return nil, err
	}
	if st.addr != nil {
		return upStatic(l, st, c)
	}
	return upLinkLocal(l, c)
}

func removeAddrs(l netlink.Link, st *State) {
	for _, a := range st.Addrs {
		netlink.AddrDel(l, &netlink.Addr{IPNet: &a})
	}
}

func sameAddrs(a, b *State) bool {
	if len(a.Addrs) != len(b.Addrs) {
		return false
	}
	for i := range a.Addrs {
		if a.Addrs[i].String() != b.Addrs[i].String() {
			return false
		}
	}
	return true
}
