package pki

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"

	"github.com/bonesync/bonesync/appliance/keys"
)

// keyMatches checks that keyPEM is a private key for cert's public key
// without computing that public key: an EC key's PKCS #8 carries its
// public point (RFC 5915, and keys.MarshalPEM writes it), compared with
// the certificate's. Any other key is parsed whole.
func keyMatches(keyPEM []byte, cert *x509.Certificate) error {
	blk, _ := pem.Decode(keyPEM)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return errors.New("no PRIVATE KEY PEM block")
	}
	var p8 struct {
		Version    int
		Algo       pkix.AlgorithmIdentifier
		PrivateKey []byte
	}
	var ec struct {
		Version    int
		PrivateKey []byte
		Curve      asn1.ObjectIdentifier `asn1:"optional,explicit,tag:0"`
		PublicKey  asn1.BitString        `asn1:"optional,explicit,tag:1"`
	}
	var spki struct {
		Algo      pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if rest, err := asn1.Unmarshal(blk.Bytes, &p8); err == nil && len(rest) == 0 && p8.Algo.Algorithm.Equal(oidPublicKeyECDSA) {
		if rest, err := asn1.Unmarshal(p8.PrivateKey, &ec); err == nil && len(rest) == 0 && len(ec.PublicKey.Bytes) > 0 {
			if _, err := asn1.Unmarshal(cert.RawSubjectPublicKeyInfo, &spki); err != nil {
				return err
			}
			if !bytes.Equal(ec.PublicKey.Bytes, spki.PublicKey.Bytes) {
				return errors.New("does not match ca.crt")
			}
			return nil
		}
	}
	key, err := keys.ParsePEM(keyPEM)
	if err != nil {
		return err
	}
	if !publicEqual(cert.PublicKey, key.Public()) {
		return errors.New("does not match ca.crt")
	}
	return nil
}

var oidPublicKeyECDSA = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
