package web

import (
	"context"
	"crypto/tls"
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
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return
		}
		if l.pending.Add(1) > maxPending {
			l.pending.Add(-1)
			c.Close()
			continue
		}
		go func() {
			defer l.pending.Add(-1)
			if !lim.Acquire(ctx) {
				c.Close()
				return
			}
			c.SetDeadline(time.Now().Add(timeout))
			tc := tls.Server(c, cfg)
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
