// Package policy is the SFTP server's rule for SSH algorithms: which ones
// are refused outright and which are allowed only with a warning. It is a
// leaf package so that the config file's parser (appliance/config) can
// report a refused name at its file:line, while the rule stays the SSH
// server's.
package policy

import (
	"strings"

	"golang.org/x/crypto/ssh"
)

// Weak says why an SSH algorithm is refused even though x/crypto/ssh
// implements it, or "" if it is modern enough: nothing with SHA-1, no CBC
// mode.
func Weak(alg string) string {
	switch {
	case strings.Contains(alg, "sha1") || alg == ssh.KeyAlgoRSA:
		return "it uses SHA-1"
	case strings.Contains(alg, "cbc"):
		return "it uses CBC mode"
	}
	return ""
}

// Discouraged lists what key exchange and MAC lists offer beyond the
// defaults: NIST-curve key exchanges and encrypt-and-MAC MACs, which an
// old client may need and hardening guides drop. The server allows them
// from the config with a warning.
func Discouraged(kex, macs []string) []string {
	var out []string
	for _, k := range kex {
		if strings.HasPrefix(k, "ecdh-sha2-nistp") {
			out = append(out, k+" (a NIST-curve key exchange)")
		}
	}
	for _, m := range macs {
		if !strings.HasSuffix(m, "-etm@openssh.com") {
			out = append(out, m+" (MAC before encryption; the -etm@openssh.com form is safer)")
		}
	}
	return out
}
