package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure/benchkeys"
)

// benchKey returns bonesync's embedded benchmark key of that type and its
// PKCS#8 PEM, the form bonesync's state directory, nginx and crypto/tls all
// read.
func benchKey(name string) (crypto.Signer, []byte, error) {
	k, err := benchkeys.Get(keys.Name(name))
	if err != nil {
		return nil, nil, err
	}
	b, err := keys.MarshalPEM(k)
	return k, b, err
}

// openSSHKey is k in OpenSSH's private key format, for sshd's HostKey.
func openSSHKey(k crypto.Signer) ([]byte, error) {
	blk, err := ssh.MarshalPrivateKey(k, "")
	if err != nil {
		return nil, fmt.Errorf("OpenSSH form of the host key: %w", err)
	}
	return pem.EncodeToMemory(blk), nil
}

// sshdHostKey is the ed25519 benchmark key, sshd's host key in both
// comparisons, and its OpenSSH form.
func sshdHostKey() (crypto.Signer, []byte, error) {
	host, _, err := benchKey("ed25519")
	if err != nil {
		return nil, nil, err
	}
	pemKey, err := openSSHKey(host)
	return host, pemKey, err
}

// throwawayChain issues a leaf for key from a throwaway ECDSA P-384 CA (the
// shape of bonesync's own chain: leaf, then a P-384 root) and returns the
// chain as PEM, leaf first, and the CA alone as PEM.
func throwawayChain(key crypto.Signer) (chain, ca []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	from, to := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bonesync bench throwaway CA"},
		NotBefore: from, NotAfter: to, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("throwaway CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: from, NotAfter: to,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("throwaway leaf: %w", err)
	}
	ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	chain = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), ca...)
	return chain, ca, nil
}
