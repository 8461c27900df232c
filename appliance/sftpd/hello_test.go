package sftpd

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"net"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/guard"
)

// With the chosen Ed25519 host key and an RSA one beside it, each client
// gets the chosen key whenever it takes it, whatever its order: Go's
// default order (RSA first) gets Ed25519, a client offering only RSA gets
// RSA, and either logs in and works.
func TestHostKeyPerClient(t *testing.T) {
	s := testServer(t, guard.NewLimiter(4, time.Minute))
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.HostKeys = func() []crypto.Signer { return []crypto.Signer{ed, rk} }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Serve(ctx, ln)
	for _, c := range []struct {
		what   string
		algos  []string
		wanted string
	}{
		{"Go's default order", nil, ssh.KeyAlgoED25519},
		{"only RSA", []string{ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512}, ssh.KeyAlgoRSA},
		{"only Ed25519", []string{ssh.KeyAlgoED25519}, ssh.KeyAlgoED25519},
		{"RSA first", []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoED25519}, ssh.KeyAlgoED25519},
	} {
		var got string
		conn, err := ssh.Dial("tcp", ln.Addr().String(), &ssh.ClientConfig{User: "alice",
			Auth:              []ssh.AuthMethod{ssh.Password("alice-password")},
			HostKeyAlgorithms: c.algos,
			HostKeyCallback:   func(_ string, _ net.Addr, k ssh.PublicKey) error { got = k.Type(); return nil }})
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		cl, err := sftp.NewClient(conn)
		if err == nil {
			_, err = cl.Getwd()
			cl.Close()
		}
		conn.Close()
		if err != nil || got != c.wanted {
			t.Errorf("%s: host key %s (%v), want %s", c.what, got, err, c.wanted)
		}
	}
}

// A first packet that is no key exchange offer, or a short one, is read
// as no offer: the keys are all offered and x/crypto judges the packet.
func TestKexInitHostKeys(t *testing.T) {
	offer := append([]byte{msgKexInit}, make([]byte, 16)...)
	offer = append(offer, 0, 0, 0, 4, 'a', 'b', 'c', 'd', 0, 0, 0, 24)
	offer = append(offer, "ssh-ed25519,rsa-sha2-256"...)
	if got, err := kexInitHostKeys(offer); err != nil || len(got) != 2 || got[1] != "rsa-sha2-256" {
		t.Errorf("%q, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {msgKexInit}, offer[:20], offer[:len(offer)-1], append([]byte{21}, offer[1:]...)} {
		if got, err := kexInitHostKeys(bad); err == nil {
			t.Errorf("%q read as %q", bad, got)
		}
	}
}
