package netup

import (
	"fmt"
	"hash/fnv"
	"net"
	"sort"
	"strings"
)

// link is what choose needs to know about an interface.
type link struct {
	Name     string
	MAC      net.HardwareAddr
	Loopback bool
}

// choose returns the name of the interface to configure: the first by name
// of eth*, then of en*, then of any other non-loopback interface with a MAC
// address. It fails if there is none.
func choose(links []link) (string, error) {
	rank := func(l link) int {
		switch {
		case l.Loopback:
			return -1
		case strings.HasPrefix(l.Name, "eth"):
			return 0
		case strings.HasPrefix(l.Name, "en"):
			return 1
		case len(l.MAC) > 0:
			return 2
		}
		return -1
	}
	var c []link
	for _, l := range links {
		if rank(l) >= 0 {
			c = append(c, l)
		}
	}
	if len(c) == 0 {
		return "", fmt.Errorf("netup: no Ethernet-like interface among %d", len(links))
	}
	sort.Slice(c, func(i, j int) bool {
		if ri, rj := rank(c[i]), rank(c[j]); ri != rj {
			return ri < rj
		}
		return c[i].Name < c[j].Name
	})
	return c[0].Name, nil
}

// linkLocal returns the IPv4 link-local address derived from seed (the MAC
// address): always the same for the same seed, and always in
// 169.254.1.0-169.254.254.255, the range RFC 3927 section 2.1 allows.
func linkLocal(seed []byte) net.IP {
	h := fnv.New32a()
	h.Write(seed)
	n := h.Sum32() % (254 * 256)
	return net.IPv4(169, 254, byte(1+n/256), byte(n%256)).To4()
}
