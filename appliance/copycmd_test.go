package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/copies"
)

// `bonesync copy accept-key`, as the console runs it: the change shown,
// nothing pinned without a yes, the key shown pinned with one, and the
// acceptance in the audit log; a fingerprint on the command line that is
// not the one offered is refused.
func TestCopyAcceptKey(t *testing.T) {
	state := t.TempDir()
	dir := copies.Dir(state)
	os.MkdirAll(dir, 0o700)
	newKey := func() ssh.PublicKey {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		k, err := ssh.NewPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	old, renewed := newKey(), newKey()
	pinned := knownhosts.Line([]string{"nas"}, old) + "\n"
	os.WriteFile(copies.KnownHosts(dir), []byte(pinned), 0o600)
	ch := &copies.HostKeyChanged{Host: "nas:22", Pinned: ssh.FingerprintSHA256(old) + " (ED25519)",
		Offered: ssh.FingerprintSHA256(renewed) + " (ED25519)", Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(renewed)))}
	copies.WriteStatus(dir, copies.Status{Target: "sftp://me@nas/b", Error: ch.Error(), HostKey: ch})
	accept := func(stdin string, args ...string) (string, error) {
		var out strings.Builder
		err := run(context.Background(), append([]string{"copy", "-state", state, "accept-key"}, args...), strings.NewReader(stdin), &out, &out)
		return out.String(), err
	}

	out, err := accept("no\n")
	if err == nil || !strings.Contains(out, ch.Pinned) || !strings.Contains(out, ch.Offered) || !strings.Contains(out, "ssh-keygen -lf") {
		t.Fatalf("accept-key, answered no: %v\n%s", err, out)
	}
	if _, err := accept("", ssh.FingerprintSHA256(old)); err == nil {
		t.Fatal("accept-key took a fingerprint other than the one offered")
	}
	if b, _ := os.ReadFile(copies.KnownHosts(dir)); string(b) != pinned {
		t.Fatalf("refused, yet the pins changed:\n%s", b)
	}
	if out, err := accept("yes\n"); err != nil || !strings.Contains(out, "accepted") {
		t.Fatalf("accept-key, answered yes: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(copies.KnownHosts(dir)); string(b) != knownhosts.Line([]string{"nas"}, renewed)+"\n" {
		t.Errorf("the pins after the acceptance:\n%s", b)
	}
	rec, err := audit.Open(audit.Dir(state))
	if err != nil {
		t.Fatal(err)
	}
	if ev, _ := rec.Recent(1); len(ev) != 1 || ev[0].Kind != audit.Admin || !strings.Contains(ev[0].What, ch.Offered) {
		t.Errorf("the audit log: %+v", ev)
	}
}
