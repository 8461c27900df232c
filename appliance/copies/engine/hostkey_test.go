package engine

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/copies"
)

// hostKey is a new ed25519 host key.
func hostKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sshServer answers SSH handshakes on 127.0.0.1 with the host key key
// holds at the time (a test swaps it: the target's keys made again), and
// returns its address; no one logs in.
func sshServer(t *testing.T, key *atomic.Pointer[ssh.Signer]) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			cfg := &ssh.ServerConfig{NoClientAuth: true} // the handshake ends before a login
			cfg.AddHostKey(*key.Load())
			go func() {
				ssh.NewServerConn(c, cfg) // the client goes once it has seen the key
				c.Close()
			}()
		}
	}()
	return l.Addr().String()
}

// A target's host key is pinned at the first run, and a second target's
// beside it; a changed one refuses the run as a *copies.HostKeyChanged
// with both fingerprints as ssh-keygen -lf prints them, kept in the
// status; accepting it takes only the key shown, pins it in place of the
// old one (the other target's pin kept), and the next check passes.
func TestHostKeyChangedThenAccepted(t *testing.T) {
	var key, other atomic.Pointer[ssh.Signer]
	old, second := hostKey(t), hostKey(t)
	key.Store(&old)
	other.Store(&second)
	host, host2 := sshServer(t, &key), sshServer(t, &other)
	c := newBox(t).copier(t, "sftp://me@"+host+"/copy")
	c.Settings.KnownHosts = copies.KnownHosts(c.Work)
	for _, h := range []string{host, host2, host} {
		if err := checkHostKey(h, c.Settings.KnownHosts); err != nil {
			t.Fatalf("checkHostKey(%s) the first time = %v", h, err)
		}
	}
	if b, _ := os.ReadFile(c.Settings.KnownHosts); strings.Count(string(b), "\n") != 2 {
		t.Fatalf("pinned:\n%s", b)
	}

	renewed := hostKey(t)
	key.Store(&renewed)
	r := c.Run(context.Background())
	var ch *copies.HostKeyChanged
	if !errors.As(r.Err, &ch) {
		t.Fatalf("a run after the key changed = %v, want a *copies.HostKeyChanged", r.Err)
	}
	fp := regexp.MustCompile(`^SHA256:[A-Za-z0-9+/]{43} \(ED25519\)$`)
	if ch.Host != host || ch.Pinned != fingerprint(old.PublicKey()) || ch.Offered != fingerprint(renewed.PublicKey()) || !fp.MatchString(ch.Offered) {
		t.Errorf("the change = %+v, want %s to %s", ch, fingerprint(old.PublicKey()), fingerprint(renewed.PublicKey()))
	}
	st, _ := copies.ReadStatus(c.Work)
	if st.HostKey == nil || *st.HostKey != *ch || !strings.Contains(st.String(), ch.Offered) || !strings.Contains(st.String(), "accept-key") {
		t.Fatalf("the status = %+v, %q", st.HostKey, st)
	}

	if _, err := AcceptHostKey(c.Work, fingerprint(second.PublicKey())); err == nil {
		t.Fatal("a key other than the one offered was accepted")
	}
	if err := checkHostKey(host, c.Settings.KnownHosts); !errors.As(err, &ch) {
		t.Fatalf("after a refused acceptance: %v", err)
	}
	sha, _, _ := strings.Cut(ch.Offered, " ")
	got, err := AcceptHostKey(c.Work, sha)
	if err != nil || got.Offered != ch.Offered {
		t.Fatalf("AcceptHostKey(%s) = %+v, %v", sha, got, err)
	}
	for _, h := range []string{host, host2} {
		if err := checkHostKey(h, c.Settings.KnownHosts); err != nil {
			t.Errorf("checkHostKey(%s) after the acceptance = %v", h, err)
		}
	}
	if st, _ := copies.ReadStatus(c.Work); st.HostKey != nil || !strings.Contains(st.Error, "accepted") {
		t.Errorf("the status after the acceptance: %+v", st)
	}
	if _, err := AcceptHostKey(c.Work, ""); err == nil {
		t.Error("accepted twice")
	}
}
