package sftpd

import (
	"os/exec"
	"slices"
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
}

// negotiate is RFC 4253 7.1's rule: the client's first that the server has.
func negotiate(client, server []string) string {
	for _, c := range client {
		if slices.Contains(server, c) {
			return c
		}
	}
	return ""
}

// On a core without AES instructions every common client settles on
// ChaCha20-Poly1305, whatever its own order: x/crypto/ssh's default list
// (rclone's, AES-GCM first) and OpenSSH's, as `ssh -G` prints it. With
// AES instructions, AES-GCM stays on offer.
func TestCipherNegotiatedWithCommonClients(t *testing.T) {
	var xc ssh.ClientConfig
	xc.SetDefaults()
	clients := map[string][]string{"x/crypto/ssh (rclone)": xc.Ciphers}
	if out, err := exec.Command("ssh", "-G", "bonesync.invalid").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "ciphers "); ok {
				clients["OpenSSH "+strings.TrimSpace(string(must(exec.Command("ssh", "-V").CombinedOutput())))] = strings.Split(v, ",")
			}
		}
	}
	if len(clients) < 2 {
		t.Log("OpenSSH's ssh not installed: its list not checked")
	}
	noAES := defaultAlgorithms(false, false)
	if err := noAES.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, list := range clients {
		if got := negotiate(list, noAES.Ciphers); got != ssh.CipherChaCha20Poly1305 {
			t.Errorf("%s (%v) against the board's list %v negotiates %s, want ChaCha20-Poly1305", name, list, noAES.Ciphers, got)
		}
	}
	if !slices.Contains(defaultAlgorithms(false, true).Ciphers, ssh.CipherAES128GCM) {
		t.Error("with AES instructions AES-GCM must stay on offer")
	}
}

func must(b []byte, _ error) []byte { return b }

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
