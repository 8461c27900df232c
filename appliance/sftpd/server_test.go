package sftpd

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// testServer is a Server with one user, alice (password alice-password).
func testServer(t *testing.T, lim *guard.Limiter) *Server {
	t.Helper()
	st, _ := state.Open(t.TempDir())
	db, _ := users.Open(st)
	if err := db.Add("alice", "alice-password"); err != nil {
		t.Fatal(err)
	}
	files, _ := store.Open(t.TempDir())
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	log := slog.New(slog.DiscardHandler)
	return &Server{Door: auth.New(db, log), Quotas: db, Store: files, Handshakes: lim,
		HostKeys: func() []crypto.Signer { return []crypto.Signer{key} }, PostQuantum: func() bool { return false }, Log: slog.New(slog.DiscardHandler)}
}

// Serve returns when its context ends, even with a client logged in and
// idle: it closes the connections still open (shutdown waited for them).
func TestServeReturnsOnCancelWithClientsLoggedIn(t *testing.T) {
	s := testServer(t, guard.NewLimiter(4, time.Minute))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	conn, err := ssh.Dial("tcp", ln.Addr().String(), &ssh.ClientConfig{User: "alice",
		Auth: []ssh.AuthMethod{ssh.Password("alice-password")}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := sftp.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Getwd(); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after its context ended, a client being logged in")
	}
	if _, err := c.Getwd(); err == nil {
		t.Error("the client's session survived the server's stop")
	}
}

// Connections that send their key exchange slowly or not at all hold no
// handshake slot and, beyond the waiting cap of their address, are closed
// at once; a client from another address logs in all the while, and gives
// its slot back once the key exchange is over.
func TestSlowClientsHoldNoSlot(t *testing.T) {
	lim := guard.NewLimiter(1, time.Second)
	s := testServer(t, lim)
	s.Admission = guard.NewAdmission("sftp", guard.Limits{PerAddress: 32, Waiting: 4}, nil)
	ln := serving(t, s)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	for i := 0; i < 4; i++ {
		c, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// The version line, then a key-exchange packet that announces 1000
		// bytes and stops after 10.
		io.WriteString(c, "SSH-2.0-slow\r\n")
		c.Write([]byte{0, 0, 3, 0xe8, 4, 30, 1, 2, 3, 4})
		// The server's version line: it has admitted the connection
		// (admission runs in each connection's own goroutine).
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "SSH-2.0-") {
			t.Fatalf("slow client %d: the server said %q, %v", i+1, line, err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if lim.InFlight() != 0 {
		t.Fatalf("slow clients hold %d slots, want 0", lim.InFlight())
	}
	over, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	over.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(over); err != nil || len(b) != 0 {
		t.Fatalf("a fifth waiting connection from one address: read %q, %v; want it closed at once", b, err)
	}
	conn, err := ssh.Dial("tcp", ln.Addr().String(), &ssh.ClientConfig{User: "alice",
		Auth: []ssh.AuthMethod{ssh.Password("alice-password")}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatalf("login while slow clients waited: %v", err)
	}
	defer conn.Close()
	if lim.InFlight() != 0 {
		t.Errorf("a logged-in client still holds %d slots", lim.InFlight())
	}
}

// Under a flood the key exchange gets a quarter of the handshake time,
// but the login its whole: a person typing a password is not cut off.
func TestLoginKeepsItsTimeUnderAFlood(t *testing.T) {
	s := testServer(t, guard.NewLimiter(2, time.Second))
	s.HandshakeTimeout = 4 * time.Second
	s.Admission = guard.NewAdmission("sftp", guard.Limits{PerAddress: 32, Waiting: 16}, nil)
	for i := 0; i < guard.MaxWaiting/2+10; i++ { // over half the places waiting: 2 s for a handshake
		s.Admission.Admit(fmt.Sprintf("10.9.%d.%d", i/200, i%200), nil)
	}
	ln := serving(t, s)
	typing := ssh.PasswordCallback(func() (string, error) {
		time.Sleep(3 * time.Second) // past the key exchange's 2 s, within the login's 4
		return "alice-password", nil
	})
	conn, err := ssh.Dial("tcp", ln.Addr().String(), &ssh.ClientConfig{User: "alice",
		Auth: []ssh.AuthMethod{typing}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatalf("a login typed in 3 s under a flood: %v", err)
	}
	conn.Close()
}

// serving runs s on a local port until the test ends.
func serving(t *testing.T, s *Server) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Serve(ctx, ln)
	return ln
}
