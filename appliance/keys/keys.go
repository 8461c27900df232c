// Package keys names the key types bonesync can use, says how strong each is,
// and makes, encodes and identifies them. The names are the ones used
// everywhere: in the config file, the report and on the command line.
package keys

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
)

// Name is a key type, e.g. "ecdsa-p256".
type Name string

// The key types.
const (
	RSA1024   Name = "rsa-1024"
	RSA2048   Name = "rsa-2048"
	RSA3072   Name = "rsa-3072"
	RSA4096   Name = "rsa-4096"
	ECDSAP256 Name = "ecdsa-p256"
	ECDSAP384 Name = "ecdsa-p384"
	Ed25519   Name = "ed25519"
)

// MinStrength is the least security strength bonesync will serve with:
// NIST SP 800-57 Part 1 Rev. 5 disallows less than 112 bits after 2030 and
// no current guidance accepts less today.
const MinStrength = 112

// Info describes one key type.
type Info struct {
	Name Name
	// Strength is the security strength in bits, by the categories of
	// NIST SP 800-57 Part 1 Rev. 5, Table 2: RSA 2048 gives 112, 3072 gives
	// 128, and 4096 falls in the 128 category too (7680 is needed for 192);
	// ECDSA P-256 and Ed25519 give 128, P-384 gives 192.
	Strength int
	TLS, SSH bool // usable as a TLS server key, as an SSH host key
}

var all = []Info{
	{RSA1024, 80, true, false},
	{RSA2048, 112, true, true},
	{RSA3072, 128, true, true},
	{RSA4096, 128, true, true},
	{ECDSAP256, 128, true, true},
	{ECDSAP384, 192, true, false},
	{Ed25519, 128, false, true},
}

// Lookup returns the Info for name.
func Lookup(name Name) (Info, bool) {
	for _, i := range all {
		if i.Name == name {
			return i, true
		}
	}
	return Info{}, false
}

// Strength returns the security strength of name in bits, 0 if unknown.
func Strength(name Name) int {
	i, _ := Lookup(name)
	return i.Strength
}

// TLSCandidates are the TLS server keys the benchmark measures, rsa-1024
// included as a reference row (it is never eligible).
func TLSCandidates() []Name {
	return []Name{ECDSAP256, ECDSAP384, RSA1024, RSA2048, RSA3072, RSA4096}
}

// SSHCandidates are the SSH host keys the benchmark measures: Ed25519, and
// RSA from 3072 bits for clients without it. ECDSA host keys (NIST curves)
// and RSA-2048 are what hardening guides drop; the config can still pin
// ecdsa-p256 or rsa-2048 for an old client.
func SSHCandidates() []Name {
	return []Name{Ed25519, RSA3072, RSA4096}
}

// Generate makes a new private key of the named type.
func Generate(name Name, rand io.Reader) (crypto.Signer, error) {
	switch name {
	case RSA1024, RSA2048, RSA3072, RSA4096:
		bits := map[Name]int{RSA1024: 1024, RSA2048: 2048, RSA3072: 3072, RSA4096: 4096}[name]
		return rsa.GenerateKey(rand, bits)
	case ECDSAP256:
		return ecdsa.GenerateKey(elliptic.P256(), rand)
	case ECDSAP384:
		return ecdsa.GenerateKey(elliptic.P384(), rand)
	case Ed25519:
		_, k, err := ed25519.GenerateKey(rand)
		return k, err
	}
	return nil, fmt.Errorf("generate key: unknown key type %q", name)
}

// NameOf identifies the key type of a public key.
func NameOf(pub crypto.PublicKey) (Name, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		switch k.N.BitLen() {
		case 1024:
			return RSA1024, nil
		case 2048:
			return RSA2048, nil
		case 3072:
			return RSA3072, nil
		case 4096:
			return RSA4096, nil
		}
		return "", fmt.Errorf("unsupported RSA size %d", k.N.BitLen())
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return ECDSAP256, nil
		case elliptic.P384():
			return ECDSAP384, nil
		}
		return "", fmt.Errorf("unsupported curve %s", k.Curve.Params().Name)
	case ed25519.PublicKey:
		return Ed25519, nil
	}
	return "", fmt.Errorf("unsupported key type %T", pub)
}

// MarshalPEM encodes a private key as a PKCS#8 "PRIVATE KEY" PEM block.
func MarshalPEM(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePEM decodes a private key written by MarshalPEM.
func ParsePEM(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("no PRIVATE KEY PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key of type %T cannot sign", k)
	}
	return s, nil
}
