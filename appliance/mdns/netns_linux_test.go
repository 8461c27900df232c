package mdns

import (
	"context"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	hmdns "github.com/hashicorp/mdns"
	"github.com/miekg/dns"
)

// netnsEnv is set in the child that runs a test in its own network namespace.
const netnsEnv = "BONESYNC_MDNS_IN_NETNS"

// inFreshNetns runs the calling test again, in a child process in a new,
// empty network namespace (which disappears with the child), and reports
// whether the caller is that child and should go on. In the parent it
// reports the child's outcome as the test's, and returns false.
func inFreshNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == "1" {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	t.Logf("in a fresh network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child did not pass %s", t.Name())
	}
	return false
}

// sh runs a command and fails the test if it fails.
func sh(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// lookup browses for service on iface and returns the entries found in d.
func lookup(t *testing.T, service string, iface *net.Interface, d time.Duration) []*hmdns.ServiceEntry {
	t.Helper()
	ch := make(chan *hmdns.ServiceEntry, 16)
	err := hmdns.Query(&hmdns.QueryParam{
		Service:     service,
		Domain:      "local",
		Timeout:     d,
		Interface:   iface,
		Entries:     ch,
		DisableIPv6: true, // lo has no IPv6 multicast route here
		Logger:      log.New(io.Discard, "", 0),
	})
	if err != nil {
		t.Fatalf("Query(%s): %v", service, err)
	}
	close(ch)
	var es []*hmdns.ServiceEntry
	for e := range ch {
		es = append(es, e)
	}
	return es
}

// ask sends one mDNS question from an ephemeral port to 224.0.0.251:5353
// and returns the answers of the first response, or nil if none came in d.
func ask(t *testing.T, name string, qtype uint16, d time.Duration) []dns.RR {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	q.RecursionDesired = false
	b, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteToUDP(b, &net.UDPAddr{IP: net.IPv4(224, 0, 0, 251), Port: 5353}); err != nil {
		t.Fatalf("send query: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 9000)
	n, _, err := c.ReadFromUDP(buf)
	if err != nil {
		return nil
	}
	var r dns.Msg
	if err := r.Unpack(buf[:n]); err != nil {
		t.Fatalf("unpack response: %v", err)
	}
	return r.Answer
}

func TestAnnounceInNamespace(t *testing.T) {
	if !inFreshNetns(t) {
		return
	}
	ctx := context.Background()
	ips := []net.IP{net.ParseIP("10.1.2.3"), net.ParseIP("2001:db8::10")}
	services := []Service{
		{Type: "_https._tcp", Port: 443, Text: []string{"path=/"}},
		{Type: "_sftp-ssh._tcp", Port: 22},
	}

	// A fresh namespace: lo is down and nothing can multicast.
	if stop, err := Announce(ctx, "bbb-test", ips, nil, services); err == nil {
		stop()
		t.Fatal("Announce with no multicast interface = nil error, want one")
	}
	sh(t, "ip", "link", "set", "lo", "up", "multicast", "on")
	sh(t, "ip", "route", "add", "224.0.0.0/4", "dev", "lo")
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		iface *net.Interface
	}{{"lo", lo}, {"all interfaces", nil}} {
		stop, err := Announce(ctx, "bbb-test", ips, tc.iface, services)
		if err != nil {
			t.Fatalf("%s: Announce: %v", tc.name, err)
		}
		es := lookup(t, "_https._tcp", lo, 500*time.Millisecond)
		if len(es) != 1 {
			t.Fatalf("%s: Lookup(_https._tcp) found %d entries, want 1", tc.name, len(es))
		}
		e := es[0]
		if e.Port != 443 || e.Host != "bbb-test.local." || !e.AddrV4.Equal(ips[0]) || !e.AddrV6.Equal(ips[1]) ||
			e.Info != "path=/" || e.Name != `bonesync\ on\ bbb-test._https._tcp.local.` {
			t.Errorf("%s: Lookup(_https._tcp) = %+v, want port 443 on bbb-test.local. at %v, path=/", tc.name, e, ips)
		}
		if es := lookup(t, "_sftp-ssh._tcp", lo, 500*time.Millisecond); len(es) != 1 || es[0].Port != 22 {
			t.Errorf("%s: Lookup(_sftp-ssh._tcp) = %v, want one entry on port 22", tc.name, es)
		}

		for _, q := range []struct {
			name  string
			qtype uint16
			want  string
		}{
			{"bbb-test.local.", dns.TypeA, "10.1.2.3"},
			{"BBB-Test.local.", dns.TypeA, "10.1.2.3"},
			{"bbb-test.local.", dns.TypeAAAA, "2001:db8::10"},
			{`bonesync\ on\ bbb-test._https._tcp.local.`, dns.TypeSRV, "443 bbb-test.local."},
		} {
			rrs := ask(t, q.name, q.qtype, time.Second)
			if len(rrs) == 0 || rrs[0].Header().Rrtype != q.qtype || !strings.HasSuffix(rrs[0].String(), q.want) {
				t.Errorf("%s: query %s %s answered %v, want %s", tc.name, q.name, dns.TypeToString[q.qtype], rrs, q.want)
			}
		}
		if rrs := ask(t, "other.local.", dns.TypeA, 300*time.Millisecond); rrs != nil {
			t.Errorf("%s: query other.local. A answered %v, want silence", tc.name, rrs)
		}

		stop()
		stop() // twice is harmless
		if rrs := ask(t, "bbb-test.local.", dns.TypeA, 300*time.Millisecond); rrs != nil {
			t.Errorf("%s: after stop, query answered %v, want silence", tc.name, rrs)
		}
	}

	// The end of ctx stops the announcement too.
	cctx, cancel := context.WithCancel(ctx)
	if _, err := Announce(cctx, "bbb-test", ips, lo, nil); err != nil {
		t.Fatalf("Announce: %v", err)
	}
	if rrs := ask(t, "bbb-test.local.", dns.TypeA, time.Second); len(rrs) != 1 {
		t.Errorf("with no services, query bbb-test.local. A answered %v, want one A", rrs)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for ask(t, "bbb-test.local.", dns.TypeA, 200*time.Millisecond) != nil {
		if time.Now().After(deadline) {
			t.Fatal("still answering 2s after ctx ended")
		}
	}
}

// Two boxes with the same name on one link: the second to come probes,
// finds the name answered, and takes NAME-2; a third takes NAME-3; a free
// name is kept. Each box then answers for its own name.
func TestClaimInNamespace(t *testing.T) {
	if !inFreshNetns(t) {
		return
	}
	sh(t, "ip", "link", "set", "lo", "up", "multicast", "on")
	sh(t, "ip", "route", "add", "224.0.0.0/4", "dev", "lo")
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if name, err := Claim(ctx, "bbb-dup", lo); err != nil || name != "bbb-dup" {
		t.Fatalf("Claim on an empty link = %q, %v; want bbb-dup", name, err)
	}
	first, err := Announce(ctx, "bbb-dup", []net.IP{net.ParseIP("10.1.2.3")}, lo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first()
	second, err := Claim(ctx, "bbb-dup", lo)
	if err != nil || second != "bbb-dup-2" {
		t.Fatalf("the second box's Claim = %q, %v; want bbb-dup-2", second, err)
	}
	stop, err := Announce(ctx, second, []net.IP{net.ParseIP("10.1.2.4")}, lo, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if third, err := Claim(ctx, "bbb-dup", lo); err != nil || third != "bbb-dup-3" {
		t.Errorf("a third box's Claim = %q, %v; want bbb-dup-3", third, err)
	}
	for name, want := range map[string]string{"bbb-dup.local.": "10.1.2.3", "bbb-dup-2.local.": "10.1.2.4"} {
		if rrs := ask(t, name, dns.TypeA, time.Second); len(rrs) != 1 || !strings.HasSuffix(rrs[0].String(), want) {
			t.Errorf("%s answered %v, want %s", name, rrs, want)
		}
	}
	if got := suffixed(strings.Repeat("a", 63), 12); len(got) != 63 || !strings.HasSuffix(got, "-12") {
		t.Errorf("suffixed(63 a's, 12) = %q", got)
	}
}
