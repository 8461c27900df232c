package sftpd

import (
	"fmt"
	"slices"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/cpu"

	"github.com/bonesync/bonesync/appliance/sftpd/policy"
)

// Algorithms are the SSH algorithm lists the server offers, in preference
// order: modern only. No SHA-1 anywhere (no ssh-rsa signatures, no
// hmac-sha1, no diffie-hellman-group1/14-sha1), no CBC ciphers.
type Algorithms struct {
	KeyExchanges   []string
	Ciphers        []string
	MACs           []string
	PublicKeyAuths []string
}

// Overrides are lists that replace the defaults (nil: the default), from
// the config's ssh_kex, ssh_ciphers and ssh_macs.
type Overrides struct {
	KeyExchanges, Ciphers, MACs []string
}

// Configured returns the default lists with the overrides in their place.
func Configured(o Overrides, postQuantum bool) Algorithms {
	a := DefaultAlgorithms(postQuantum)
	if o.KeyExchanges != nil {
		a.KeyExchanges = o.KeyExchanges
	}
	if o.Ciphers != nil {
		a.Ciphers = o.Ciphers
	}
	if o.MACs != nil {
		a.MACs = o.MACs
	}
	return a
}

// DefaultAlgorithms returns the lists for this CPU. The hybrid
// post-quantum exchange leads when postQuantum is set.
func DefaultAlgorithms(postQuantum bool) Algorithms { return defaultAlgorithms(postQuantum, hasAES()) }

// defaultAlgorithms: where the CPU has AES instructions, AES-GCM and
// ChaCha20-Poly1305 both. Where it has none (the BeagleBone's Cortex-A8),
// no AES-GCM: in SSH the client's order decides (RFC 4253 7.1), and
// x/crypto/ssh's clients (rclone among them) list AES-GCM first, which
// in software costs the board about 3.5 times ChaCha20-Poly1305 (make
// bench). Without it every client that has ChaCha20-Poly1305 (OpenSSH,
// PuTTY, x/crypto) settles on it, and AES-CTR stays for the rest.
func defaultAlgorithms(postQuantum, aes bool) Algorithms {
	aead := []string{ssh.CipherAES128GCM, ssh.CipherAES256GCM, ssh.CipherChaCha20Poly1305}
	if !aes {
		aead = []string{ssh.CipherChaCha20Poly1305}
	}
	// No NIST-curve exchanges: hardening guides and audits ask for X25519
	// (x/crypto/ssh offers its @libssh.org alias with it). An old client
	// that needs one can have it back with ssh_kex in the config.
	kex := []string{ssh.KeyExchangeCurve25519}
	if postQuantum {
		kex = append([]string{ssh.KeyExchangeMLKEM768X25519}, kex...)
	}
	return Algorithms{
		KeyExchanges: kex,
		Ciphers:      append(aead, ssh.CipherAES128CTR, ssh.CipherAES192CTR, ssh.CipherAES256CTR),
		// Encrypt-then-MAC only (the AEAD ciphers need no MAC at all).
		MACs: []string{ssh.HMACSHA256ETM, ssh.HMACSHA512ETM},
		PublicKeyAuths: []string{
			ssh.KeyAlgoED25519, ssh.KeyAlgoSKED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoSKECDSA256,
			ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256,
		},
	}
}

// Discouraged lists what a is allowed with a warning only (policy.Discouraged).
func Discouraged(a Algorithms) []string { return policy.Discouraged(a.KeyExchanges, a.MACs) }

func hasAES() bool {
	return cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ || cpu.ARM64.HasAES && cpu.ARM64.HasPMULL || cpu.ARM.HasAES && cpu.ARM.HasPMULL
}

// Validate checks every list against what golang.org/x/crypto/ssh
// implements and considers secure (ssh.SupportedAlgorithms), so that a typo
// or a weak choice is an error at start-up, not a silent downgrade.
func (a Algorithms) Validate() error {
	sup := ssh.SupportedAlgorithms()
	for _, l := range []struct {
		name      string
		have, sup []string
	}{
		{"key exchange", a.KeyExchanges, sup.KeyExchanges},
		{"cipher", a.Ciphers, sup.Ciphers},
		{"MAC", a.MACs, sup.MACs},
		{"public key", a.PublicKeyAuths, sup.PublicKeyAuths},
	} {
		if len(l.have) == 0 {
			return fmt.Errorf("no %s algorithms configured", l.name)
		}
		for _, alg := range l.have {
			if !slices.Contains(l.sup, alg) {
				return fmt.Errorf("%s algorithm %q is not supported (have %v)", l.name, alg, l.sup)
			}
			if why := policy.Weak(alg); why != "" {
				return fmt.Errorf("%s algorithm %q is refused: %s", l.name, alg, why)
			}
		}
	}
	return nil
}
