package mdns

import (
	"fmt"
	"net"
	"strings"

	hmdns "github.com/hashicorp/mdns"
	"github.com/miekg/dns"

	"github.com/bonesync/bonesync/appliance/dnsname"
)

// ttl is the time to live of the host's records, in seconds: the 120 s that
// RFC 6762 section 10 recommends, and that hashicorp/mdns gives the rest.
const ttl = 120

// zone answers for one host and its services: it is the hmdns.Zone of
// Announce. hmdns.MDNSService answers for one service only, and repeats the
// host's A and AAAA records in each; zone answers for the host itself, once,
// and hands every other question to each service.
type zone struct {
	host     string // "HOSTNAME.local."
	ips      []net.IP
	services []*hmdns.MDNSService
	// names maps each name the services answer for, lower-cased, to its
	// spelling in the services: mDNS names match without regard to case.
	names map[string]string
}

// newZone checks the arguments of Announce and returns the zone answering for
// them.
func newZone(hostname string, ips []net.IP, services []Service) (*zone, error) {
	if !dnsname.ValidLabel(hostname) {
		return nil, fmt.Errorf("mdns: hostname %q is not a DNS label", hostname)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("mdns: no address to announce for %s", hostname)
	}
	for _, ip := range ips {
		if ip.To16() == nil || ip.IsUnspecified() {
			return nil, fmt.Errorf("mdns: %v is not an address to announce", ip)
		}
	}
	z := &zone{host: hostname + ".local.", ips: ips, names: map[string]string{}}
	// The instance label "bonesync on HOSTNAME" in presentation format: the
	// spaces escaped, as miekg/dns writes the names it reads from queries.
	instance := `bonesync\ on\ ` + hostname
	for _, s := range services {
		if err := checkService(s); err != nil {
			return nil, err
		}
		svc := s.Type + ".local."
		if _, dup := z.names[strings.ToLower(svc)]; dup {
			return nil, fmt.Errorf("mdns: service %s announced twice", s.Type)
		}
		m, err := hmdns.NewMDNSService(instance, s.Type, "local.", z.host, s.Port, ips, s.Text)
		if err != nil {
			return nil, fmt.Errorf("mdns: service %s: %w", s.Type, err)
		}
		z.services = append(z.services, m)
		for _, n := range []string{"_services._dns-sd._udp.local.", svc, instance + "." + svc} {
			z.names[strings.ToLower(n)] = n
		}
	}
	return z, nil
}

// Records returns the answers to q: the host's addresses if q asks for the
// host, else every service's answer.
func (z *zone) Records(q dns.Question) []dns.RR {
	if strings.EqualFold(q.Name, z.host) {
		return z.hostRecords(q.Qtype)
	}
	name, ok := z.names[strings.ToLower(q.Name)]
	if !ok {
		return nil
	}
	q.Name = name
	var rrs []dns.RR
	for _, s := range z.services {
		rrs = append(rrs, s.Records(q)...)
	}
	return rrs
}

// hostRecords returns the host's A records, AAAA records, or both, as
// qtype asks.
func (z *zone) hostRecords(qtype uint16) []dns.RR {
	var rrs []dns.RR
	for _, ip := range z.ips {
		hdr := dns.RR_Header{Name: z.host, Class: dns.ClassINET, Ttl: ttl}
		if ip4 := ip.To4(); ip4 != nil {
			if qtype == dns.TypeA || qtype == dns.TypeANY {
				hdr.Rrtype = dns.TypeA
				rrs = append(rrs, &dns.A{Hdr: hdr, A: ip4})
			}
		} else if qtype == dns.TypeAAAA || qtype == dns.TypeANY {
			hdr.Rrtype = dns.TypeAAAA
			rrs = append(rrs, &dns.AAAA{Hdr: hdr, AAAA: ip.To16()})
		}
	}
	return rrs
}
