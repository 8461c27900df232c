// Package dhcpd is the DHCP server of a point-to-point link: the USB
// device port's, where the one computer at the other end gets the one
// address there is for it. The messages are insomniacslk/dhcp's (the
// library the box's DHCP client, u-root's dhclient, is built on); the
// policy, which is all a link of two needs, is here.
package dhcpd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
)

// Link is one point-to-point link: the box's address on it, the address
// its peer is given and their network.
type Link struct {
	Iface string
	Box   net.IP
	Peer  net.IP
	Mask  net.IPMask
	// Lease is how long the peer may keep its address before renewing.
	Lease time.Duration
}

// Answer is the reply to m: an offer to a DISCOVER, an ACK to a REQUEST
// for the peer's address (or a renewal from it), a NAK to a REQUEST for
// any other; nil for what needs no answer (a RELEASE, a DECLINE, an
// INFORM, a message for another server). The reply names no router and no
// DNS server: the computer keeps its own way to the internet, and reaches
// the box by its address or mDNS.
func Answer(m *dhcpv4.DHCPv4, l Link) *dhcpv4.DHCPv4 {
	if m.OpCode != dhcpv4.OpcodeBootRequest {
		return nil
	}
	var typ dhcpv4.MessageType
	switch m.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		typ = dhcpv4.MessageTypeOffer
	case dhcpv4.MessageTypeRequest:
		if sid := m.ServerIdentifier(); sid != nil && !sid.Equal(l.Box) {
			return nil // the client chose another server's offer
		}
		want := m.RequestedIPAddress()
		if want == nil {
			want = m.ClientIPAddr // renewing or rebinding
		}
		typ = dhcpv4.MessageTypeAck
		if !want.Equal(l.Peer) {
			typ = dhcpv4.MessageTypeNak
		}
	default:
		return nil
	}
	opts := []dhcpv4.Modifier{dhcpv4.WithMessageType(typ), dhcpv4.WithServerIP(l.Box),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(l.Box))}
	if typ != dhcpv4.MessageTypeNak {
		opts = append(opts, dhcpv4.WithYourIP(l.Peer), dhcpv4.WithNetmask(l.Mask), dhcpv4.WithLeaseTime(uint32(l.Lease/time.Second)))
	}
	r, err := dhcpv4.NewReplyFromRequest(m, opts...)
	if err != nil {
		return nil // only a failure to make a transaction ID, which a reply copies
	}
	return r
}

// Serve answers l's peer until ctx ends. The interface must have its
// address already.
func Serve(ctx context.Context, l Link, log *slog.Logger) error {
	srv, err := server4.NewServer(l.Iface, &net.UDPAddr{Port: dhcpv4.ServerPort}, func(conn net.PacketConn, peer net.Addr, m *dhcpv4.DHCPv4) {
		r := Answer(m, l)
		if r == nil {
			return
		}
		if _, err := conn.WriteTo(r.ToBytes(), peer); err != nil {
			log.Warn("DHCP: no answer sent", "iface", l.Iface, "to", peer.String(), "err", err)
			return
		}
		if r.MessageType() == dhcpv4.MessageTypeAck {
			log.Info("DHCP: address given", "iface", l.Iface, "addr", l.Peer.String(), "client", m.ClientHWAddr.String())
		}
	})
	if err != nil {
		return fmt.Errorf("dhcpd on %s: %w", l.Iface, err)
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(); ctx.Err() == nil {
		return fmt.Errorf("dhcpd on %s: %w", l.Iface, err)
	}
	return nil
}
