package mdns

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/ipv4"
)

// Probing (RFC 6762, section 8.1): three queries for the name, 250 ms
// apart; an answer from anyone means the name is taken.
const (
	probes        = 3
	probeInterval = 250 * time.Millisecond
	maxSuffix     = 99
)

// Claim finds a name for the box on iface: hostname if no other device
// answers for HOSTNAME.local, else the first of hostname-2, hostname-3, ...
// that nobody answers for (RFC 6762, section 9: a host whose probe meets an
// answer picks another name). Announce then defends it: it answers every
// query for the name, probes included, so a device that comes later finds
// it taken.
func Claim(ctx context.Context, hostname string, iface *net.Interface) (string, error) {
	for i := 1; i <= maxSuffix; i++ {
		name := hostname
		if i > 1 {
			name = suffixed(hostname, i)
		}
		taken, err := Taken(ctx, name, iface)
		if err != nil {
			return "", err
		}
		if !taken {
			return name, nil
		}
	}
	return "", fmt.Errorf("mdns: %s and %s-2 to -%d are all taken", hostname, hostname, maxSuffix)
}

// suffixed is hostname-i, shortened to stay one DNS label (63 bytes).
func suffixed(hostname string, i int) string {
	s := "-" + strconv.Itoa(i)
	if len(hostname)+len(s) > 63 {
		hostname = strings.TrimRight(hostname[:63-len(s)], "-")
	}
	return hostname + s
}

// ClaimedFor reports whether name is one Claim can make from hostname:
// hostname-2, hostname-3... (hostname-backup is another name).
func ClaimedFor(name, hostname string) bool {
	for i := 2; i <= maxSuffix; i++ {
		if name == suffixed(hostname, i) {
			return true
		}
	}
	return false
}

// Taken probes for NAME.local on iface and reports whether another device
// answers for it.
func Taken(ctx context.Context, name string, iface *net.Interface) (bool, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		return false, fmt.Errorf("mdns: probe: %w", err)
	}
	defer c.Close()
	if iface != nil {
		if err := ipv4.NewPacketConn(c).SetMulticastInterface(iface); err != nil {
			return false, fmt.Errorf("mdns: probe on %s: %w", iface.Name, err)
		}
	}
	fqdn := name + ".local."
	q := new(dns.Msg)
	q.SetQuestion(fqdn, dns.TypeANY)
	q.Question[0].Qclass |= 1 << 15 // QU: answer me directly
	q.RecursionDesired = false
	q.Id = 0
	b, err := q.Pack()
	if err != nil {
		return false, err
	}
	group := &net.UDPAddr{IP: net.IPv4(224, 0, 0, 251), Port: 5353}
	buf := make([]byte, 9000)
	for i := 0; i < probes; i++ {
		if _, err := c.WriteToUDP(b, group); err != nil {
			return false, fmt.Errorf("mdns: probe %s: %w", fqdn, err)
		}
		deadline := time.Now().Add(probeInterval)
		for {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			c.SetReadDeadline(deadline)
			n, _, err := c.ReadFromUDP(buf)
			if err != nil {
				break // the interval is over
			}
			var r dns.Msg
			if r.Unpack(buf[:n]) != nil || !r.Response {
				continue
			}
			for _, rr := range append(r.Answer, r.Extra...) {
				if strings.EqualFold(rr.Header().Name, fqdn) {
					return true, nil
				}
			}
		}
	}
	return false, nil
}
