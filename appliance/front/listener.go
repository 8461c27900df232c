package front

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
)

// Handshakes bounds the TLS handshakes of the HTTPS port.
type Handshakes struct {
	// Slots is the box's handshake limiter, shared with SSH: a connection
	// takes a slot only while the server works on a complete message of
	// its handshake (guard.Gate).
	Slots *guard.Limiter
	// Admission caps connections per client address.
	Admission *guard.Admission
	// Timeout bounds a handshake from the connection's first moment.
	Timeout time.Duration
	// Log gets failed handshakes, once an hour per address and error.
	Log *slog.Logger
}

// handshakeListener completes TLS handshakes off the accept path and hands
// the HTTP server only connections whose handshake finished. A connection
// over its address's limits is closed at once; one that is slow or silent
// waits without a handshake slot until its timeout, so it holds up no one
// else. A burst of new connections then queues (or is shed) instead of
// starving the sessions already being served.
type handshakeListener struct {
	net.Listener
	ready   chan net.Conn
	done    chan struct{}
	notices *guard.Notices
}

// HandshakeListener wraps ln: see handshakeListener.
func HandshakeListener(ctx context.Context, ln net.Listener, cfg *tls.Config, h Handshakes) net.Listener {
	l := &handshakeListener{Listener: ln, ready: make(chan net.Conn), done: make(chan struct{}), notices: guard.NewNotices(h.Log)}
	go l.acceptLoop(ctx, cfg, h)
	return l
}

func (l *handshakeListener) acceptLoop(ctx context.Context, cfg *tls.Config, h Handshakes) {
	defer close(l.done)
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return
			}
			// Out of file descriptors, a connection reset before accept:
			// wait and go on, as net/http does, rather than stop serving.
			time.Sleep(100 * time.Millisecond)
			continue
		}
		addr := guard.Host(c.RemoteAddr().String())
		ticket := h.Admission.Admit(addr, c)
		if ticket == nil {
			c.Close()
			continue
		}
		go l.handshake(ctx, &admitted{Conn: c, ticket: ticket}, addr, cfg, h)
	}
}

// handshake runs one connection's TLS handshake and hands it on.
func (l *handshakeListener) handshake(ctx context.Context, c *admitted, addr string, cfg *tls.Config, h Handshakes) {
	c.SetDeadline(time.Now().Add(h.Admission.HandshakeTimeout(h.Timeout)))
	gate := guard.NewGate(ctx, c, h.Slots, tlsRecords)
	tc := tls.Server(gate, cfg)
	err := tc.HandshakeContext(ctx)
	gate.Open()
	if err != nil {
		l.failed(c, addr, err)
		c.Close()
		return
	}
	c.ticket.Ready()
	c.SetDeadline(time.Time{})
	select {
	case l.ready <- tc:
	case <-l.done:
		tc.Close()
	}
}

// failed logs a failed handshake, once an hour per address and kind of
// failure. Connections that close or time out before saying anything (port
// scans, a browser's spare connection) are not worth a line; a plain-HTTP
// request gets a plain-HTTP answer, as net/http gives it.
func (l *handshakeListener) failed(c net.Conn, addr string, err error) {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) && looksLikeHTTP(rh.RecordHeader[:]) {
		io.WriteString(c, "HTTP/1.0 400 Bad Request\r\n\r\nThis is the HTTPS port: use https://.\n")
		return
	}
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) || errors.Is(err, context.Canceled) {
		return
	}
	why := err.Error()
	attrs := []any{"addr", addr, "err", err}
	switch {
	case errors.Is(err, guard.ErrNoSlot):
		attrs = append(attrs, "hint", "the box is busy with other handshakes")
	case strings.Contains(why, "unknown certificate authority"), strings.Contains(why, "bad certificate"):
		attrs = append(attrs, "hint", "the client does not trust the box's CA yet: it is at /ca.crt")
	}
	l.notices.Warn(addr+" "+why, "TLS handshake failed (logged once an hour per address and error)", attrs...)
}

func looksLikeHTTP(hdr []byte) bool {
	for _, m := range []string{"GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "PROPF"} {
		if string(hdr) == m {
			return true
		}
	}
	return false
}

// tlsRecords is the guard.Framer of a TLS handshake: the server works on
// handshake records (the ClientHello above all); other bytes flow. Anything
// that is not a TLS record goes straight to crypto/tls, which refuses it.
func tlsRecords(head []byte) (size int, gate, last bool, err error) {
	if len(head) < 5 {
		return 0, false, false, nil
	}
	if head[0] < 20 || head[0] > 24 { // not a TLS record
		return len(head), false, true, nil
	}
	return 5 + (int(head[3])<<8 | int(head[4])), head[0] == 22, false, nil
}

func (l *handshakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// admitted is a connection that counts towards its address's limits until
// it is closed.
type admitted struct {
	net.Conn
	ticket *guard.Ticket
	once   sync.Once
}

func (a *admitted) Close() error {
	err := a.Conn.Close()
	a.once.Do(a.ticket.Done)
	return err
}

// AdmitListener caps ln's connections per client address (the plain-HTTP
// port, which has no handshake: a connection counts as open until it
// closes, and its requests are bounded by the server's timeouts).
func AdmitListener(ln net.Listener, adm *guard.Admission) net.Listener {
	return &admitListener{Listener: ln, adm: adm}
}

type admitListener struct {
	net.Listener
	adm *guard.Admission
}

func (l *admitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		t := l.adm.Admit(guard.Host(c.RemoteAddr().String()), c)
		if t == nil {
			c.Close()
			continue
		}
		t.Ready()
		return &admitted{Conn: c, ticket: t}, nil
	}
}
