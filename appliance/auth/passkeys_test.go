package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// authenticator is a software passkey, as a phone's would answer a
// browser: one P-256 key per credential, "none" attestation, the user
// present and verified.
type authenticator struct {
	origin string // where the browser is, https://host:port
	id     []byte
	key    *ecdsa.PrivateKey
	rpID   string
	handle []byte // the user handle it was made with
	count  uint32
}

var b64 = base64.RawURLEncoding

// optionsOf reads what the browser would: the challenge, the relying
// party and the user handle of the door's options.
func optionsOf(t *testing.T, opts []byte) (challenge, rpID string, handle []byte) {
	t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string              `json:"challenge"`
			RPID      string              `json:"rpId"`
			RP        struct{ ID string } `json:"rp"`
			User      struct{ ID string } `json:"user"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(opts, &o); err != nil {
		t.Fatalf("options %s: %v", opts, err)
	}
	handle, _ = b64.DecodeString(o.PublicKey.User.ID)
	return o.PublicKey.Challenge, o.PublicKey.RPID + o.PublicKey.RP.ID, handle
}

func (a *authenticator) clientData(kind, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": kind, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return b
}

// authData is the authenticator data: the relying party's hash, the
// flags (user present and verified), the count, and for a new
// credential its ID and key.
func (a *authenticator) authData(attested bool) []byte {
	rp := sha256.Sum256([]byte(a.rpID))
	flags := byte(0x01 | 0x04)
	d := append(rp[:], flags)
	d = binary.BigEndian.AppendUint32(d, a.count)
	if attested {
		d[32] |= 0x40
		d = append(d, make([]byte, 16)...) // AAGUID
		d = binary.BigEndian.AppendUint16(d, uint16(len(a.id)))
		d = append(d, a.id...)
		pub := a.key.PublicKey
		k, _ := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
			Curve:         1, XCoord: pub.X.FillBytes(make([]byte, 32)), YCoord: pub.Y.FillBytes(make([]byte, 32)),
		})
		d = append(d, k...)
	}
	return d
}

// create answers a registration's options with a new credential.
func (a *authenticator) create(t *testing.T, opts []byte) []byte {
	t.Helper()
	challenge, rpID, handle := optionsOf(t, opts)
	a.rpID, a.handle = rpID, handle
	a.key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	a.id = make([]byte, 16)
	rand.Read(a.id)
	att, _ := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(true)})
	b, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(a.clientData("webauthn.create", challenge)),
			"attestationObject": b64.EncodeToString(att)}, "clientExtensionResults": map[string]any{}})
	return b
}

// get answers a sign-in's options, its count one more than before.
func (a *authenticator) get(t *testing.T, opts []byte) []byte {
	t.Helper()
	challenge, _, _ := optionsOf(t, opts)
	a.count++
	cd := a.clientData("webauthn.get", challenge)
	ad := a.authData(false)
	sum := sha256.Sum256(append(append([]byte{}, ad...), func() []byte { h := sha256.Sum256(cd); return h[:] }()...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(a.handle)}, "clientExtensionResults": map[string]any{}})
	return b
}

// register makes ann a passkey at host through the door.
func register(t *testing.T, d *Door, host string) *authenticator {
	t.Helper()
	opts, tok, err := d.BeginPasskeyRegistration("10.0.0.2", host, "ann")
	if err != nil {
		t.Fatal(err)
	}
	a := &authenticator{origin: "https://" + host}
	if err := d.FinishPasskeyRegistration(host, "ann", tok, "Ann's phone", a.create(t, opts)); err != nil {
		t.Fatalf("FinishPasskeyRegistration: %v", err)
	}
	return a
}

// A passkey made at the box's name signs ann in without a password, and
// again (its count went up); its record keeps the last use.
func TestPasskeySignsInAlone(t *testing.T) {
	d, db := annDoor(t, slog.New(slog.DiscardHandler))
	const host = "bonesync.local:8443"
	a := register(t, d, host)
	keys, _, _ := db.Passkeys("ann")
	if len(keys) != 1 || keys[0].RPID != "bonesync.local" || keys[0].Name != "Ann's phone" || !keys[0].LastUsed.IsZero() {
		t.Fatalf("kept %+v", keys)
	}
	for i := range 2 {
		opts, tok, err := d.BeginPasskey("10.0.0.3", host, "")
		if err != nil {
			t.Fatal(err)
		}
		if user, res := d.FinishPasskey("10.0.0.3", host, tok, "", a.get(t, opts)); user != "ann" || res != OK {
			t.Fatalf("sign-in %d = %q %v, want ann OK", i, user, res)
		}
	}
	if keys, _, _ = db.Passkeys("ann"); keys[0].LastUsed.IsZero() {
		t.Error("the passkey's last use was not kept")
	}
	if !d.Known("10.0.0.3") {
		t.Error("a passkey's sign-in did not make its address known")
	}
}

// What a passkey must not get through: an answer to another sign-in's
// challenge, a token used twice, an answer at another host, a copied
// authenticator (its count went back), a passkey of ann's as the second
// factor of another account; and an IP address begins nothing.
func TestPasskeyRefusals(t *testing.T) {
	d, db := annDoor(t, slog.New(slog.DiscardHandler))
	if err := db.Add("bob", "bob-password"); err != nil {
		t.Fatal(err)
	}
	const host = "bonesync.local"
	a := register(t, d, host)
	signIn := func(addr, at, user string, answer func(opts []byte) []byte) Result {
		t.Helper()
		opts, tok, err := d.BeginPasskey(addr, host, user)
		if err != nil {
			t.Fatal(err)
		}
		_, res := d.FinishPasskey(addr, at, tok, user, answer(opts))
		return res
	}
	other, _, _ := d.BeginPasskey("10.0.0.4", host, "")
	if res := signIn("10.0.0.4", host, "", func([]byte) []byte { return a.get(t, other) }); res != Wrong {
		t.Errorf("an answer to another challenge = %v, want Wrong", res)
	}
	if res := signIn("10.0.0.5", "evil.example", "", func(o []byte) []byte { return a.get(t, o) }); res != Wrong {
		t.Errorf("an answer finished at another host = %v, want Wrong", res)
	}
	opts, tok, _ := d.BeginPasskey("10.0.0.6", host, "ann")
	answer := a.get(t, opts)
	if _, res := d.FinishPasskey("10.0.0.6", host, tok, "ann", answer); res != OK {
		t.Fatalf("the second factor = %v, want OK", res)
	}
	if _, res := d.FinishPasskey("10.0.0.6", host, tok, "ann", answer); res != Wrong {
		t.Errorf("a token used twice = %v, want Wrong", res)
	}
	a.count -= 2
	if res := signIn("10.0.0.7", host, "", func(o []byte) []byte { return a.get(t, o) }); res != Wrong {
		t.Errorf("a count gone back = %v, want Wrong", res)
	}
	if _, _, err := d.BeginPasskey("10.0.0.8", host, "bob"); err == nil {
		t.Error("a sign-in began for bob, who has no passkey")
	}
	for _, ip := range []string{"192.168.7.2", "192.168.7.2:443", "[fe80::1]:443"} {
		if _, _, err := d.BeginPasskeyRegistration("10.0.0.2", ip, "ann"); !errors.Is(err, ErrPasskeyAtAddress) {
			t.Errorf("a registration at %s: %v, want ErrPasskeyAtAddress", ip, err)
		}
	}
}

// A wrong passkey is a failed login of its address: as many as a wrong
// password takes earn the same ban.
func TestWrongPasskeysBan(t *testing.T) {
	d, _ := annDoor(t, slog.New(slog.DiscardHandler))
	const host, addr = "bonesync.local", "10.0.0.9"
	a := register(t, d, host)
	for range MaxFailures {
		_, tok, _ := d.BeginPasskey(addr, host, "")
		other, _, _ := d.BeginPasskey(addr, host, "")
		if _, res := d.FinishPasskey(addr, host, tok, "", a.get(t, other)); res != Wrong {
			t.Fatalf("an answer to another challenge = %v, want Wrong", res)
		}
	}
	if banned, _ := d.Banned(addr); !banned {
		t.Errorf("%d wrong passkeys earned no ban", MaxFailures)
	}
	opts, tok, _ := d.BeginPasskey(addr, host, "")
	if _, res := d.FinishPasskey(addr, host, tok, "", a.get(t, opts)); res != Banned {
		t.Errorf("a right passkey from a banned address = %v, want Banned", res)
	}
}

// A flood of begun sign-ins from one address holds ceremoniesPerSource
// places, and the table never more than maxCeremonies: the owner's, begun
// before, is still there.
func TestCeremoniesBounded(t *testing.T) {
	d, _ := annDoor(t, slog.New(slog.DiscardHandler))
	_, mine, err := d.BeginPasskey("10.0.0.2", "bonesync.local", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * maxCeremonies {
		d.BeginPasskey(fmt.Sprintf("203.0.113.%d", i%3), "bonesync.local", "")
		d.BeginPasskey(fmt.Sprintf("198.51.%d.%d", i/250, i%250), "bonesync.local", "")
	}
	d.ceremonies.mu.Lock()
	n, kept := len(d.ceremonies.m), d.ceremonies.m[mine] != nil
	d.ceremonies.mu.Unlock()
	if n > maxCeremonies || !kept {
		t.Errorf("after the flood: %d ceremonies (at most %d), the owner's kept: %v", n, maxCeremonies, kept)
	}
}
