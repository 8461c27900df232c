package keys_test

import (
	"crypto/rand"
	"slices"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure/benchkeys"
)

// TestEveryType goes through the table: each row's key (the benchmark's,
// made once) is recognised as that row, survives PEM, and as an SSH host
// key signs with its row's algorithms only.
func TestEveryType(t *testing.T) {
	for _, kt := range keys.Types {
		k, err := benchkeys.Get(kt.Name)
		if err != nil {
			t.Fatalf("%s: %v", kt.Name, err)
		}
		b, err := keys.MarshalPEM(k)
		if err != nil {
			t.Fatal(err)
		}
		k2, err := keys.ParsePEM(b)
		if err != nil {
			t.Fatalf("ParsePEM(%s): %v", kt.Name, err)
		}
		if got, err := keys.NameOf(k2.Public()); got != kt.Name || err != nil {
			t.Errorf("NameOf(parsed %s) = %s, %v", kt.Name, got, err)
		}
		if !kt.SSH {
			continue
		}
		s, err := keys.SSHSigner(k)
		if err != nil {
			t.Fatalf("SSHSigner(%s): %v", kt.Name, err)
		}
		as := s.(ssh.AlgorithmSigner)
		for _, algo := range kt.SSHSignatures {
			if _, err := as.SignWithAlgorithm(rand.Reader, []byte("x"), algo); err != nil {
				t.Errorf("%s does not sign with its own %s: %v", kt.Name, algo, err)
			}
		}
		if _, err := as.SignWithAlgorithm(rand.Reader, []byte("x"), ssh.KeyAlgoRSA); err == nil {
			t.Errorf("%s signs with SHA-1 ssh-rsa", kt.Name)
		}
	}
}

func TestGenerate(t *testing.T) {
	for _, name := range []keys.Name{keys.ECDSAP256, keys.ECDSAP384, keys.Ed25519, keys.RSA1024} {
		k, err := keys.Generate(name, rand.Reader)
		if err != nil {
			t.Fatalf("Generate(%s): %v", name, err)
		}
		if got, _ := keys.NameOf(k.Public()); got != name {
			t.Errorf("Generate(%s) made a %s", name, got)
		}
	}
	if _, err := keys.Generate("rsa-512", rand.Reader); err == nil {
		t.Error("Generate made a key of an unknown type")
	}
}

func TestStrengths(t *testing.T) {
	for _, tc := range []struct {
		name keys.Name
		want int
	}{{keys.RSA1024, 80}, {keys.RSA2048, 112}, {keys.RSA3072, 128}, {keys.RSA4096, 128}, {keys.ECDSAP256, 128}, {keys.ECDSAP384, 192}, {keys.Ed25519, 128}, {"rsa-512", 0}} {
		if got := keys.Strength(tc.name); got != tc.want {
			t.Errorf("Strength(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCandidates: the benchmark's lists, in the order it measures them.
func TestCandidates(t *testing.T) {
	if got, want := keys.TLSCandidates(), []keys.Name{keys.ECDSAP256, keys.ECDSAP384, keys.RSA1024, keys.RSA2048, keys.RSA3072, keys.RSA4096}; !slices.Equal(got, want) {
		t.Errorf("TLSCandidates() = %v, want %v", got, want)
	}
	if got, want := keys.SSHCandidates(), []keys.Name{keys.Ed25519, keys.RSA3072, keys.RSA4096}; !slices.Equal(got, want) {
		t.Errorf("SSHCandidates() = %v, want %v", got, want)
	}
	for _, kt := range keys.Types {
		if kt.BenchTLS && !kt.TLS || kt.BenchSSH && !kt.SSH {
			t.Errorf("%s is benchmarked for a protocol it may not serve", kt.Name)
		}
	}
}

func TestParseGarbage(t *testing.T) {
	if _, err := keys.ParsePEM([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")); err == nil {
		t.Error("ParsePEM(garbage) succeeded")
	}
}
