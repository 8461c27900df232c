package dhcpd

import (
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

var link = Link{Iface: "usb0", Box: net.IPv4(192, 168, 7, 2).To4(), Peer: net.IPv4(192, 168, 7, 1).To4(),
	Mask: net.CIDRMask(30, 32), Lease: time.Hour}

func message(t *testing.T, typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	mac, _ := net.ParseMAC("02:00:00:00:00:01")
	m, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithHwAddr(mac), dhcpv4.WithMessageType(typ)}, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnswerOffersThePeersAddress(t *testing.T) {
	d := message(t, dhcpv4.MessageTypeDiscover)
	r := Answer(d, link)
	if r == nil || r.MessageType() != dhcpv4.MessageTypeOffer {
		t.Fatalf("DISCOVER answered %v", r)
	}
	if !r.YourIPAddr.Equal(link.Peer) || r.TransactionID != d.TransactionID || !r.ServerIdentifier().Equal(link.Box) {
		t.Errorf("offer: yiaddr %v xid %v server %v", r.YourIPAddr, r.TransactionID, r.ServerIdentifier())
	}
	if m := r.SubnetMask(); m.String() != link.Mask.String() {
		t.Errorf("offer's mask %v", m)
	}
	if r.IPAddressLeaseTime(0) != time.Hour {
		t.Errorf("offer's lease %v", r.IPAddressLeaseTime(0))
	}
	// The computer keeps its own route to the internet and its own DNS.
	if len(r.Router()) != 0 || len(r.DNS()) != 0 {
		t.Errorf("offer names a router %v or DNS %v", r.Router(), r.DNS())
	}
}

func TestAnswerRequests(t *testing.T) {
	ok := message(t, dhcpv4.MessageTypeRequest, dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(link.Peer)), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(link.Box)))
	if r := Answer(ok, link); r == nil || r.MessageType() != dhcpv4.MessageTypeAck || !r.YourIPAddr.Equal(link.Peer) {
		t.Errorf("REQUEST of the peer's address answered %v", r)
	}
	renew := message(t, dhcpv4.MessageTypeRequest, dhcpv4.WithClientIP(link.Peer))
	if r := Answer(renew, link); r == nil || r.MessageType() != dhcpv4.MessageTypeAck {
		t.Errorf("a renewal answered %v", r)
	}
	other := message(t, dhcpv4.MessageTypeRequest, dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 168, 7, 3))))
	if r := Answer(other, link); r == nil || r.MessageType() != dhcpv4.MessageTypeNak || !r.YourIPAddr.Equal(net.IPv4zero) {
		t.Errorf("REQUEST of another address answered %v", r)
	}
	elsewhere := message(t, dhcpv4.MessageTypeRequest, dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(link.Peer)), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 0, 1))))
	if r := Answer(elsewhere, link); r != nil {
		t.Errorf("a REQUEST to another server answered %v", r)
	}
	for _, typ := range []dhcpv4.MessageType{dhcpv4.MessageTypeRelease, dhcpv4.MessageTypeDecline, dhcpv4.MessageTypeInform} {
		if r := Answer(message(t, typ), link); r != nil {
			t.Errorf("%v answered %v", typ, r)
		}
	}
	reply := message(t, dhcpv4.MessageTypeDiscover)
	reply.OpCode = dhcpv4.OpcodeBootReply
	if r := Answer(reply, link); r != nil {
		t.Errorf("a reply answered %v", r)
	}
}
