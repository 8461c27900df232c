// Package keys is the table of the key types bonesync knows (Types): for
// each its name, its strength, whether the benchmark measures it as a TLS
// server key or an SSH host key, how it is made, recognised and signs over
// SSH. The chooser, the benchmark, the config, the SFTP server, the report
// and the tests all read this one table: a new key type is one row here.
// The names are the ones used everywhere: in the config file, the report
// and on the command line.
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
	"strings"

	"golang.org/x/crypto/ssh"
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

// Type is one key type: one row of the table.
type Type struct {
	Name Name
	// Strength is the security strength in bits, by the categories of
	// NIST SP 800-57 Part 1 Rev. 5, Table 2: RSA 2048 gives 112, 3072 gives
	// 128, and 4096 falls in the 128 category too (7680 is needed for 192);
	// ECDSA P-256 and Ed25519 give 128, P-384 gives 192.
	Strength int
	// TLS and SSH say whether it may serve as a TLS server key or an SSH
	// host key: what the config may pin.
	TLS, SSH bool
	// BenchTLS and BenchSSH say whether the benchmark measures it for that
	// protocol, in the table's order. A key weaker than MinStrength is
	// measured as a reference row only, never chosen.
	BenchTLS, BenchSSH bool
	// Family groups the sizes of one algorithm, cheapest first in the
	// table: the benchmark skips a larger RSA key once a smaller one was
	// clearly over the target.
	Family string
	// SSHSignatures are the signature algorithms offered with it as a
	// host key, preferred first (RSA: SHA-2 only, never SHA-1 ssh-rsa).
	// The benchmark measures the first, which OpenSSH clients take.
	SSHSignatures []string

	generate func(io.Reader) (crypto.Signer, error)
	is       func(crypto.PublicKey) bool
}

// Reference says whether the type is too weak to serve with and is
// measured only to compare.
func (t Type) Reference() bool { return t.Strength < MinStrength }

// Types are the key types, cheapest first within each family.
//
// TLS candidates: ECDSA P-256 and P-384, and RSA from 2048 bits, with
// rsa-1024 as a reference row. SSH candidates: Ed25519, and RSA from 3072
// bits for clients without it; ECDSA host keys (NIST curves) and RSA-2048
// are what hardening guides drop, but the config can still pin ecdsa-p256
// or rsa-2048 for an old client.
var Types = []Type{
	{Name: ECDSAP256, Strength: 128, TLS: true, SSH: true, BenchTLS: true, Family: "ecdsa",
		SSHSignatures: []string{ssh.KeyAlgoECDSA256}, generate: ecdsaKey(elliptic.P256()), is: onCurve(elliptic.P256())},
	{Name: ECDSAP384, Strength: 192, TLS: true, BenchTLS: true, Family: "ecdsa",
		SSHSignatures: []string{ssh.KeyAlgoECDSA384}, generate: ecdsaKey(elliptic.P384()), is: onCurve(elliptic.P384())},
	{Name: Ed25519, Strength: 128, SSH: true, BenchSSH: true, Family: "ed25519",
		SSHSignatures: []string{ssh.KeyAlgoED25519}, generate: ed25519Key, is: isEd25519},
	rsaType(RSA1024, 1024, 80, true, false),
	rsaType(RSA2048, 2048, 112, true, false),
	rsaType(RSA3072, 3072, 128, true, true),
	rsaType(RSA4096, 4096, 128, true, true),
}

func rsaType(name Name, bits, strength int, benchTLS, benchSSH bool) Type {
	return Type{Name: name, Strength: strength, TLS: true, SSH: bits >= 2048, BenchTLS: benchTLS, BenchSSH: benchSSH, Family: "rsa",
		SSHSignatures: []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256},
		generate:      func(r io.Reader) (crypto.Signer, error) { return rsa.GenerateKey(r, bits) },
		is: func(pub crypto.PublicKey) bool {
			k, ok := pub.(*rsa.PublicKey)
			return ok && k.N.BitLen() == bits
		},
	}
}

func ecdsaKey(c elliptic.Curve) func(io.Reader) (crypto.Signer, error) {
	return func(r io.Reader) (crypto.Signer, error) { return ecdsa.GenerateKey(c, r) }
}

func onCurve(c elliptic.Curve) func(crypto.PublicKey) bool {
	return func(pub crypto.PublicKey) bool {
		k, ok := pub.(*ecdsa.PublicKey)
		return ok && k.Curve == c
	}
}

func ed25519Key(r io.Reader) (crypto.Signer, error) {
	_, k, err := ed25519.GenerateKey(r)
	return k, err
}

func isEd25519(pub crypto.PublicKey) bool { _, ok := pub.(ed25519.PublicKey); return ok }

// Lookup returns the row for name.
func Lookup(name Name) (Type, bool) {
	for _, t := range Types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// FamilyOf is the family of the key named name ("ecdsa", "rsa",
// "ed25519"), "" if unknown.
func FamilyOf(name string) string {
	t, _ := Lookup(Name(name))
	return t.Family
}

// Strength returns the security strength of name in bits, 0 if unknown.
func Strength(name Name) int {
	t, _ := Lookup(name)
	return t.Strength
}

// Select lists the names of the types for which keep holds, in the
// table's order: keys.Select(func(t keys.Type) bool { return t.BenchTLS }).
func Select(keep func(Type) bool) []Name {
	var out []Name
	for _, t := range Types {
		if keep(t) {
			out = append(out, t.Name)
		}
	}
	return out
}

// TLSCandidates are the TLS server keys the benchmark measures.
func TLSCandidates() []Name { return Select(func(t Type) bool { return t.BenchTLS }) }

// SSHCandidates are the SSH host keys the benchmark measures.
func SSHCandidates() []Name { return Select(func(t Type) bool { return t.BenchSSH }) }

// List is names as a config file's help writes them: "a, b or c".
func List(names []Name) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Generate makes a new private key of the named type.
func Generate(name Name, rand io.Reader) (crypto.Signer, error) {
	t, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("generate key: unknown key type %q", name)
	}
	return t.generate(rand)
}

// NameOf identifies the key type of a public key.
func NameOf(pub crypto.PublicKey) (Name, error) {
	for _, t := range Types {
		if t.is(pub) {
			return t.Name, nil
		}
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "", fmt.Errorf("unsupported RSA size %d", k.N.BitLen())
	case *ecdsa.PublicKey:
		return "", fmt.Errorf("unsupported curve %s", k.Curve.Params().Name)
	}
	return "", fmt.Errorf("unsupported key type %T", pub)
}

// SSHSigner is key as an SSH host key that signs only with its type's
// SSHSignatures (an RSA key never with SHA-1).
func SSHSigner(key crypto.Signer) (ssh.Signer, error) {
	name, err := NameOf(key.Public())
	if err != nil {
		return nil, err
	}
	t, _ := Lookup(name)
	s, err := ssh.NewSignerFromSigner(key)
	if err != nil {
		return nil, fmt.Errorf("%s as an SSH host key: %w", name, err)
	}
	as, ok := s.(ssh.AlgorithmSigner)
	if !ok {
		return nil, fmt.Errorf("%s as an SSH host key: it cannot choose its signature algorithm", name)
	}
	return ssh.NewSignerWithAlgorithms(as, t.SSHSignatures)
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
