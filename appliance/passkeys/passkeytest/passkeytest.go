// Package passkeytest is a software passkey for tests: it answers a
// relying party's options as a phone's authenticator would through a
// browser (one P-256 key, "none" attestation, the user present and
// verified), so that the ceremonies can be tested without a browser.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// Authenticator is one passkey, once Create has made it.
type Authenticator struct {
	// Origin is where the browser is: https://host[:port].
	Origin string
	// Count is the signature count, one more at each Get; a test turns
	// it back to look like a copy.
	Count uint32

	id     []byte
	key    *ecdsa.PrivateKey
	rpID   string
	handle []byte // the user handle it was made with
}

var b64 = base64.RawURLEncoding

// options is what a browser reads of the relying party's options.
type options struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

func (a *Authenticator) clientData(kind, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": kind, "challenge": challenge, "origin": a.Origin, "crossOrigin": false}) // dropped: a map of strings and a bool always encodes
	return b
}

// authData is the authenticator data: the relying party's hash, the flags
// (user present and verified), the count, and for a new credential its
// ID and key.
func (a *Authenticator) authData(attested bool) ([]byte, error) {
	rp := sha256.Sum256([]byte(a.rpID))
	flags := byte(0x01 | 0x04)
	if attested {
		flags |= 0x40
	}
	d := append(rp[:], flags)
	d = binary.BigEndian.AppendUint32(d, a.Count)
	if !attested {
		return d, nil
	}
	d = append(d, make([]byte, 16)...) // AAGUID
	d = binary.BigEndian.AppendUint16(d, uint16(len(a.id)))
	d = append(d, a.id...)
	pub, err := a.key.PublicKey.Bytes() // 0x04, X, Y: 32 bytes each
	if err != nil {
		return nil, err
	}
	k, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1, XCoord: pub[1:33], YCoord: pub[33:],
	})
	return append(d, k...), err
}

// Create answers a registration's options (JSON) with a new passkey, as
// the browser posts it.
func (a *Authenticator) Create(opts []byte) ([]byte, error) {
	var o options
	if err := json.Unmarshal(opts, &o); err != nil {
		return nil, fmt.Errorf("registration options: %w", err)
	}
	a.rpID = o.PublicKey.RP.ID
	var err error
	if a.handle, err = b64.DecodeString(o.PublicKey.User.ID); err != nil {
		return nil, fmt.Errorf("user handle: %w", err)
	}
	if a.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	a.id = make([]byte, 16)
	rand.Read(a.id)
	ad, err := a.authData(true)
	if err != nil {
		return nil, err
	}
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(a.clientData("webauthn.create", o.PublicKey.Challenge)),
			"attestationObject": b64.EncodeToString(att)}, "clientExtensionResults": map[string]any{}})
}

// Get answers a sign-in's options (JSON), its count one more than before.
func (a *Authenticator) Get(opts []byte) ([]byte, error) {
	var o options
	if err := json.Unmarshal(opts, &o); err != nil {
		return nil, fmt.Errorf("sign-in options: %w", err)
	}
	a.Count++
	cd := a.clientData("webauthn.get", o.PublicKey.Challenge)
	ad, err := a.authData(false)
	if err != nil {
		return nil, err
	}
	cdSum := sha256.Sum256(cd)
	sum := sha256.Sum256(append(append([]byte{}, ad...), cdSum[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, sum[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(a.handle)}, "clientExtensionResults": map[string]any{}})
}
