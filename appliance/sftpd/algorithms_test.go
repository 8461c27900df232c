package sftpd

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestDefaultsAreModernAndSupported(t *testing.T) {
	for _, pq := range []bool{false, true} {
		a := DefaultAlgorithms(pq)
		if err := a.Validate(); err != nil {
			t.Fatalf("DefaultAlgorithms(%v).Validate() = %v", pq, err)
		}
		all := strings.Join(append(append(append(a.KeyExchanges, a.Ciphers...), a.MACs...), a.PublicKeyAuths...), " ")
		for _, weak := range []string{"sha1", "cbc", "group1", "group14", ssh.KeyAlgoRSA + " ", "3des", "arcfour"} {
			if strings.Contains(all+" ", weak) {
				t.Errorf("DefaultAlgorithms(%v) offers %q: %s", pq, weak, all)
			}
		}
		for _, k := range a.KeyExchanges {
			if strings.Contains(k, "nistp") {
				t.Errorf("DefaultAlgorithms(%v) offers the NIST-curve exchange %s", pq, k)
			}
		}
		for _, m := range a.MACs {
			if !strings.HasSuffix(m, "-etm@openssh.com") {
				t.Errorf("DefaultAlgorithms(%v) offers the encrypt-and-MAC %s", pq, m)
			}
		}
		if got := a.KeyExchanges[0] == ssh.KeyExchangeMLKEM768X25519; got != pq {
			t.Errorf("DefaultAlgorithms(%v): hybrid first = %v", pq, got)
		}
	}
	if !hasAES() && DefaultAlgorithms(false).Ciphers[0] != ssh.CipherChaCha20Poly1305 {
		t.Error("without AES instructions ChaCha20-Poly1305 must come first")
	}
}

func TestValidateRejects(t *testing.T) {
	a := DefaultAlgorithms(false)
	a.Ciphers = append(a.Ciphers, "aes128-cbc")
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "aes128-cbc") {
		t.Errorf("Validate with aes128-cbc = %v", err)
	}
	a = DefaultAlgorithms(false)
	a.KeyExchanges = []string{"curve25519-sha265"} // a typo
	if err := a.Validate(); err == nil {
		t.Error("Validate accepted a misspelt key exchange")
	}
}

func TestRSAHostKeyNeverSHA1(t *testing.T) {
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	s, _ := ssh.NewSignerFromSigner(k)
	hs, err := HostKeySigner(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.(ssh.AlgorithmSigner).SignWithAlgorithm(rand.Reader, []byte("x"), ssh.KeyAlgoRSA); err == nil {
		t.Error("the RSA host key still signs with SHA-1 ssh-rsa")
	}
	_, ek, _ := ed25519.GenerateKey(rand.Reader)
	es, _ := ssh.NewSignerFromSigner(ek)
	if got, _ := HostKeySigner(es); got != es {
		t.Error("HostKeySigner changed an Ed25519 signer")
	}
}

func TestDiscouragedWarned(t *testing.T) {
	if d := Discouraged(DefaultAlgorithms(true)); len(d) != 0 {
		t.Errorf("the defaults are discouraged: %v", d)
	}
	a := DefaultAlgorithms(false)
	a.KeyExchanges = append(a.KeyExchanges, ssh.KeyExchangeECDHP256)
	a.MACs = append(a.MACs, ssh.HMACSHA256)
	if d := Discouraged(a); len(d) != 2 {
		t.Errorf("Discouraged = %v, want the NIST exchange and the non-ETM MAC", d)
	}
}
