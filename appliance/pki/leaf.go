package pki

import (
	"crypto"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"time"

	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/state"
)

// LeafValidity is 397 days, the most that browsers accept for a server
// certificate; the box renews long before.
const LeafValidity = 397 * 24 * time.Hour

// RenewBefore is how long before expiry a leaf is reissued.
const RenewBefore = 30 * 24 * time.Hour

// Issue makes a server certificate for pub covering names, valid from now.
func (ca *CA) Issue(pub crypto.PublicKey, names Names, now time.Time, random io.Reader) (*x509.Certificate, error) {
	usage := x509.KeyUsageDigitalSignature
	if _, ok := pub.(*rsa.PublicKey); ok {
		usage |= x509.KeyUsageKeyEncipherment
	}
	cn := ""
	if len(names.DNS) > 0 {
		cn = names.DNS[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(random),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"bonesync"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(LeafValidity),
		KeyUsage:     usage,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names.DNS,
		IPAddresses:  names.IPs,
	}
	signer, err := ca.Signer()
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(random, tmpl, ca.Cert, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("issue certificate for %v: %w", names.DNS, err)
	}
	return x509.ParseCertificate(der)
}

// NeedsReissue says whether leaf must be replaced: it does not cover exactly
// names, it was not issued by ca for key, or it expires within RenewBefore of
// now (which must come from the clock floor).
func NeedsReissue(leaf *x509.Certificate, ca *CA, key crypto.PublicKey, names Names, now time.Time) (bool, string) {
	switch {
	case leaf == nil:
		return true, "no certificate yet"
	case leaf.CheckSignatureFrom(ca.Cert) != nil:
		return true, "not issued by this CA"
	case !publicEqual(leaf.PublicKey, key):
		return true, "issued for another key"
	case !same(Names{DNS: leaf.DNSNames, IPs: leaf.IPAddresses}, names):
		return true, fmt.Sprintf("names changed to %s", names)
	case now.Add(RenewBefore).After(leaf.NotAfter):
		return true, fmt.Sprintf("expires %s", leaf.NotAfter.Format(time.DateOnly))
	case now.Before(leaf.NotBefore):
		return true, "not yet valid"
	}
	return false, ""
}

func (n Names) String() string {
	s := fmt.Sprint(n.DNS)
	for _, ip := range n.IPs {
		s += " " + ip.String()
	}
	return s
}

// Server is the key and certificate chain HTTPS serves.
type Server struct {
	Name keys.Name
	Key  crypto.Signer
	Leaf *x509.Certificate
}

// TLSCertificate returns the chain (leaf, CA) for crypto/tls.
func (s *Server) TLSCertificate(ca *CA) *tls.Certificate {
	return &tls.Certificate{
		Certificate: [][]byte{s.Leaf.Raw, ca.Cert.Raw},
		PrivateKey:  s.Key,
		Leaf:        s.Leaf,
	}
}

// LoadKey reads a private key file from dir. A missing file gives an error
// satisfying errors.Is(err, fs.ErrNotExist).
func LoadKey(dir *state.Dir, name string) (crypto.Signer, error) {
	b, err := dir.Read(name)
	if err != nil {
		return nil, err
	}
	k, err := keys.ParsePEM(b)
	if err != nil {
		return nil, &state.Damaged{Path: dir.Join(name), Reason: err.Error(),
			Advice: "delete it: a new key of the chosen type is made and a new certificate issued"}
	}
	return k, nil
}

// SaveKey writes a private key to dir, 0600.
func SaveKey(dir *state.Dir, name string, k crypto.Signer) error {
	b, err := keys.MarshalPEM(k)
	if err != nil {
		return err
	}
	return dir.Write(name, b, 0o600)
}

// LoadLeaf reads the server certificate. A missing one is (nil, nil); a
// damaged one is (nil, *state.Damaged): either way it is simply issued again.
// name is the file in dir (state.TLSCert, state.TLSOtherCert).
func LoadLeaf(dir *state.Dir, name string) (*x509.Certificate, error) {
	b, err := dir.Read(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		var c *x509.Certificate
		if c, err = parseCertPEM(b); err == nil {
			return c, nil
		}
		err = &state.Damaged{Path: dir.Join(name), Reason: err.Error()}
	}
	if d, ok := err.(*state.Damaged); ok {
		d.Advice = "a new certificate is issued"
	}
	return nil, err
}

// SaveLeaf writes the server certificate chain (leaf then CA) to dir's
// file name.
func SaveLeaf(dir *state.Dir, name string, leaf *x509.Certificate, ca *CA) error {
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})
	b = append(b, ca.PEM()...)
	return dir.Write(name, b, 0o644)
}

// Addrs is a helper for tests and callers that have strings.
func Addrs(ss ...string) []net.IP {
	var ips []net.IP
	for _, s := range ss {
		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		}
	}
	return ips
}
