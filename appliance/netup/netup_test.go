package netup

import (
	"net"
	"testing"
)

func mac(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

func TestChoose(t *testing.T) {
	lo := link{Name: "lo", Loopback: true}
	eth0 := link{Name: "eth0", MAC: mac("02:00:00:00:00:01")}
	eth1 := link{Name: "eth1", MAC: mac("02:00:00:00:00:02")}
	end0 := link{Name: "end0", MAC: mac("02:00:00:00:00:03")}
	enp1 := link{Name: "enp1s0", MAC: mac("02:00:00:00:00:04")}
	usb0 := link{Name: "usb0", MAC: mac("02:00:00:00:00:05")}
	sit0 := link{Name: "sit0"} // no MAC
	for _, tc := range []struct {
		links []link
		want  string
	}{
		{[]link{lo, eth1, eth0, end0, usb0}, "eth0"},
		{[]link{lo, usb0, enp1, end0}, "end0"},
		{[]link{usb0, lo, enp1}, "enp1s0"},
		{[]link{lo, sit0, usb0}, "usb0"},
	} {
		if got, err := choose(tc.links); got != tc.want || err != nil {
			t.Errorf("choose(%v) = %q, %v, want %q", tc.links, got, err, tc.want)
		}
	}
	for _, links := range [][]link{nil, {lo}, {lo, sit0}} {
		if got, err := choose(links); err == nil {
			t.Errorf("choose(%v) = %q, want an error", links, got)
		}
	}
}

func TestLinkLocal(t *testing.T) {
	_, ll, _ := net.ParseCIDR("169.254.0.0/16")
	seen := map[string]bool{}
	for i := 0; i < 5000; i++ {
		m := net.HardwareAddr{0x02, 0, byte(i >> 16), byte(i >> 8), byte(i), 0x42}
		ip := linkLocal(m)
		if !ll.Contains(ip) || ip[2] == 0 || ip[2] == 255 {
			t.Fatalf("linkLocal(%s) = %s, want in 169.254.1.0-169.254.254.255", m, ip)
		}
		if again := linkLocal(m); !again.Equal(ip) {
			t.Fatalf("linkLocal(%s) = %s, then %s, want the same", m, ip, again)
		}
		seen[ip.String()] = true
	}
	// 5000 MACs over 65024 addresses: a fair hash leaves few collisions.
	if len(seen) < 4700 {
		t.Errorf("5000 MACs gave only %d distinct addresses", len(seen))
	}
}

func TestCheck(t *testing.T) {
	good := []Config{
		{},
		{Hostname: "bonesync"},
		{Hostname: "bbb-01", Static: "192.168.1.50/24"},
		{Static: "10.0.0.2/8", Gateway: "10.0.0.1", DNS: []string{"10.0.0.1", "2001:db8::1"}},
	}
	for _, c := range good {
		if _, err := c.check(); err != nil {
			t.Errorf("check(%+v) = %v, want nil", c, err)
		}
	}
	bad := []Config{
		{Hostname: "-bbb"},
		{Hostname: "bbb.local"},
		{Hostname: "bbb_1"},
		{Hostname: string(make([]byte, 64))},
		{Static: "192.168.1.50"},
		{Static: "2001:db8::5/64"},
		{Static: "192.168.1.50/24", Gateway: "192.168.2.1"},
		{Static: "192.168.1.50/24", Gateway: "router"},
		{Static: "192.168.1.50/24", DNS: []string{"dns.example"}},
		{Gateway: "192.168.1.1"},
		{DNS: []string{"192.168.1.1"}},
	}
	for _, c := range bad {
		if _, err := c.check(); err == nil {
			t.Errorf("check(%+v) = nil, want an error", c)
		}
	}
	s, _ := Config{Static: "192.168.1.50/24", Gateway: "192.168.1.1"}.check()
	if got, want := s.addr.String(), "192.168.1.50/24"; got != want {
		t.Errorf("static address = %s, want %s", got, want)
	}
}

func TestDefaults(t *testing.T) {
	var c Config
	if got, want := c.dhcpTimeout(), DefaultDHCPTimeout; got != want {
		t.Errorf("dhcpTimeout() = %v, want %v", got, want)
	}
	if got, want := c.resolvConf(), "/etc/resolv.conf"; got != want {
		t.Errorf("resolvConf() = %q, want %q", got, want)
	}
	c = Config{DHCPTimeout: 3e9, ResolvConf: "/tmp/r"}
	if got, want := c.dhcpTimeout(), c.DHCPTimeout; got != want {
		t.Errorf("dhcpTimeout() = %v, want %v", got, want)
	}
	if got, want := c.resolvConf(), "/tmp/r"; got != want {
		t.Errorf("resolvConf() = %q, want %q", got, want)
	}
}
