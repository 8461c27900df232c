package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
)

// Framer splits a handshake's byte stream into messages (TLS records, SSH
// packets). It is called with the bytes in hand from the start of the next
// message and returns the message's length (0: more bytes are needed to
// tell), whether the server does costly work on it (gate), and whether it is
// the last message to look at (after it the stream is encrypted or no longer
// of interest). A Framer is called for each message in turn, so it may keep
// state.
type Framer func(head []byte) (size int, gate, last bool, err error)

// maxMessage bounds a message the gate reads ahead: an SSH packet may be
// 35,000 bytes (RFC 4253, 6.1), a TLS record 16 KiB plus its header.
const maxMessage = 35000

// ErrNoSlot is the read error of a gated connection that found no handshake
// slot in time.
var ErrNoSlot = errors.New("too many handshakes in flight")

// Gate is a connection in its handshake whose costly messages take a slot of
// the Limiter only once each is complete in hand, and give it back when the
// server reads again (its work on the message is then done). A client that
// sends slowly, or sends nothing, waits without a slot: only its own
// connection is held up. Reads must come from one goroutine at a time, as
// they do in crypto/tls and golang.org/x/crypto/ssh during a handshake.
type Gate struct {
	net.Conn
	ctx   context.Context
	lim   *Limiter
	frame Framer

	ahead []byte // read from the connection, not yet delivered
	free  int    // bytes of the current message still to deliver
	last  bool   // the current message is the framer's last
	held  atomic.Bool
	open  atomic.Bool // framing over: reads pass through
}

// NewGate wraps c; frame tells its messages apart.
func NewGate(ctx context.Context, c net.Conn, lim *Limiter, frame Framer) *Gate {
	return &Gate{Conn: c, ctx: ctx, lim: lim, frame: frame}
}

// Holding reports whether the connection holds a slot now.
func (g *Gate) Holding() bool { return g.held.Load() }

// Open ends the gating (the handshake is over) and gives back a slot still
// held. Call it from the reading goroutine, or when no read is under way.
func (g *Gate) Open() {
	g.release()
	g.open.Store(true)
}

// Close closes the connection and gives back a slot still held.
func (g *Gate) Close() error {
	g.release()
	return g.Conn.Close()
}

func (g *Gate) release() {
	if g.held.CompareAndSwap(true, false) {
		g.lim.Release()
	}
}

func (g *Gate) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if g.free == 0 {
		// The server asks for more: it is done with the message it had.
		g.release()
		if g.last {
			g.open.Store(true)
		}
	}
	if g.open.Load() {
		if len(g.ahead) > 0 {
			n := copy(p, g.ahead)
			g.ahead = g.ahead[n:]
			return n, nil
		}
		g.ahead = nil
		return g.Conn.Read(p)
	}
	for g.free == 0 {
		size, gate, last, err := g.frame(g.ahead)
		if err != nil {
			return 0, err
		}
		if size < 0 || size > maxMessage {
			return 0, fmt.Errorf("handshake message of %d bytes", size)
		}
		if size == 0 || gate && len(g.ahead) < size {
			if err := g.readAhead(max(size, len(g.ahead)+1)); err != nil {
				return 0, err
			}
			continue
		}
		if gate {
			if !g.lim.Acquire(g.ctx) {
				return 0, ErrNoSlot
			}
			g.held.Store(true)
		}
		g.free, g.last = size, last
	}
	var n int
	if len(g.ahead) > 0 {
		n = copy(p[:min(len(p), g.free)], g.ahead)
		if g.ahead = g.ahead[n:]; len(g.ahead) == 0 {
			g.ahead = nil // a waiting connection keeps no buffer
		}
	} else {
		// A message the server does no work on flows as it comes.
		var err error
		if n, err = g.Conn.Read(p[:min(len(p), g.free)]); err != nil {
			return n, err
		}
	}
	g.free -= n
	return n, nil
}

// readAhead reads until at least n bytes are in hand.
func (g *Gate) readAhead(n int) error {
	if n > maxMessage {
		return fmt.Errorf("handshake message over %d bytes", maxMessage)
	}
	if cap(g.ahead) < n {
		grown := make([]byte, len(g.ahead), max(n, 512))
		copy(grown, g.ahead)
		g.ahead = grown
	}
	for len(g.ahead) < n {
		m, err := g.Conn.Read(g.ahead[len(g.ahead):cap(g.ahead)])
		g.ahead = g.ahead[:len(g.ahead)+m]
		if err != nil && len(g.ahead) < n {
			return err
		}
	}
	return nil
}
