package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
)

// With the handshake slots taken by stalled clients, a new client is shed
// but a session already established is still served.
func TestHandshakeCapSparesEstablishedSessions(t *testing.T) {
	ca := newCA(t)
	chain := leaf(t, ca)
	cfg := TLSConfig(func() *tls.Certificate { return chain }, func() bool { return false }, time.Now)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lim := guard.NewLimiter(1, 300*time.Millisecond)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(HandshakeListener(ctx, ln, cfg, lim, 5*time.Second))
	defer srv.Close()

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}, MaxIdleConnsPerHost: 1}}
	get := func() error {
		resp, err := client.Get("https://" + ln.Addr().String() + "/")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	if err := get(); err != nil { // establishes a kept-alive session
		t.Fatal(err)
	}
	// A client that connects and says nothing holds no slot...
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	time.Sleep(100 * time.Millisecond)
	if lim.InFlight() != 0 {
		t.Fatalf("an idle connection holds %d handshake slots, want 0", lim.InFlight())
	}
	// ...but one that starts a handshake and stalls holds the only one.
	stalled, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.Write([]byte{0x16, 0x03, 0x01}) // the start of a TLS record
	for i := 0; lim.InFlight() == 0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if lim.InFlight() != 1 {
		t.Fatalf("the stalled client holds %d slots, want 1", lim.InFlight())
	}
	// A new client finds no slot and is dropped...
	fresh := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	if c, err := tls.Dial("tcp", ln.Addr().String(), fresh); err == nil {
		c.Close()
		t.Error("a new handshake went through while the cap was reached")
	}
	// ...while the established session is still served.
	if err := get(); err != nil {
		t.Errorf("the established session was not served during the flood: %v", err)
	}
}
