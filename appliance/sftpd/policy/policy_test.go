package policy

import "testing"

func TestWeak(t *testing.T) {
	for alg, weak := range map[string]bool{
		"hmac-sha1": true, "diffie-hellman-group14-sha1": true, "ssh-rsa": true, "aes128-cbc": true,
		"hmac-sha2-256-etm@openssh.com": false, "curve25519-sha256": false, "rsa-sha2-512": false, "ecdh-sha2-nistp256": false,
	} {
		if got := Weak(alg) != ""; got != weak {
			t.Errorf("Weak(%q) = %q, want weak=%v", alg, Weak(alg), weak)
		}
	}
}

func TestDiscouraged(t *testing.T) {
	got := Discouraged([]string{"curve25519-sha256", "ecdh-sha2-nistp384"}, []string{"hmac-sha2-256-etm@openssh.com", "hmac-sha2-512"})
	if len(got) != 2 {
		t.Errorf("Discouraged = %v, want the NIST exchange and the non-ETM MAC", got)
	}
}
