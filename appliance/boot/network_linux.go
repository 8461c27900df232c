package boot

import (
	"context"
	"fmt"
	"github.com/bonesync/bonesync/appliance/listen"
	"net"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/mdns"
	"github.com/bonesync/bonesync/appliance/netup"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/state"
)

// netInfo is the network as it stands: netup.Keep changes it.
type netInfo struct {
	mu    sync.Mutex
	state *netup.State
	stop  func() // ends the mDNS announcement
}

// State is the network's current state (nil before it came up).
func (n *netInfo) State() *netup.State {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state
}

// Stop ends the mDNS announcement (at shutdown).
func (n *netInfo) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stop != nil {
		n.stop()
		n.stop = nil
	}
}

// services are what the box announces over mDNS: each port's services
// (listen.Ports), at the port the server listens on (the default, on the
// board).
func services() []mdns.Service {
	var out []mdns.Service
	for _, p := range listen.Ports {
		for _, a := range p.Announce {
			out = append(out, mdns.Service{Type: a.Type, Port: p.DefaultPort(), Text: a.Text})
		}
	}
	return out
}

// bringUpNetwork brings up Ethernet, sets the hostname and announces the box
// as HOSTNAME.local with its HTTPS and SFTP services; then it keeps the
// address right (netup.Keep: lease renewal, DHCP after a fall-back), each
// new address announced again, and keeps the time (keepTime).
func bringUpNetwork(ctx context.Context, s *System) error {
	c := netup.Config{
		Hostname: s.Config.Hostname,
		Static:   s.Config.Address,
		Gateway:  s.Config.Gateway,
		DNS:      s.Config.DNS,
		Log:      s.Log,
	}
	st, err := netup.Up(ctx, c)
	if err != nil {
		return err
	}
	for _, a := range st.Addrs {
		fmt.Fprintf(s.Log, "bonesync: %s %s (%s)\n", st.Interface, a.String(), st.Method)
	}
	iface, _ := net.InterfaceByName(st.Interface)
	s.Hostname = s.claimName(ctx, iface)
	err = s.net.announce(ctx, s.Hostname, st)
	if err == nil {
		fmt.Fprintf(s.Log, "bonesync: announced as %s.local\n", s.Hostname)
	}
	go netup.Keep(ctx, c, st, func(st *netup.State) {
		fmt.Fprintf(s.Log, "bonesync: %s now %s (%s)\n", st.Interface, st.Addrs[0].String(), st.Method)
		if err := s.net.announce(ctx, s.Hostname, st); err != nil {
			fmt.Fprintf(s.Log, "bonesync: mDNS: %v\n", err)
		}
		// The server sees the new address at its next look (within 30 s)
		// and reissues its certificate for it.
	})
	if !s.Board.NoTimeServers && len(s.Config.NTP) > 0 {
		go s.keepTime(ctx)
	}
	if err != nil {
		return fmt.Errorf("mDNS: %w", err)
	}
	return nil
}

// claimName is the name the box goes by on the network. A box that has its
// CA keeps the name the CA was made for (a rename would need a new CA on
// every device) and defends it; a box without one yet probes for the
// config's name and takes NAME-2, -3... if another device answers for it,
// before the server makes its CA for that name.
func (s *System) claimName(ctx context.Context, iface *net.Interface) string {
	want := s.Config.Hostname
	if ca, err := pki.LoadCA(&state.Dir{Path: StateDir}); err == nil {
		if h := ca.Hostname(); h == want || mdns.ClaimedFor(h, want) {
			if taken, _ := mdns.Taken(ctx, h, iface); taken {
				fmt.Fprintf(s.Log, "bonesync: WARNING: another device on this network answers for %s.local; this box keeps the name its CA was made for\n", h)
			}
			return h
		}
		return want // the config names another box: provision says what to do
	}
	name, err := mdns.Claim(ctx, want, iface)
	if err != nil {
		fmt.Fprintf(s.Log, "bonesync: %v; keeping %s\n", err, want)
		return want
	}
	if name != want {
		fmt.Fprintf(s.Log, "bonesync: another device on this network is %s.local; this box is %s.local\n", want, name)
		if err := unix.Sethostname([]byte(name)); err != nil {
			fmt.Fprintf(s.Log, "bonesync: set hostname %s: %v\n", name, err)
		}
	}
	return name
}

// announce records st and announces its addresses over mDNS, in place of
// any earlier announcement.
func (n *netInfo) announce(ctx context.Context, host string, st *netup.State) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state = st
	if n.stop != nil {
		n.stop()
		n.stop = nil
	}
	var ips []net.IP
	for _, a := range st.Addrs {
		ips = append(ips, a.IP)
	}
	iface, _ := net.InterfaceByName(st.Interface)
	stop, err := mdns.Announce(ctx, host, ips, iface, services())
	if err != nil {
		return err
	}
	n.stop = stop
	return nil
}
