// Package mdns announces the box on its network by multicast DNS (RFC 6762)
// and DNS-SD (RFC 6763), so that it is found as HOSTNAME.local, and its
// services as "bonesync on HOSTNAME", with no DNS server and no configuration.
// Claim probes for the name first (RFC 6762, section 8) and picks
// HOSTNAME-2, -3... if another device answers for it; Announce then answers
// queries, probes included, which defends the name. It sends no
// unsolicited announcements, and two boxes probing at the very same moment
// are not told apart (the simultaneous-probe tie-break of section 8.2).
package mdns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"

	hmdns "github.com/hashicorp/mdns"

	"github.com/bonesync/bonesync/appliance/dnsname"
)

// Service is one thing to announce, e.g.
// {Type: "_https._tcp", Port: 443, Text: []string{"path=/"}}.
type Service struct {
	// Type is the DNS-SD service type: "_name._tcp" or "_name._udp".
	Type string
	// Port is the port the service listens on.
	Port int
	// Text are the TXT record's strings, "key=value" by convention.
	Text []string
}

// Announce answers mDNS queries for HOSTNAME.local (A and AAAA records for
// ips) and, for each service, DNS-SD queries (PTR, SRV and TXT records for the
// instance "bonesync on HOSTNAME"), on iface or, if iface is nil, on every
// interface that is up and multicast-capable, until ctx ends or stop is
// called. stop may be called more than once; the sockets are closed when it
// returns.
//
// hostname is one DNS label, without ".local". It returns an error, having
// opened nothing, if an argument is bad; and an error if no socket could be
// opened on any of the interfaces.
func Announce(ctx context.Context, hostname string, ips []net.IP, iface *net.Interface, services []Service) (stop func(), err error) {
	z, err := newZone(hostname, ips, services)
	if err != nil {
		return nil, err
	}
	ifaces := []*net.Interface{iface}
	if iface == nil {
		if ifaces, err = multicastInterfaces(); err != nil {
			return nil, err
		}
	}
	quiet := log.New(io.Discard, "", 0)
	var servers []*hmdns.Server
	var errs []error
	for _, ifi := range ifaces {
		s, err := hmdns.NewServer(&hmdns.Config{Zone: z, Iface: ifi, Logger: quiet})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ifi.Name, err))
			continue
		}
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("mdns: %w", errors.Join(errs...))
	}
	done := make(chan struct{})
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			for _, s := range servers {
				s.Shutdown()
			}
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-done:
		}
	}()
	return stop, nil
}

// multicastInterfaces returns the interfaces that are up and can multicast,
// or an error if there are none.
func multicastInterfaces() ([]*net.Interface, error) {
	all, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("mdns: list interfaces: %w", err)
	}
	var ifs []*net.Interface
	for i := range all {
		if f := all[i].Flags; f&net.FlagUp != 0 && f&net.FlagMulticast != 0 {
			ifs = append(ifs, &all[i])
		}
	}
	if len(ifs) == 0 {
		return nil, errors.New("mdns: no interface is up and multicast-capable")
	}
	return ifs, nil
}

// checkService returns an error unless s has a DNS-SD type
// ("_name._tcp" or "_name._udp", name as in RFC 6335: 1 to 15 letters, digits
// and inner hyphens), a port, and TXT strings that fit in a TXT record.
func checkService(s Service) error {
	name, proto, ok := strings.Cut(s.Type, ".")
	if !ok || (proto != "_tcp" && proto != "_udp") || !strings.HasPrefix(name, "_") ||
		len(name) > 16 || !dnsname.ValidLabel(name[1:]) {
		return fmt.Errorf("mdns: service type %q is not _name._tcp or _name._udp", s.Type)
	}
	if s.Port < 1 || s.Port > 65535 {
		return fmt.Errorf("mdns: service %s: port %d out of range", s.Type, s.Port)
	}
	for _, t := range s.Text {
		if len(t) == 0 || len(t) > 255 {
			return fmt.Errorf("mdns: service %s: TXT string %q is empty or over 255 bytes", s.Type, t)
		}
	}
	return nil
}
