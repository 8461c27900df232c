// Package pki is the box's certificate authority: a root made on first start
// whose certificate carries critical X.509 Name Constraints limiting it to the
// box's own names and private addresses, and the server certificate it issues
// for the key the benchmark chose.
//
// The constraints are the point. A user installs the box's CA on a phone so
// the phone trusts https://bonesync.local. Without constraints that CA could
// mint a certificate for any bank; with them, a certificate it issued for any
// other name fails verification in every client that honours RFC 5280.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/state"
)

// CAValidity is how long the root is valid. Long, because every device that
// trusts it would have to be told about a new one.
const CAValidity = 20 * 365 * 24 * time.Hour

// CA is the box's certificate authority.
type CA struct {
	Cert *x509.Certificate
	// Key is a new CA's key; a CA read from disk keeps its key's file
	// (keyPEM) and parses it only to sign (Signer): a box that issues
	// nothing keeps neither the key nor what parsing a P-384 key builds
	// (the curve's table of multiples, a quarter of a megabyte of heap
	// for the process's life, walked by every collection).
	Key     crypto.Signer
	keyPEM  []byte
	keyPath string
}

// Signer is the CA's key, checked against its certificate.
func (ca *CA) Signer() (crypto.Signer, error) {
	if ca.Key != nil {
		return ca.Key, nil
	}
	key, err := keys.ParsePEM(ca.keyPEM)
	if err == nil && !publicEqual(ca.Cert.PublicKey, key.Public()) {
		err = errors.New("does not match ca.crt")
	}
	if err != nil {
		return nil, &state.Damaged{Path: ca.keyPath, Reason: err.Error(), Advice: caAdvice}
	}
	return key, nil
}

// NewCA makes a root for a box called hostname (its names: BoxDNSNames with
// the extra domain suffixes), valid from now (which must come from the clock
// floor). Its key is ECDSA P-384: it signs only rarely, and clients verify
// it cheaply.
func NewCA(hostname string, extra []string, now time.Time, random io.Reader) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P384(), random)
	if err != nil {
		return nil, fmt.Errorf("make CA key: %w", err)
	}
	dns := BoxDNSNames(hostname, extra)
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(random),
		Subject: pkix.Name{
			CommonName:   fmt.Sprintf("bonesync %s local CA", hostname),
			Organization: []string{"bonesync"},
		},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CAValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,

		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         dns,
		PermittedIPRanges:           PermittedRanges,
		// No e-mail or URI names either: the CA is for this box's web and
		// file service only.
		PermittedEmailAddresses: dns,
		PermittedURIDomains:     dns,
	}
	der, err := x509.CreateCertificate(random, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("make CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

func randomSerial(random io.Reader) *big.Int {
	n, err := rand.Int(random, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("read random serial: %v", err))
	}
	return n.Add(n, big.NewInt(1))
}

// Fingerprint is the SHA-256 of the certificate, in the colon-separated
// upper-case hex that phones and browsers show.
func Fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// PEM returns the CA certificate in PEM form, as served at /ca.crt.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// Hostname is the box name the CA was made for: its one permitted DNS
// name that is a single label, not localhost ("" if none).
func (ca *CA) Hostname() string {
	for _, d := range ca.Cert.PermittedDNSDomains {
		if !strings.Contains(d, ".") && d != "localhost" {
			return d
		}
	}
	return ""
}

// Permits reports whether the CA may certify the box's DNS name h.
func (ca *CA) Permits(hostname string) bool {
	for _, d := range ca.Cert.PermittedDNSDomains {
		if strings.EqualFold(d, hostname) {
			return true
		}
	}
	return false
}

// caAdvice is what to do with a damaged CA: never regenerated silently,
// because every device that trusts it would stop trusting the box.
const caAdvice = "the CA is not remade automatically, since every device that trusts it would have to trust a new one: " +
	"restore ca.crt and ca.key from a backup, or delete both to make a new CA"

// LoadCA reads the CA from dir. A missing CA gives an error satisfying
// errors.Is(err, fs.ErrNotExist); a damaged one a *state.Damaged.
func LoadCA(dir *state.Dir) (*CA, error) {
	certPEM, err := dir.Read(state.CACert)
	certMissing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !certMissing {
		return nil, withAdvice(err)
	}
	keyPEM, kerr := dir.Read(state.CAKey)
	keyMissing := errors.Is(kerr, fs.ErrNotExist)
	if kerr != nil && !keyMissing {
		return nil, withAdvice(kerr)
	}
	switch {
	case certMissing && keyMissing:
		return nil, fmt.Errorf("load CA: %w", fs.ErrNotExist)
	case certMissing:
		return nil, &state.Damaged{Path: dir.Join(state.CACert), Reason: "missing while ca.key exists", Advice: caAdvice}
	case keyMissing:
		return nil, &state.Damaged{Path: dir.Join(state.CAKey), Reason: "missing while ca.crt exists", Advice: caAdvice}
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, &state.Damaged{Path: dir.Join(state.CACert), Reason: err.Error(), Advice: caAdvice}
	}
	if !cert.IsCA {
		return nil, &state.Damaged{Path: dir.Join(state.CACert), Reason: "not a CA certificate", Advice: caAdvice}
	}
	ca := &CA{Cert: cert, keyPEM: keyPEM, keyPath: dir.Join(state.CAKey)}
	if err := keyMatches(keyPEM, cert); err != nil {
		return nil, &state.Damaged{Path: ca.keyPath, Reason: err.Error(), Advice: caAdvice}
	}
	return ca, nil
}

func withAdvice(err error) error {
	var d *state.Damaged
	if errors.As(err, &d) {
		d.Advice = caAdvice
	}
	return err
}

// Save writes the CA to dir, the key first and 0600, so that a power cut
// between the two leaves a key without a certificate (reported) rather than a
// certificate without its key.
func (ca *CA) Save(dir *state.Dir) error {
	keyPEM := ca.keyPEM
	if ca.Key != nil {
		var err error
		if keyPEM, err = keys.MarshalPEM(ca.Key); err != nil {
			return err
		}
	}
	if err := dir.Write(state.CAKey, keyPEM, 0o600); err != nil {
		return err
	}
	return dir.Write(state.CACert, ca.PEM(), 0o644)
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no CERTIFICATE PEM block")
	}
	return x509.ParseCertificate(blk.Bytes)
}

func publicEqual(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}
