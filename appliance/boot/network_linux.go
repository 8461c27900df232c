package boot

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/bonesync/bonesync/appliance/mdns"
	"github.com/bonesync/bonesync/appliance/netup"
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

// services are what the box announces over mDNS.
var services = []mdns.Service{
	{Type: "_https._tcp", Port: 443, Text: []string{"path=/"}},
	// _webdavs: WebDAV over TLS (RFC 6763's registry). Clients that find
	// _webdav try plain HTTP, which answers nothing but a redirect.
	{Type: "_webdavs._tcp", Port: 443, Text: []string{"path=/dav/"}},
	{Type: "_sftp-ssh._tcp", Port: 22},
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
	err = s.net.announce(ctx, s.Config.Hostname, st)
	if err == nil {
		fmt.Fprintf(s.Log, "bonesync: announced as %s.local\n", s.Config.Hostname)
	}
	go netup.Keep(ctx, c, st, func(st *netup.State) {
		fmt.Fprintf(s.Log, "bonesync: %s now %s (%s)\n", st.Interface, st.Addrs[0].String(), st.Method)
		if err := s.net.announce(ctx, s.Config.Hostname, st); err != nil {
			fmt.Fprintf(s.Log, "bonesync: mDNS: %v\n", err)
		}
		// The server sees the new address at its next look (within 30 s)
		// and reissues its certificate for it.
	})
	if s.Board.NoNTP == "" && len(s.Config.NTP) > 0 {
		go s.keepTime(ctx)
	}
	if err != nil {
		return fmt.Errorf("mDNS: %w", err)
	}
	return nil
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
	stop, err := mdns.Announce(ctx, host, ips, iface, services)
	if err != nil {
		return err
	}
	n.stop = stop
	return nil
}
