package web

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
)

// maxPending bounds connections waiting for a handshake slot; beyond it new
// connections are closed at once.
const maxPending = 256

// handshakeListener completes TLS handshakes off the accept path, at most as
// many at once as the shared Limiter allows, and hands the HTTP server only
// connections whose handshake finished. A burst of new connections then
// queues (or is shed) instead of starving the sessions already being served.
type handshakeListener struct {
	net.Listener
	ready   chan net.Conn
	done    chan struct{}
	pending atomic.Int32
}

// HandshakeListener wraps ln: see handshakeListener.
func HandshakeListener(ctx context.Context, ln net.Listener, cfg *tls.Config, lim *guard.Limiter, timeout time.Duration) net.Listener {
	l := &handshakeListener{Listener: ln, ready: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop(ctx, cfg, lim, timeout)
	return l
}

func (l *handshakeListener) acceptLoop(ctx context.Context, cfg *tls.Config, lim *guard.Limiter, timeout time.Duration) {
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
		if l.pending.Add(1) > maxPending {
			l.pending.Add(-1)
			c.Close()
			continue
		}
		go func() {
			defer l.pending.Add(-1)
			// A slot is for work, not for waiting: an idle connection that
			// never says hello must not hold one.
			c.SetDeadline(time.Now().Add(timeout))
			pc := &peekedConn{Conn: c, r: bufio.NewReader(c)}
			if _, err := pc.r.Peek(1); err != nil || !lim.Acquire(ctx) {
				c.Close()
				return
			}
			c.SetDeadline(time.Now().Add(timeout))
			tc := tls.Server(pc, cfg)
			err := tc.HandshakeContext(ctx)
			lim.Release()
			if err != nil {
				c.Close()
				return
			}
			c.SetDeadline(time.Time{})
			select {
			case l.ready <- tc:
			case <-l.done:
				tc.Close()
			}
		}()
	}
}

func (l *handshakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// peekedConn is a connection whose first bytes were read ahead.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) { return p.r.Read(b) }
