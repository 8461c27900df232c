package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("bonesync", []string{"fritz.box"}, now, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// verify checks a leaf issued by ca for names, the way a phone that trusts
// the CA would.
func verify(t *testing.T, ca *CA, names Names, host string) error {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf, err := ca.Issue(key.Public(), names, now, rand.Reader)
	if err != nil {
		t.Fatalf("Issue(%v): %v", names, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, CurrentTime: now})
	return err
}

func TestNameConstraintsBind(t *testing.T) {
	ca := newCA(t)
	if !ca.Cert.PermittedDNSDomainsCritical {
		t.Fatal("name constraints are not critical")
	}
	if ca.Hostname() != "bonesync" {
		t.Errorf("Hostname() = %q, want bonesync", ca.Hostname())
	}
	for _, tc := range []struct {
		names Names
		host  string
		ok    bool
	}{
		{Names{DNS: []string{"bonesync"}}, "bonesync", true},
		{Names{DNS: []string{"bonesync.local"}}, "bonesync.local", true},
		{Names{DNS: []string{"bonesync.lan"}}, "bonesync.lan", true},
		{Names{DNS: []string{"bonesync.home.arpa"}}, "bonesync.home.arpa", true},
		{Names{DNS: []string{"bonesync.internal"}}, "bonesync.internal", true},
		{Names{DNS: []string{"bonesync.fritz.box"}}, "bonesync.fritz.box", true}, // extra_domains
		{Names{DNS: []string{"example.lan"}}, "example.lan", false},
		{Names{DNS: []string{"bonesync.example.com"}}, "bonesync.example.com", false},
		{Names{DNS: []string{"localhost"}}, "localhost", true},
		{Names{IPs: Addrs("192.168.1.20")}, "192.168.1.20", true},
		{Names{IPs: Addrs("10.1.2.3")}, "10.1.2.3", true},
		{Names{IPs: Addrs("fe80::1")}, "fe80::1", true},
		{Names{IPs: Addrs("::1")}, "::1", true},
		// Everything else must fail, even if the attacker asks for it.
		{Names{DNS: []string{"www.example-bank.com"}}, "www.example-bank.com", false},
		{Names{DNS: []string{"local"}}, "local", false},
		{Names{DNS: []string{"otherbox.local"}}, "otherbox.local", false},
		{Names{DNS: []string{"bonesync.local", "accounts.google.com"}}, "bonesync.local", false},
		{Names{IPs: Addrs("8.8.8.8")}, "8.8.8.8", false},
		{Names{IPs: Addrs("2001:db8::1")}, "2001:db8::1", false},
	} {
		err := verify(t, ca, tc.names, tc.host)
		if (err == nil) != tc.ok {
			t.Errorf("leaf for %v verified as %q: err = %v, want ok=%v", tc.names, tc.host, err, tc.ok)
		}
	}
}

func TestBoxNamesDropsPublicAddresses(t *testing.T) {
	n := BoxNames("Nas", []string{"Fritz.Box."}, Addrs("192.168.1.2", "8.8.8.8", "127.0.0.1", "192.168.1.2"))
	if got, want := n.String(), "[nas nas.local nas.lan nas.home.arpa nas.internal nas.home nas.localdomain nas.box nas.home.lan nas.fritz.box localhost] 192.168.1.2 127.0.0.1"; got != want {
		t.Errorf("BoxNames = %s, want %s", got, want)
	}
}

func TestNeedsReissue(t *testing.T) {
	ca := newCA(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	names := BoxNames("bonesync", nil, Addrs("192.168.1.2"))
	leaf, err := ca.Issue(key.Public(), names, now, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, tc := range []struct {
		name  string
		key   any
		names Names
		at    time.Time
		want  bool
	}{
		{"fresh", key.Public(), names, now, false},
		{"new address", key.Public(), BoxNames("bonesync", nil, Addrs("192.168.1.3")), now, true},
		{"other key", other.Public(), names, now, true},
		{"near expiry", key.Public(), names, now.Add(LeafValidity - RenewBefore + time.Hour), true},
		{"clock went back before issue", key.Public(), names, now.Add(-2 * time.Hour), true},
	} {
		if got, why := NeedsReissue(leaf, ca, tc.key, tc.names, tc.at); got != tc.want {
			t.Errorf("%s: NeedsReissue = %v (%s), want %v", tc.name, got, why, tc.want)
		}
	}
}

func TestCASaveLoad(t *testing.T) {
	dir, _ := state.Open(t.TempDir())
	if _, err := LoadCA(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadCA(empty) = %v, want ErrNotExist", err)
	}
	ca := newCA(t)
	if err := ca.Save(dir); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir.Join(state.CAKey))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("ca.key mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint(got.Cert) != Fingerprint(ca.Cert) {
		t.Error("loaded CA differs")
	}
	if !strings.HasPrefix(Fingerprint(ca.Cert), Fingerprint(ca.Cert)[:2]+":") || len(Fingerprint(ca.Cert)) != 95 {
		t.Errorf("fingerprint %q is not 32 colon-separated bytes", Fingerprint(ca.Cert))
	}
}

func TestDamagedCAIsNeverRemade(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(d *state.Dir)
		path   string
	}{
		{"truncated cert", func(d *state.Dir) { os.WriteFile(d.Join(state.CACert), []byte("-----BEGIN CERT"), 0o644) }, state.CACert},
		{"empty key", func(d *state.Dir) { os.WriteFile(d.Join(state.CAKey), nil, 0o600) }, state.CAKey},
		{"key lost", func(d *state.Dir) { os.Remove(d.Join(state.CAKey)) }, state.CAKey},
		{"key swapped", func(d *state.Dir) {
			other, _ := NewCA("x", nil, now, rand.Reader)
			od := &state.Dir{Path: t.TempDir()}
			other.Save(od)
			kb, _ := os.ReadFile(od.Join(state.CAKey))
			os.WriteFile(d.Join(state.CAKey), kb, 0o600)
		}, state.CAKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := state.Open(t.TempDir())
			newCA(t).Save(dir)
			tc.damage(dir)
			_, err := LoadCA(dir)
			if !state.IsDamaged(err) {
				t.Fatalf("LoadCA = %v, want Damaged", err)
			}
			if !strings.Contains(err.Error(), dir.Join(tc.path)) || !strings.Contains(err.Error(), "not remade automatically") {
				t.Errorf("error %q should name %s and say what to do", err, tc.path)
			}
		})
	}
}

func TestInterfaceAddrsPermitted(t *testing.T) {
	for _, ip := range InterfaceAddrs() {
		if !Permitted(ip) {
			t.Errorf("InterfaceAddrs returned %v outside the permitted ranges", ip)
		}
	}
	if !Permitted(net.ParseIP("127.0.0.1")) || Permitted(net.ParseIP("1.1.1.1")) {
		t.Error("Permitted is wrong about loopback or a public address")
	}
}

// The router's search domain, from the resolver's file, at most four of
// at most four labels; the home suffixes are not repeated.
func TestLearnedDomains(t *testing.T) {
	f := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(f, []byte("# by PID 1\nnameserver 192.168.1.1\nsearch Home. lan speedport.ip a.b.c.d.e bad_label.x\ndomain speedport.ip\n"), 0o644)
	if got := LearnedDomains(f); strings.Join(got, " ") != "speedport.ip" {
		t.Errorf("learned %v, want [speedport.ip]", got)
	}
	if got := LearnedDomains(filepath.Join(t.TempDir(), "none")); got != nil {
		t.Errorf("from no file: %v", got)
	}
}

// A CA read from disk parses its key only to sign, and signs with it.
func TestLoadedCASignsLazily(t *testing.T) {
	dir, _ := state.Open(t.TempDir())
	if err := newCA(t).Save(dir); err != nil {
		t.Fatal(err)
	}
	ca, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Key != nil {
		t.Error("LoadCA parsed the key")
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf, err := ca.Issue(k.Public(), Names{DNS: []string{"bonesync.local"}}, now, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.CheckSignatureFrom(ca.Cert); err != nil {
		t.Errorf("leaf not signed by the CA: %v", err)
	}
	// Saved again, the same key.
	dir2, _ := state.Open(t.TempDir())
	if err := ca.Save(dir2); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(dir.Join(state.CAKey))
	b, _ := os.ReadFile(dir2.Join(state.CAKey))
	if !bytes.Equal(a, b) {
		t.Error("a loaded CA saved another key")
	}
}
