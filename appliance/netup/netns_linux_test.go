package netup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run Up for real, in network namespaces made with iproute2: a
// client namespace holding one end of a veth pair, named eth0 as on the
// board, and a server namespace holding the other end and, for DHCP, Debian's
// dnsmasq. Up runs in a child process: this test binary started again under
// "ip netns exec" and in its own UTS namespace, so that neither the host's
// network nor its hostname is touched.

// helperEnv, when set, makes the test binary run Up with the JSON Config it
// holds and print a helperResult as JSON instead of running tests.
const helperEnv = "BONESYNC_NETUP_HELPER"

// helperResult is what the child reports.
type helperResult struct {
	State    *State
	Err      string
	Hostname string
}

// keepEnv, with helperEnv, makes the helper go on with Keep for that many
// seconds, printing each changed State as a JSON line.
const keepEnv = "BONESYNC_NETUP_KEEP"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(helperEnv); cfg != "" {
		os.Exit(helper(cfg))
	}
	os.Exit(m.Run())
}

// helper runs Up in the current namespaces and prints the result.
func helper(cfg string) int {
	var c Config
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	c.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r helperResult
	s, err := Up(ctx, c)
	if err != nil {
		r.Err = err.Error()
	}
	r.State = s
	r.Hostname, _ = os.Hostname()
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 2
	}
	if secs, _ := strconv.Atoi(os.Getenv(keepEnv)); secs > 0 && s != nil {
		kctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
		defer cancel()
		Keep(kctx, c, s, func(st *State) { json.NewEncoder(os.Stdout).Encode(helperResult{State: st}) })
	}
	return 0
}

// clientMAC is the MAC of the client's eth0, so that the link-local address
// is known in advance.
const clientMAC = "02:00:5e:10:00:01"

// pair is a client and a server namespace joined by a veth pair: eth0 in the
// client, srv0 (10.99.0.1/24) in the server.
type pair struct {
	client, server string
}

// newPair creates the namespaces and the veth pair, and removes them when the
// test ends. If serverUp is false, srv0 stays down and eth0 has no carrier.
func newPair(t *testing.T, tag string, serverUp bool) pair {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	p := pair{
		client: fmt.Sprintf("bsnetup-%d-%s-c", os.Getpid(), tag),
		server: fmt.Sprintf("bsnetup-%d-%s-s", os.Getpid(), tag),
	}
	for _, ns := range []string{p.client, p.server} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	run(t, "ip", "link", "add", "eth0", "netns", p.client, "address", clientMAC,
		"type", "veth", "peer", "name", "srv0", "netns", p.server)
	run(t, "ip", "-n", p.server, "addr", "add", "10.99.0.1/24", "dev", "srv0")
	if serverUp {
		run(t, "ip", "-n", p.server, "link", "set", "srv0", "up")
	}
	return p
}

// run runs a command and fails the test if it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// dnsmasq starts a DHCP server on srv0 in the server namespace, waits until
// it listens, and stops it when the test ends. It returns the lease file.
func dnsmasq(t *testing.T, p pair) string {
	t.Helper()
	leases, _ := dnsmasqRange(t, p, "10.99.0.50,10.99.0.60", "1h")
	return leases
}

// dnsmasqRange is dnsmasq handing out addresses from rng ("first,last")
// for lease; stop ends it early.
func dnsmasqRange(t *testing.T, p pair, rng, lease string) (leases string, stop func()) {
	t.Helper()
	if _, err := exec.LookPath("dnsmasq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dnsmasq is not installed; scripts/install-test-deps.sh installs dnsmasq-base")
		}
		t.Skip("dnsmasq is not installed (scripts/install-test-deps.sh installs dnsmasq-base)")
	}
	leases = filepath.Join(t.TempDir(), "leases")
	cmd := exec.Command("ip", "netns", "exec", p.server, "dnsmasq",
		"--no-daemon", "--conf-file=/dev/null", "--log-facility=-",
		"--interface=srv0", "--bind-interfaces", "--port=0",
		"--dhcp-range="+rng+",255.255.255.0,"+lease,
		"--dhcp-option=option:dns-server,10.99.0.1",
		"--dhcp-leasefile="+leases)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dnsmasq: %v", err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait() }) }
	t.Cleanup(stop)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("dnsmasq:", sc.Text())
			if strings.Contains(sc.Text(), "sockets bound") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("dnsmasq did not start listening in 10s")
	}
	return leases, stop
}

// upIn runs Up with c in the client namespace (and a fresh UTS namespace) and
// returns what it reported. It fails the test if Up failed.
func upIn(t *testing.T, p pair, c Config) *State {
	t.Helper()
	cfg, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", p.client, os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+string(cfg))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("Up took %s; its log:\n%s", time.Since(start).Round(time.Millisecond), stderr.String())
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	var r helperResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("helper output %q: %v", stdout.String(), err)
	}
	if r.Err != "" {
		t.Fatalf("Up(%+v) error: %s", c, r.Err)
	}
	if c.Hostname != "" && r.Hostname != c.Hostname {
		t.Errorf("hostname after Up = %q, want %q", r.Hostname, c.Hostname)
	}
	if r.State == nil || len(r.State.Addrs) != 1 {
		t.Fatalf("Up(%+v) = %+v, want one address", c, r.State)
	}
	if r.State.Interface != "eth0" {
		t.Errorf("Interface = %q, want eth0", r.State.Interface)
	}
	// What Up reported is on the interface, and loopback is up.
	addrs := run(t, "ip", "-n", p.client, "-4", "-o", "addr", "show", "dev", "eth0")
	if a := r.State.Addrs[0].String(); !strings.Contains(addrs, " "+a+" ") {
		t.Errorf("eth0 has %q, want %s", addrs, a)
	}
	if lo := run(t, "ip", "-n", p.client, "-o", "link", "show", "lo"); !strings.Contains(lo, ",UP") {
		t.Errorf("loopback: %q, want UP", lo)
	}
	return r.State
}

// hostname is this host's name, which the tests must not change.
func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestUpDHCP(t *testing.T) {
	t.Parallel()
	p := newPair(t, "dhcp", true)
	leases := dnsmasq(t, p)
	host := hostname(t)
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	s := upIn(t, p, Config{
		Hostname:    "bbb-dhcp",
		Static:      "192.168.77.5/24", // not used: DHCP answers
		DHCPTimeout: 5 * time.Second,
		ResolvConf:  resolv,
	})
	if s.Method != MethodDHCP {
		t.Errorf("Method = %q, want %q", s.Method, MethodDHCP)
	}
	a := s.Addrs[0]
	lo, hi := net.IPv4(10, 99, 0, 50), net.IPv4(10, 99, 0, 60)
	if ip := a.IP.To4(); ip == nil || bytes.Compare(ip, lo.To4()) < 0 || bytes.Compare(ip, hi.To4()) > 0 {
		t.Errorf("address = %s, want in 10.99.0.50-60", a.IP)
	}
	if ones, _ := a.Mask.Size(); ones != 24 {
		t.Errorf("prefix = /%d, want /24", ones)
	}
	if addrs := run(t, "ip", "-n", p.client, "-4", "-o", "addr", "show", "dev", "eth0"); strings.Contains(addrs, "192.168.77.5") {
		t.Errorf("eth0 has the static address too: %q", addrs)
	}
	if want := net.IPv4(10, 99, 0, 1); !s.Gateway.Equal(want) {
		t.Errorf("Gateway = %v, want %v", s.Gateway, want)
	}
	if r := run(t, "ip", "-n", p.client, "-4", "route", "show", "default"); !strings.Contains(r, "via 10.99.0.1 dev eth0") {
		t.Errorf("default route = %q, want via 10.99.0.1 dev eth0", r)
	}
	if b, err := os.ReadFile(resolv); err != nil || !strings.Contains(string(b), "nameserver 10.99.0.1\n") {
		t.Errorf("resolv.conf = %q, %v; want nameserver 10.99.0.1", b, err)
	}
	// The server learned the hostname from the request.
	if b, err := os.ReadFile(leases); err != nil || !strings.Contains(string(b), " bbb-dhcp ") {
		t.Errorf("dnsmasq leases = %q, %v; want hostname bbb-dhcp", b, err)
	}
	if got := hostname(t); got != host {
		t.Errorf("host's hostname changed to %q (was %q)", got, host)
	}
}

func TestUpStaticWhenNoDHCPServer(t *testing.T) {
	t.Parallel()
	p := newPair(t, "static", true) // carrier, but nobody answers
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	s := upIn(t, p, Config{
		Hostname:    "bbb-static",
		Static:      "192.168.77.5/24",
		Gateway:     "192.168.77.1",
		DNS:         []string{"192.168.77.53", "9.9.9.9"},
		DHCPTimeout: 2 * time.Second,
		ResolvConf:  resolv,
	})
	if s.Method != MethodStatic {
		t.Errorf("Method = %q, want %q", s.Method, MethodStatic)
	}
	if got, want := s.Addrs[0].String(), "192.168.77.5/24"; got != want {
		t.Errorf("address = %s, want %s", got, want)
	}
	if want := net.IPv4(192, 168, 77, 1); !s.Gateway.Equal(want) {
		t.Errorf("Gateway = %v, want %v", s.Gateway, want)
	}
	if r := run(t, "ip", "-n", p.client, "-4", "route", "show", "default"); !strings.Contains(r, "via 192.168.77.1 dev eth0") {
		t.Errorf("default route = %q, want via 192.168.77.1 dev eth0", r)
	}
	b, err := os.ReadFile(resolv)
	if want := "nameserver 192.168.77.53\nnameserver 9.9.9.9\n"; err != nil || string(b) != want {
		t.Errorf("resolv.conf = %q, %v; want %q", b, err, want)
	}
}

func TestUpLinkLocalWhenNoCarrier(t *testing.T) {
	t.Parallel()
	p := newPair(t, "ll", false) // peer down: no carrier, no DHCP, no static
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	s := upIn(t, p, Config{DHCPTimeout: 2 * time.Second, ResolvConf: resolv})
	if s.Method != MethodLinkLocal {
		t.Errorf("Method = %q, want %q", s.Method, MethodLinkLocal)
	}
	mac, _ := net.ParseMAC(clientMAC)
	want := net.IPNet{IP: linkLocal(mac), Mask: net.CIDRMask(16, 32)}
	if got := s.Addrs[0]; got.String() != want.String() {
		t.Errorf("address = %s, want %s", got.String(), want.String())
	}
	if _, ll, _ := net.ParseCIDR("169.254.0.0/16"); !ll.Contains(s.Addrs[0].IP) {
		t.Errorf("address %s not in %s", s.Addrs[0].IP, ll)
	}
	if s.Gateway != nil {
		t.Errorf("Gateway = %v, want none", s.Gateway)
	}
	if _, err := os.Stat(resolv); !os.IsNotExist(err) {
		t.Errorf("resolv.conf written with no name servers (stat: %v)", err)
	}
}

// kept runs Up then Keep for secs seconds in the client namespace and
// returns a channel of the States it reports, Up's first.
func kept(t *testing.T, p pair, c Config, secs int) <-chan *State {
	t.Helper()
	cfg, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", p.client, os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+string(cfg), keepEnv+"="+strconv.Itoa(secs))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); t.Logf("Up and Keep logged:\n%s", stderr.String()) })
	states := make(chan *State, 10)
	go func() {
		defer close(states)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r helperResult
			if json.Unmarshal(sc.Bytes(), &r) == nil && r.State != nil {
				states <- r.State
			}
		}
	}()
	return states
}

func next(t *testing.T, states <-chan *State, within time.Duration) *State {
	t.Helper()
	select {
	case s, ok := <-states:
		if !ok {
			t.Fatal("the helper ended without reporting")
		}
		return s
	case <-time.After(within):
		t.Fatalf("no new state within %v", within)
	}
	return nil
}

// A DHCP server that starts a minute after the box (the router after a
// power cut) still gives it its lease: the link-local fall-back is replaced.
func TestKeepTakesALateLease(t *testing.T) {
	t.Parallel()
	p := newPair(t, "late", true)
	states := kept(t, p, Config{DHCPTimeout: 10 * time.Second, RetryEvery: 10 * time.Second}, 170)
	if s := next(t, states, 30*time.Second); s.Method != MethodLinkLocal {
		t.Fatalf("before the DHCP server: %+v, want link-local", s)
	}
	time.Sleep(60 * time.Second)
	dnsmasq(t, p)
	s := next(t, states, 90*time.Second)
	if s.Method != MethodDHCP || !strings.HasPrefix(s.Addrs[0].IP.String(), "10.99.0.") {
		t.Fatalf("after the DHCP server started: %+v, want a DHCP lease", s)
	}
	addrs := run(t, "ip", "-n", p.client, "-4", "-o", "addr", "show", "dev", "eth0")
	if strings.Contains(addrs, "169.254.") || !strings.Contains(addrs, s.Addrs[0].String()) {
		t.Errorf("eth0 has %q, want only %s", addrs, s.Addrs[0].String())
	}
}

// A renewal that brings another address (the server was replaced) moves
// the box to it, and reports the change (PID 1 then announces it over mDNS).
func TestKeepRenewsToANewAddress(t *testing.T) {
	t.Parallel()
	p := newPair(t, "renew", true)
	_, stop := dnsmasqRange(t, p, "10.99.0.50,10.99.0.60", "2m") // dnsmasq's shortest lease: renewal after 1 min
	states := kept(t, p, Config{DHCPTimeout: 5 * time.Second}, 150)
	first := next(t, states, 30*time.Second)
	if first.Method != MethodDHCP || first.Renew > 70*time.Second {
		t.Fatalf("first lease %+v, want DHCP renewing within about a minute", first)
	}
	stop()
	dnsmasqRange(t, p, "10.99.0.70,10.99.0.80", "2m")
	s := next(t, states, 100*time.Second)
	if s.Method != MethodDHCP || s.Addrs[0].String() == first.Addrs[0].String() || !strings.HasPrefix(s.Addrs[0].IP.String(), "10.99.0.7") {
		t.Fatalf("after the renewal: %+v (first %s), want an address from the new range", s, first.Addrs[0].String())
	}
	addrs := run(t, "ip", "-n", p.client, "-4", "-o", "addr", "show", "dev", "eth0")
	if strings.Contains(addrs, first.Addrs[0].IP.String()+"/") {
		t.Errorf("the old address is still on eth0: %q", addrs)
	}
	if r := run(t, "ip", "-n", p.client, "-4", "route", "show", "default"); !strings.Contains(r, "via 10.99.0.1 dev eth0") {
		t.Errorf("default route after the renewal = %q", r)
	}
}
