// Package web is the box's HTTP side: the HTTPS server (status page, CA
// download, report.json) on the chosen certificate, and the plain-HTTP
// listener that offers only the CA download and a redirect to HTTPS.
package front

import (
	"crypto/tls"
	"time"
)

// TLSConfig is the HTTPS configuration: TLS 1.2 at least, AEAD suites with
// forward secrecy only (TLS 1.3's are all AEAD; Go puts ChaCha20-Poly1305
// first on CPUs without AES instructions, like the BeagleBone's Cortex-A8),
// and session tickets on with keys that crypto/tls rotates itself (a new key
// every day, each accepted for a week). now is the clock floor, so ticket ages
// are judged by a clock that never reads 1970. The offered key exchanges come
// from the decision: the post-quantum hybrid first when it met the target.
// certs are the chosen key's certificate and, after it, the other
// family's: crypto/tls gives each client the first whose signatures it
// takes (its signature_algorithms), so a client that offers only RSA
// signatures gets the RSA one and every other the chosen one.
func TLSConfig(certs func() []tls.Certificate, postQuantum func() bool, now func() time.Time) *tls.Config {
	base := []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		},
		CurvePreferences: base,
		Time:             now,
		NextProtos:       []string{"h2", "http/1.1"},
	}
	// The decision and certificate can change while serving (reissue on a new
	// address, `bonesync bench`), so both are read per handshake.
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := cfg.Clone()
		c.GetConfigForClient = nil
		c.Certificates = certs()
		if postQuantum() {
			c.CurvePreferences = append([]tls.CurveID{tls.X25519MLKEM768}, base...)
		}
		return c, nil
	}
	return cfg
}
