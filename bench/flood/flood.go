// Package flood is the abuse a box on a home network meets: connections
// held open idle or fed a byte at a time from one address, and failed
// logins from many. `make test`'s abuse test and `make bench`'s abuse phase
// both use it, against bonesync and against its peers.
package flood

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Hold is a set of connections one address keeps open to a server.
type Hold struct {
	From       string        // source address, e.g. 127.0.0.2
	To         string        // host:port
	Idle, Slow int           // connections that send nothing, and that send Prefix a byte at a time
	Prefix     []byte        // what a slow connection sends (then zeros)
	Every      time.Duration // between a slow connection's bytes (0: 3 s)
	Retry      time.Duration // pause before opening again a connection the server closed (0: 1 s)
}

// Counts are what a Hold saw.
type Counts struct {
	Dials  atomic.Int64 // connections opened
	Closed atomic.Int64 // ended by the server, or refused
}

// Run opens the connections and keeps them open, reopening those the
// server closes, until ctx ends; it returns at once. wait waits for the
// connections to be closed after ctx ended.
func (h Hold) Run(ctx context.Context) (c *Counts, wait func()) {
	c = &Counts{}
	if h.Every == 0 {
		h.Every = 3 * time.Second
	}
	if h.Retry == 0 {
		h.Retry = time.Second
	}
	var wg sync.WaitGroup
	for i := 0; i < h.Idle+h.Slow; i++ {
		slow := i >= h.Idle
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Spread the first connections over a second, as a scanner's.
			time.Sleep(time.Duration(i) * time.Second / time.Duration(h.Idle+h.Slow))
			for ctx.Err() == nil {
				h.one(ctx, c, slow)
				select {
				case <-ctx.Done():
				case <-time.After(h.Retry):
				}
			}
		}()
	}
	return c, wg.Wait
}

// one holds one connection until the server closes it or ctx ends.
func (h Hold) one(ctx context.Context, c *Counts, slow bool) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(h.From)}, Timeout: 10 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", h.To)
	c.Dials.Add(1)
	if err != nil {
		c.Closed.Add(1)
		return
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	ended := make(chan struct{})
	go func() {
		io.Copy(io.Discard, conn) // the server's banner, if any, then its close
		close(ended)
	}()
	if !slow {
		<-ended
	} else {
		for i := 0; ; i++ {
			select {
			case <-ended:
			case <-time.After(h.Every):
				b := byte(0)
				if i < len(h.Prefix) {
					b = h.Prefix[i]
				}
				if _, err := conn.Write([]byte{b}); err == nil {
					continue
				}
			}
			break
		}
	}
	if ctx.Err() == nil {
		c.Closed.Add(1)
	}
}

// TLSPrefix is the start of a ClientHello: a handshake record of 512 bytes.
var TLSPrefix = []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}

// SSHPrefix is a client's version line and the start of its KEXINIT.
var SSHPrefix = append([]byte("SSH-2.0-OpenSSH_9.2p1\r\n"), 0, 0, 0x05, 0xdc, 0x0a, 0x14)

// Loopback is the i-th address of 127.0.0.0/8 (i from 1): each a distinct
// client address, all of them this machine.
func Loopback(i int) string {
	return net.IPv4(127, byte(i>>16), byte(i>>8), byte(i)).String()
}

// Logins runs try from n addresses at once (Loopback(first) onwards), each
// again and again until ctx ends; try is one failed login. It returns the
// number of tries.
func Logins(ctx context.Context, n, first int, try func(ctx context.Context, from string) error) int64 {
	var tries atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		from := Loopback(first + i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				try(ctx, from)
				tries.Add(1)
				select { // a refusal (a ban) comes fast: no busy loop
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	return tries.Load()
}
