package boot

import (
	"context"
	"fmt"
	"net"

	"github.com/bonesync/bonesync/appliance/mdns"
	"github.com/bonesync/bonesync/appliance/netup"
)

type netInfo struct {
	state *netup.State
	stop  func()
}

// bringUpNetwork brings up Ethernet, sets the hostname and announces the box
// as HOSTNAME.local with its HTTPS and SFTP services.
func bringUpNetwork(ctx context.Context, s *System) error {
	st, err := netup.Up(ctx, netup.Config{
		Hostname: s.Config.Hostname,
		Static:   s.Config.Address,
		Gateway:  s.Config.Gateway,
		DNS:      s.Config.DNS,
		Log:      s.Log,
	})
	if err != nil {
		return err
	}
	s.net.state = st
	var ips []net.IP
	for _, a := range st.Addrs {
		ips = append(ips, a.IP)
		fmt.Fprintf(s.Log, "bonesync: %s %s (%s)\n", st.Interface, a.String(), st.Method)
	}
	iface, _ := net.InterfaceByName(st.Interface)
	stop, err := mdns.Announce(ctx, s.Config.Hostname, ips, iface, []mdns.Service{
		{Type: "_https._tcp", Port: 443, Text: []string{"path=/"}},
		// _webdavs: WebDAV over TLS (RFC 6763's registry). Clients that find
		// _webdav try plain HTTP, which answers nothing but a redirect.
		{Type: "_webdavs._tcp", Port: 443, Text: []string{"path=/dav/"}},
		{Type: "_sftp-ssh._tcp", Port: 22},
	})
	if err != nil {
		return fmt.Errorf("mDNS: %w", err)
	}
	s.net.stop = stop
	fmt.Fprintf(s.Log, "bonesync: announced as %s.local\n", s.Config.Hostname)
	if s.Board.NoNTP == "" && len(s.Config.NTP) > 0 {
		go s.keepTime(ctx)
	}
	return nil
}
