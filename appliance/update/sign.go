package update

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A bundle is signed by signing its manifest (which holds every file's
// SHA-256) with Ed25519. The signature rides in the manifest's tar header
// as the PAX record sigRecord, "KEY SIGNATURE" in base64: a box from
// before signing ignores the record and still takes the bundle, so the
// first signed update installs like any other.
const sigRecord = "BONESYNC.ed25519"

// BuiltInKeys is the file, in the image's initramfs, of the keys the
// image's maker signs its bundles with (the image builder writes it).
var BuiltInKeys = "/etc/bonesync/update-keys"

// OwnerKeys is the file, in the state directory, of the keys the owner
// added on the console (update trust), for bundles they build themselves.
const OwnerKeys = "update-keys"

// Key is an Ed25519 public key that update bundles may be signed with.
type Key ed25519.PublicKey

// String is the key as a keys file holds it: "ed25519 BASE64".
func (k Key) String() string { return "ed25519 " + base64.StdEncoding.EncodeToString(k) }

// Fingerprint is the key's SHA-256, as OpenSSH shows keys: "SHA256:...".
func (k Key) Fingerprint() string {
	sum := sha256.Sum256(k)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// parseKey reads a key as String writes it, with an optional comment after.
func parseKey(line string) (Key, error) {
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "ed25519" {
		return nil, fmt.Errorf("%q is not an update key (ed25519 BASE64, as out/update-signing.pub holds it)", trim(line))
	}
	b, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%q: not a base64 Ed25519 key of %d bytes", trim(f[1]), ed25519.PublicKeySize)
	}
	return Key(b), nil
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// ReadKeys reads keys files (one key a line; # starts a comment). A file
// that does not exist holds no keys.
func ReadKeys(files ...string) ([]Key, error) {
	var keys []Key
	for _, name := range files {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, err := parseKey(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// Trusted is the keys this box takes bundles from: the image's and the
// owner's (under state).
func Trusted(state string) ([]Key, error) {
	return ReadKeys(BuiltInKeys, filepath.Join(state, OwnerKeys))
}

// Trust adds a key to the owner's keys under state; a key already there
// is not added twice.
func Trust(state, line string) (Key, error) {
	k, err := parseKey(line)
	if err != nil {
		return nil, err
	}
	have, err := Trusted(state)
	if err != nil {
		return nil, err
	}
	for _, h := range have {
		if bytes.Equal(h, k) {
			return k, nil
		}
	}
	name := filepath.Join(state, OwnerKeys)
	old, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, append(old, k.String()+"\n"...), 0o644); err != nil {
		return nil, err
	}
	f, err := os.Open(tmp)
	if err != nil {
		return nil, err
	}
	err = f.Sync()
	f.Close() // dropped: the sync's error is the one that counts
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return nil, err
	}
	return k, nil
}

// sign is the PAX record's value for manifest signed by priv.
func sign(priv ed25519.PrivateKey, manifest []byte) string {
	pub := priv.Public().(ed25519.PublicKey)
	return base64.StdEncoding.EncodeToString(pub) + " " + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, manifest))
}

// checkSignature refuses a manifest whose record is missing, made by a
// key not in trusted, or not a signature of it.
func checkSignature(record string, manifest []byte, trusted []Key) error {
	if record == "" {
		return errors.New("the bundle is not signed; this box takes only bundles signed by a key it trusts (the console's `update keys` lists them)")
	}
	k, s, ok := strings.Cut(record, " ")
	pub, err1 := base64.StdEncoding.DecodeString(k)
	sig, err2 := base64.StdEncoding.DecodeString(s)
	if !ok || err1 != nil || err2 != nil || len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize {
		return errors.New("the bundle's signature is not an Ed25519 key and signature")
	}
	trust := false
	for _, t := range trusted {
		trust = trust || bytes.Equal(t, pub)
	}
	if !trust {
		return fmt.Errorf("the bundle is signed by key %s, which this box does not trust (the console's `update trust KEY` adds one; `update keys` lists them)", Key(pub).Fingerprint())
	}
	if !ed25519.Verify(pub, manifest, sig) {
		return errors.New("the bundle's signature does not match its manifest: it was altered after it was signed")
	}
	return nil
}

// SigningKey reads the Ed25519 private key in PEM (PKCS #8, as openssl
// genpkey -algorithm ed25519 writes it) at path, or makes one there (and
// path.pub beside it, the public key as a keys file holds it) if there is
// none.
func SigningKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return makeSigningKey(path)
	}
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM private key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T key; bundles are signed with Ed25519", path, k)
	}
	return priv, nil
}

func makeSigningKey(path string) (ed25519.PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return priv, os.WriteFile(publicKeyFile(path), []byte(Key(pub).String()+" bonesync update signing key\n"), 0o644)
}

// publicKeyFile is where SigningKey keeps the public half of the key at
// path.
func publicKeyFile(path string) string { return strings.TrimSuffix(path, ".key") + ".pub" }
