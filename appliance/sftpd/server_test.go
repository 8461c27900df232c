package sftpd

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

// Serve returns when its context ends, even with a client logged in and
// idle: it closes the connections still open (shutdown waited for them).
func TestServeReturnsOnCancelWithClientsLoggedIn(t *testing.T) {
	dir := t.TempDir()
	st, _ := state.Open(dir)
	db, _ := users.Open(st)
	if err := db.Add("alice", "alice-password"); err != nil {
		t.Fatal(err)
	}
	files, _ := store.Open(t.TempDir())
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	s := &Server{Users: db, Store: files, Guard: guard.New(io.Discard), Handshakes: guard.NewLimiter(4, time.Minute),
		HostKey: func() crypto.Signer { return key }, PostQuantum: func() bool { return false }, Log: io.Discard}
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
