package front

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/sysd"
)

// lockedBuffer is a log the listener writes from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testListener struct {
	addr   string
	lim    *guard.Limiter
	log    *lockedBuffer
	roots  *x509.CertPool
	client *http.Client
}

func listen(t *testing.T, limits guard.Limits) *testListener {
	t.Helper()
	ca := newCA(t)
	chain := leaf(t, ca)
	cfg := TLSConfig(func() []tls.Certificate { return []tls.Certificate{*chain} }, func() bool { return false }, time.Now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &testListener{addr: ln.Addr().String(), lim: guard.NewLimiter(1, 300*time.Millisecond), log: &lockedBuffer{}, roots: x509.NewCertPool()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(HandshakeListener(ctx, ln, cfg, Handshakes{
		Slots: l.lim, Admission: guard.NewAdmission("https", limits, sysd.NewLogger(l.log)), Timeout: 5 * time.Second, Log: sysd.NewLogger(l.log),
	}))
	t.Cleanup(func() { cancel(); srv.Close() })
	l.roots.AddCert(ca.Cert)
	l.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: l.roots, ServerName: "localhost"}, MaxIdleConnsPerHost: 1}}
	return l
}

func (l *testListener) get() error {
	resp, err := l.client.Get("https://" + l.addr + "/")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	return err
}

// dialFrom connects from a source address of the loopback network.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Idle clients and clients that send their ClientHello a byte at a time
// hold no handshake slot: with the only slot free, a new client gets
// through, and a session already established is still served.
func TestWaitingClientsHoldNoSlot(t *testing.T) {
	l := listen(t, guard.Limits{PerAddress: 64, Waiting: 16})
	if err := l.get(); err != nil { // a kept-alive session
		t.Fatal(err)
	}
	dialFrom(t, "127.0.0.2", l.addr) // says nothing
	slow := dialFrom(t, "127.0.0.2", l.addr)
	// A handshake record that announces 300 bytes and sends 40.
	slow.Write(append([]byte{0x16, 0x03, 0x01, 0x01, 0x2c}, make([]byte, 40)...))
	time.Sleep(200 * time.Millisecond)
	if n := l.lim.InFlight(); n != 0 {
		t.Fatalf("idle and slow connections hold %d handshake slots, want 0", n)
	}
	fresh := &tls.Config{RootCAs: l.roots, ServerName: "localhost"}
	c, err := tls.Dial("tcp", l.addr, fresh)
	if err != nil {
		t.Fatalf("a new client was refused while others only waited: %v", err)
	}
	c.Close()
	if err := l.get(); err != nil {
		t.Errorf("the established session was not served: %v", err)
	}
}

// One address may keep only so many connections waiting; the next is
// closed at once, while other addresses are still served. The refusal is
// logged once, not per connection.
func TestWaitingPerAddress(t *testing.T) {
	l := listen(t, guard.Limits{PerAddress: 64, Waiting: 3})
	for i := 0; i < 3; i++ {
		dialFrom(t, "127.0.0.2", l.addr)
	}
	time.Sleep(100 * time.Millisecond)
	for i := 0; i < 5; i++ {
		c := dialFrom(t, "127.0.0.2", l.addr)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("connection %d over the limit: read %v, want EOF (closed by the server)", 4+i, err)
		}
	}
	if err := l.get(); err != nil {
		t.Errorf("another address was refused: %v", err)
	}
	if n := strings.Count(l.log.String(), "service=https addr=127.0.0.2 "); n != 1 {
		t.Errorf("the refusal was logged %d times, want once:\n%s", n, l.log)
	}
}

// One address may hold only so many connections, handshaken or not.
func TestConnectionsPerAddress(t *testing.T) {
	l := listen(t, guard.Limits{PerAddress: 2, Waiting: 16})
	cfg := &tls.Config{RootCAs: l.roots, ServerName: "localhost"}
	for i := 0; i < 2; i++ {
		c, err := tls.Dial("tcp", l.addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	if c, err := tls.Dial("tcp", l.addr, cfg); err == nil {
		c.Close()
		t.Fatal("a third connection from the same address was served")
	}
}

// A failed handshake is logged, with a hint when the client does not trust
// the CA; a plain-HTTP request on the HTTPS port gets a plain-HTTP answer.
func TestHandshakeFailures(t *testing.T) {
	l := listen(t, guard.Limits{PerAddress: 64, Waiting: 16})
	if c, err := tls.Dial("tcp", l.addr, &tls.Config{ServerName: "localhost"}); err == nil {
		c.Close()
		t.Fatal("a client that does not trust the CA completed a handshake")
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !strings.Contains(l.log.String(), "TLS handshake failed (logged once an hour per address and error) addr=127.0.0.1 "); {
		time.Sleep(20 * time.Millisecond)
	}
	if log := l.log.String(); !strings.Contains(log, "TLS handshake failed (logged once an hour per address and error) addr=127.0.0.1 ") || !strings.Contains(log, "/ca.crt") {
		t.Errorf("the failed handshake was not logged with its hint:\n%s", log)
	}
	c := dialFrom(t, "127.0.0.1", l.addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.0 400") || !strings.Contains(string(b), "https://") {
		t.Errorf("plain HTTP on the HTTPS port got %q", b)
	}
}

// The plain-HTTP port closes an address's connections over its cap, and
// counts a connection only until it closes.
func TestAdmitListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(AdmitListener(ln, guard.NewAdmission("http", guard.Limits{PerAddress: 2, Waiting: 2}, nil)))
	defer srv.Close()
	a := dialFrom(t, "127.0.0.2", ln.Addr().String())
	dialFrom(t, "127.0.0.2", ln.Addr().String())
	time.Sleep(100 * time.Millisecond)
	third := dialFrom(t, "127.0.0.2", ln.Addr().String())
	third.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := third.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a third connection: read %v, want EOF", err)
	}
	a.Close()
	// The server sees the close when it reads: until then a new
	// connection may still be over the cap, and is closed.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c := dialFrom(t, "127.0.0.2", ln.Addr().String())
		io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		if strings.HasSuffix(string(b), "ok") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after one closed, a new connection got %q", b)
		}
	}
}
