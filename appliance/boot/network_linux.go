package boot

import (
	"context"
	"fmt"
	"net"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/listen"
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
		s.Log.Info("address", "iface", st.Interface, "addr", a.String(), "method", st.Method)
	}
	iface, _ := net.InterfaceByName(st.Interface)
	s.Hostname = s.claimName(ctx, iface)
	s.usb.announce(ctx, s.Hostname)
	err = s.net.announce(ctx, s.Hostname, st)
	if err == nil {
		s.Log.Info("announced over mDNS", "name", s.Hostname+".local")
	}
	go netup.Keep(ctx, c, st, func(st *netup.State) {
		s.Log.Info("address changed", "iface", st.Interface, "addr", st.Addrs[0].String(), "method", st.Method)
		if err := s.net.announce(ctx, s.Hostname, st); err != nil {
			s.Log.Error("mDNS: not announced", "err", err)
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
				s.Log.Warn("another device on this network answers for this box's name; the box keeps the name its CA was made for", "name", h+".local")
			}
			return h
		}
		return want // the config names another box: provision says what to do
	}
	name, err := mdns.Claim(ctx, want, iface)
	if err != nil {
		s.Log.Warn("the name could not be claimed: keeping it", "name", want, "err", err)
		return want
	}
	if name != want {
		s.Log.Warn("another device on this network has the name: this box takes another", "taken", want+".local", "name", name+".local")
		if err := unix.Sethostname([]byte(name)); err != nil {
			s.Log.Error("hostname not set", "name", name, "err", err)
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
