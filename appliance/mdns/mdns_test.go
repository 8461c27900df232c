package mdns

import (
	"context"
	"net"
	"sort"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

var (
	testIPs      = []net.IP{net.ParseIP("10.1.2.3"), net.ParseIP("2001:db8::10")}
	testServices = []Service{
		{Type: "_https._tcp", Port: 443, Text: []string{"path=/"}},
		{Type: "_sftp-ssh._tcp", Port: 22},
	}
)

func TestAnnounceRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		host     string
		ips      []net.IP
		services []Service
	}{
		{"empty hostname", "", testIPs, testServices},
		{"hostname with domain", "bbb.local", testIPs, testServices},
		{"hostname with space", "b b", testIPs, testServices},
		{"no addresses", "bbb", nil, testServices},
		{"unspecified address", "bbb", []net.IP{net.IPv4zero}, testServices},
		{"bad address", "bbb", []net.IP{{1, 2}}, testServices},
		{"type without underscore", "bbb", testIPs, []Service{{Type: "https._tcp", Port: 443}}},
		{"type without protocol", "bbb", testIPs, []Service{{Type: "_https", Port: 443}}},
		{"type with bad protocol", "bbb", testIPs, []Service{{Type: "_https._sctp", Port: 443}}},
		{"type with domain", "bbb", testIPs, []Service{{Type: "_https._tcp.local", Port: 443}}},
		{"type too long", "bbb", testIPs, []Service{{Type: "_abcdefghijklmnop._tcp", Port: 443}}},
		{"no port", "bbb", testIPs, []Service{{Type: "_https._tcp"}}},
		{"port too big", "bbb", testIPs, []Service{{Type: "_https._tcp", Port: 65536}}},
		{"empty TXT string", "bbb", testIPs, []Service{{Type: "_https._tcp", Port: 443, Text: []string{""}}}},
		{"TXT string too long", "bbb", testIPs, []Service{{Type: "_https._tcp", Port: 443, Text: []string{strings.Repeat("x", 256)}}}},
		{"type twice", "bbb", testIPs, []Service{{Type: "_https._tcp", Port: 443}, {Type: "_HTTPS._tcp", Port: 8443}}},
	} {
		stop, err := Announce(ctx, tc.host, tc.ips, nil, tc.services)
		if err == nil {
			stop()
			t.Errorf("%s: Announce(%q, %v, nil, %v) = nil error, want one", tc.name, tc.host, tc.ips, tc.services)
		}
	}
}

// answers returns the records in rrs as sorted strings, without TTLs.
func answers(rrs []dns.RR) []string {
	var s []string
	for _, rr := range rrs {
		rr.Header().Ttl = 0
		s = append(s, strings.Join(strings.Fields(rr.String()), " "))
	}
	sort.Strings(s)
	return s
}

func TestZoneRecords(t *testing.T) {
	z, err := newZone("bbb", testIPs, testServices)
	if err != nil {
		t.Fatal(err)
	}
	const https = `bonesync\ on\ bbb._https._tcp.local.`
	for _, tc := range []struct {
		name  string
		qtype uint16
		want  []string
	}{
		{"bbb.local.", dns.TypeA, []string{"bbb.local. 0 IN A 10.1.2.3"}},
		{"BBB.Local.", dns.TypeA, []string{"bbb.local. 0 IN A 10.1.2.3"}},
		{"bbb.local.", dns.TypeAAAA, []string{"bbb.local. 0 IN AAAA 2001:db8::10"}},
		{"bbb.local.", dns.TypeANY, []string{"bbb.local. 0 IN A 10.1.2.3", "bbb.local. 0 IN AAAA 2001:db8::10"}},
		{"bbb.local.", dns.TypeMX, nil},
		{"other.local.", dns.TypeA, nil},
		{"_services._dns-sd._udp.local.", dns.TypePTR, []string{
			"_services._dns-sd._udp.local. 0 IN PTR _https._tcp.local.",
			"_services._dns-sd._udp.local. 0 IN PTR _sftp-ssh._tcp.local.",
		}},
		{"_https._tcp.local.", dns.TypePTR, []string{
			`_https._tcp.local. 0 IN PTR ` + https,
			https + ` 0 IN SRV 10 1 443 bbb.local.`,
			https + ` 0 IN TXT "path=/"`,
			"bbb.local. 0 IN A 10.1.2.3",
			"bbb.local. 0 IN AAAA 2001:db8::10",
		}},
		{`BONESYNC\ ON\ BBB._https._tcp.local.`, dns.TypeSRV, []string{
			https + ` 0 IN SRV 10 1 443 bbb.local.`,
			"bbb.local. 0 IN A 10.1.2.3",
			"bbb.local. 0 IN AAAA 2001:db8::10",
		}},
		{"_http._tcp.local.", dns.TypePTR, nil},
	} {
		got := answers(z.Records(dns.Question{Name: tc.name, Qtype: tc.qtype, Qclass: dns.ClassINET}))
		want := append([]string(nil), tc.want...)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("Records(%s %s) = %q, want %q", tc.name, dns.TypeToString[tc.qtype], got, want)
		}
	}
}

func TestZoneWithoutServices(t *testing.T) {
	z, err := newZone("bbb", testIPs[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := answers(z.Records(dns.Question{Name: "bbb.local.", Qtype: dns.TypeA})); len(got) != 1 {
		t.Errorf("Records(bbb.local. A) = %q, want one A record", got)
	}
	if got := z.Records(dns.Question{Name: "_services._dns-sd._udp.local.", Qtype: dns.TypePTR}); got != nil {
		t.Errorf("Records(_services._dns-sd._udp.local. PTR) = %v, want none", got)
	}
}

// A CA made for a name Claim gave keeps that name; another box's name is
// not taken for one.
func TestClaimedFor(t *testing.T) {
	for name, want := range map[string]bool{"bonesync-2": true, "bonesync-17": true, "bonesync-backup": false, "bonesync-1": false, "bonesync": false, "other-2": false} {
		if got := ClaimedFor(name, "bonesync"); got != want {
			t.Errorf("ClaimedFor(%q, bonesync) = %v, want %v", name, got, want)
		}
	}
}
