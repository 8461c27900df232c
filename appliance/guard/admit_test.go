package guard

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/sysd"
)

func TestAdmission(t *testing.T) {
	var log bytes.Buffer
	a := NewAdmission("https", Limits{PerAddress: 3, Waiting: 2}, sysd.NewLogger(&log))
	t1, t2 := a.Admit("10.0.0.2", nil), a.Admit("10.0.0.2", nil)
	if t1 == nil || t2 == nil {
		t.Fatal("refused below the limits")
	}
	if a.Admit("10.0.0.2", nil) != nil {
		t.Fatal("a third waiting connection was admitted")
	}
	if a.Admit("10.0.0.2", nil) != nil || strings.Count(log.String(), "refusing") != 1 {
		t.Fatalf("want one log line for two refusals:\n%s", log.String())
	}
	if a.Admit("10.0.0.3", nil) == nil {
		t.Fatal("another address was refused")
	}
	t1.Ready()
	t1.Ready() // twice counts once
	t3 := a.Admit("10.0.0.2", nil)
	if t3 == nil {
		t.Fatal("not admitted after one connection finished its handshake")
	}
	t3.Ready()
	if a.Admit("10.0.0.2", nil) != nil {
		t.Fatal("a fourth open connection was admitted")
	}
	t1.Done()
	t1.Done()
	if t4 := a.Admit("10.0.0.2", nil); t4 == nil {
		t.Fatal("not admitted after a connection closed")
	}
	var none *Admission
	none.Admit("x", nil).Done() // nil: no caps
}

// A banned client's connections are closed before their handshake, but
// HearBurst every HearEvery, which go on to be told why; others and the
// client once its ban is over come in as before.
func TestAdmissionBans(t *testing.T) {
	now := time.Unix(1e9, 0)
	banned := map[string]bool{"10.0.0.9": true}
	a := NewAdmission("https", Limits{PerAddress: 64, Waiting: 16}, nil).Bans(func(addr string) (bool, time.Duration) {
		return banned[addr], time.Minute
	})
	a.now = func() time.Time { return now }
	for i := range HearBurst {
		if a.Admit("10.0.0.9", nil) == nil {
			t.Fatalf("the banned client's connection %d was not let through to hear why", i+1)
		}
	}
	for i := range 5 {
		if a.Admit("10.0.0.9", nil) != nil {
			t.Fatalf("connection %d of the banned client within %v was admitted", HearBurst+i+1, HearEvery)
		}
	}
	if a.Admit("10.0.0.8", nil) == nil {
		t.Fatal("another client was refused")
	}
	now = now.Add(HearEvery)
	for i := range HearBurst + 1 {
		if got := a.Admit("10.0.0.9", nil) != nil; got != (i < HearBurst) {
			t.Fatalf("after %v, connection %d admitted: %v; want %d through, then none", HearEvery, i+1, got, HearBurst)
		}
	}
	banned["10.0.0.9"] = false
	if a.Admit("10.0.0.9", nil) == nil {
		t.Fatal("the client was refused after its ban ended")
	}
	// Banned clients beyond what it remembers are refused, never let
	// through unbounded.
	for i := range maxHeard + 10 {
		banned[fmt.Sprintf("10.1.%d.%d", i/256, i%256)] = true
		a.Admit(fmt.Sprintf("10.1.%d.%d", i/256, i%256), nil)
	}
	if len(a.heard) > maxHeard {
		t.Errorf("%d banned clients remembered, over %d", len(a.heard), maxHeard)
	}
}

// closer records that the admission closed it (an eviction) and ends its
// ticket, as a connection's handshake ends when it is closed.
type closer struct {
	closed bool
	t      *Ticket
}

func (c *closer) Close() error {
	c.closed = true
	if c.t != nil {
		c.t.Done()
	}
	return nil
}

// A flood from many addresses fills the port's handshakes: a newcomer is
// still admitted, the oldest handshake of the client holding the most is
// closed for it, and a flooder at its share is refused rather than let in.
func TestAdmissionFairUnderDistributedFlood(t *testing.T) {
	a := NewAdmission("https", Limits{PerAddress: 64, Waiting: 16}, nil)
	var conns []*closer
	admit := func(addr string) *closer {
		c := &closer{}
		if c.t = a.Admit(addr, c); c.t == nil {
			return nil
		}
		conns = append(conns, c)
		return c
	}
	// 32 addresses x 16 handshakes: all 512 taken.
	for i := 0; i < 32; i++ {
		for j := 0; j < 16; j++ {
			if admit(fmt.Sprintf("10.0.1.%d", i)) == nil {
				t.Fatalf("refused %d/%d below the caps", i, j)
			}
		}
	}
	// One more flooding address: it holds fewer than the others, so it
	// gets in, evicting one (as the legitimate client would).
	for k := 0; k < 40; k++ {
		legit := admit(fmt.Sprintf("192.168.1.%d", k))
		if legit == nil {
			t.Fatalf("newcomer %d refused while flooders hold all the handshakes", k)
		}
		evicted := 0
		for _, c := range conns {
			if c.closed {
				evicted++
			}
		}
		if evicted != k+1 {
			t.Fatalf("after %d newcomers, %d evicted", k+1, evicted)
		}
	}
	// Each eviction took the oldest of a heaviest client: after 40, every
	// flooder lost its first (each fell from 16 to 15 before any to 14).
	for i := 0; i < 32; i++ {
		if !conns[16*i].closed {
			t.Errorf("flooder %d's oldest handshake was not the one closed", i)
		}
	}
	// A flooder just evicted (one lighter than the heaviest) is refused:
	// else every eviction would start another, and the whole flood churn.
	lighter := ""
	for i := 0; i < 32 && lighter == ""; i++ {
		if addr := fmt.Sprintf("10.0.1.%d", i); len(a.addrs[addr].queue) == 14 {
			lighter = addr
		}
	}
	if lighter == "" {
		t.Fatal("no flooder was evicted twice: the test's 40 newcomers should make 8")
	}
	if admit(lighter) != nil {
		t.Error("a flooder one lighter than the heaviest (14 against 15) evicted another")
	}
	// A flooder at the most any client holds is refused, not let in by
	// evicting another flooder as heavy as itself.
	heaviest := 0
	for _, cs := range a.addrs {
		heaviest = max(heaviest, len(cs.queue))
	}
	for i := 0; i < 32; i++ {
		addr := fmt.Sprintf("10.0.1.%d", i)
		if len(a.addrs[addr].queue) == heaviest {
			if admit(addr) != nil {
				t.Error("a flooder holding the most was let in by evicting another")
			}
			break
		}
	}
	// While more than half the pool waits, handshakes get less time.
	if got := a.HandshakeTimeout(10 * time.Second); got != 2500*time.Millisecond {
		t.Errorf("handshake timeout under the flood: %v", got)
	}
	for _, c := range conns {
		c.t.Ready()
	}
	if got := a.HandshakeTimeout(10 * time.Second); got != 10*time.Second {
		t.Errorf("handshake timeout without a flood: %v", got)
	}
}

// IPv6 addresses count by their /64: one host may hold a whole /64, and
// each of its addresses is not another client.
func TestAdmissionCountsIPv6By64(t *testing.T) {
	a := NewAdmission("sftp", Limits{PerAddress: 4, Waiting: 4}, nil)
	for i := 0; i < 4; i++ {
		if a.Admit(fmt.Sprintf("2001:db8:1:2::%x", i+1), nil) == nil {
			t.Fatalf("refused %d below the cap", i)
		}
	}
	if a.Admit("2001:db8:1:2:ffff::1", nil) != nil {
		t.Error("a fifth address of the same /64 was admitted")
	}
	if a.Admit("2001:db8:1:3::1", nil) == nil {
		t.Error("another /64 was refused")
	}
	for _, c := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"}, {"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"}, {"not an address", "not an address"},
		// On the home network each device is its own client.
		{"fe80::1%eth0", "fe80::1"}, {"fd12:3456::7", "fd12:3456::7"}, {"::1", "::1"},
	} {
		if got := Source(c.in); got != c.want {
			t.Errorf("Source(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A flood from as many addresses as there are places, one each, keeps an
// unknown newcomer out (no client holds two more than it), but never an
// address that logged in before.
func TestAdmissionLetsKnownAddressesIn(t *testing.T) {
	a := NewAdmission("https", Limits{PerAddress: 64, Waiting: 16}, nil).Trust(func(addr string) bool { return addr == "192.168.1.20" })
	var conns []*closer
	for i := 0; i < MaxWaiting; i++ {
		c := &closer{}
		if c.t = a.Admit(fmt.Sprintf("10.2.%d.%d", i/250, i%250), c); c.t == nil {
			t.Fatalf("refused %d below the caps", i)
		}
		conns = append(conns, c)
	}
	if a.Admit("192.168.1.99", nil) != nil {
		t.Error("an unknown newcomer evicted a flooder holding as few as it")
	}
	if a.Admit("192.168.1.20", nil) == nil {
		t.Fatal("an address that logged in before was kept out by the flood")
	}
	evicted := 0
	for _, c := range conns {
		if c.closed {
			evicted++
		}
	}
	if evicted != 1 {
		t.Errorf("%d handshakes closed for the known address, want 1", evicted)
	}
}

// A notice's key may quote a client (a TLS error quotes the protocols its
// ClientHello offered): the keys remembered are kept cut, and a long key
// is still logged once.
func TestNoticeKeysCut(t *testing.T) {
	var log bytes.Buffer
	n := NewNotices(sysd.NewLogger(&log))
	for i := range 100 {
		why := fmt.Sprintf("tls: client requested unsupported application protocols (%d %s)", i, strings.Repeat("p", 64<<10))
		n.Warn("10.0.0.1 "+why, "TLS handshake failed", "err", why)
	}
	held := 0
	for k := range n.last {
		held += len(k)
	}
	if len(n.last) != 100 || held > 100*(maxNoticeKey+40) {
		t.Errorf("%d keys of %d bytes remembered", len(n.last), held)
	}
	n.Warn("10.0.0.1 tls: client requested unsupported application protocols (0 "+strings.Repeat("p", 64<<10)+")", "TLS handshake failed")
	if got := strings.Count(log.String(), "\n"); got != 100 {
		t.Errorf("logged %d lines, want 100: the same key twice", got)
	}
}
