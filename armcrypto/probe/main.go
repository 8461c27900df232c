// Command probe runs the primitives armcrypto replaces, through the
// standard library's and x/crypto's own APIs:
//
//	probe diff N   N deterministic random cases of each primitive (SHA-1, SHA-256, SHA-512, RSA, memmove,
//	               ChaCha20 read across its counter's end too); prints
//	               one SHA-256 of all outputs per primitive. armcrypto's
//	               tests run it built untouched (the reference) and built
//	               GOARCH=arm with the overlay under qemu-arm, and compare.
//	probe wycheproof DIR
//	               Wycheproof's X25519, ChaCha20-Poly1305, ECDH P-256,
//	               ECDSA P-256 (SHA-256) and RSA PKCS #1 v1.5 (signatures
//	               and decryption) vectors from DIR; prints the count
//	               checked, exits 1 on a failure.
//	probe ct SECRET
//	               one X25519, one P-256 key agreement, one ECDSA P-256
//	               signature, an RSA-2048 signature of a digest of SECRET
//	               (with one of two keys, as SECRET picks) and one
//	               ChaCha20-Poly1305 seal of 1 KiB with
//	               keys drawn from SECRET: armcrypto's constant-time test
//	               traces it under qemu-arm with two secrets and compares
//	               the code paths.
//	probe cost     each operation between markers (the armcost plugin's
//	               syscall 0x7ff0), for instruction counts per primitive.
//	               No test runs it: it is for a person weighing a change
//	               to one primitive (the README's per-primitive figures,
//	               such as SHA-1 per MiB, came from it). Build it GOARCH=arm
//	               GOARM=7 with the overlay (make build-arm's flags) and
//	               run it under qemu-arm -cpu cortex-a8 -plugin with
//	               ../shared/tools/armcost's insncount plugin.
package main

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/curve25519"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe diff N | probe wycheproof DIR | probe ct SECRET | probe cost")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "diff":
		n := 1000
		if len(os.Args) > 2 {
			n, _ = strconv.Atoi(os.Args[2])
		}
		diff(n)
	case "wycheproof":
		if len(os.Args) < 3 {
			fmt.Fprintln(os.Stderr, "usage: probe wycheproof DIR")
			os.Exit(2)
		}
		n, err := wycheproof(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
		fmt.Println("wycheproof ok", n)
	case "ct":
		if len(os.Args) < 3 {
			fmt.Fprintln(os.Stderr, "usage: probe ct SECRET")
			os.Exit(2)
		}
		ct(os.Args[2])
	case "cost":
		cost()
	default:
		fmt.Fprintln(os.Stderr, "probe: unknown mode", os.Args[1])
		os.Exit(2)
	}
}

// fill draws len(b) bytes; every 8th case is all ones or all zeros, the
// inputs that reach the largest limbs and the edge of the field.
func fill(rng *rand.Rand, b []byte, i int) {
	switch i % 8 {
	case 3:
		for j := range b {
			b[j] = 0xff
		}
	case 5:
		clear(b)
	default:
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
	}
}

func diff(n int) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	sums := map[string]hash.Hash{"x25519": sha256.New(), "x25519-ecdh": sha256.New(), "chacha20poly1305": sha256.New(),
		"p256-ecdh": sha256.New(), "p256-ecdsa": sha256.New(), "sha1": sha256.New(), "sha256": sha1.New(), "sha512": sha1.New(), "rsa": sha256.New(), "memmove": sha256.New(), "chacha20-end": sha256.New()}
	keys := rsaKeys()
	for i := 0; i < n; i++ {
		// X25519 on any 32-byte point, as curve25519.X25519 takes it
		// (low-order points give an error, which is an output too).
		var k, p [32]byte
		fill(rng, k[:], i)
		fill(rng, p[:], i/8)
		out, err := curve25519.X25519(k[:], p[:])
		fmt.Fprintf(sums["x25519"], "%x %v\n", out, err)
		// crypto/ecdh, as crypto/tls uses it: key pair and shared secret.
		priv, err := ecdh.X25519().NewPrivateKey(k[:])
		if err == nil {
			sums["x25519-ecdh"].Write(priv.PublicKey().Bytes())
			if pub, err := ecdh.X25519().NewPublicKey(p[:]); err == nil {
				s, err := priv.ECDH(pub)
				fmt.Fprintf(sums["x25519-ecdh"], "%x %v\n", s, err)
			}
		}
		// P-256 as crypto/tls and crypto/ecdsa use it: a key pair from
		// 32 bytes (or the error for a scalar out of range), the shared
		// secret with another, and an ECDSA signature (random, so only
		// whether it verifies, and a forgery does not, is compared).
		if i%4 == 0 {
			var k2 [32]byte
			fill(rng, k2[:], i/4+1)
			a, errA := ecdh.P256().NewPrivateKey(k[:])
			b, errB := ecdh.P256().NewPrivateKey(k2[:])
			fmt.Fprintf(sums["p256-ecdh"], "%v %v\n", errA, errB)
			if errA == nil && errB == nil {
				sums["p256-ecdh"].Write(a.PublicKey().Bytes())
				s, err := a.ECDH(b.PublicKey())
				fmt.Fprintf(sums["p256-ecdh"], "%x %v\n", s, err)
				key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), k[:])
				if err == nil {
					digest := sha256.Sum256(p[:])
					sig, err := ecdsa.SignASN1(crand.Reader, key, digest[:])
					ok := err == nil && ecdsa.VerifyASN1(&key.PublicKey, digest[:], sig)
					digest[0] ^= 1
					forged := ecdsa.VerifyASN1(&key.PublicKey, digest[:], sig)
					fmt.Fprintf(sums["p256-ecdsa"], "%x %v %v\n", pubX(&key.PublicKey), ok, forged)
				} else {
					fmt.Fprintf(sums["p256-ecdsa"], "%v\n", err)
				}
			}
		}
		// ChaCha20-Poly1305: seal, open, and a forgery refused.
		var key [32]byte
		var nonce [12]byte
		fill(rng, key[:], i)
		fill(rng, nonce[:], i+1)
		msg := make([]byte, rng.IntN(600)+(i%50)*100)
		ad := make([]byte, rng.IntN(40))
		fill(rng, msg, i/3)
		fill(rng, ad, i)
		aead, _ := chacha20poly1305.New(key[:])
		sealed := aead.Seal(nil, nonce[:], msg, ad)
		sums["chacha20poly1305"].Write(sealed)
		opened, err := aead.Open(nil, nonce[:], sealed, ad)
		fmt.Fprintf(sums["chacha20poly1305"], "%x %v\n", sha256.Sum256(opened), err)
		sealed[rng.IntN(len(sealed))] ^= 1 << (i % 8)
		_, err = aead.Open(nil, nonce[:], sealed, ad)
		fmt.Fprintf(sums["chacha20poly1305"], "forged %v\n", err != nil)
		// SHA-1 as the store hashes an upload: writes of any size.
		h := sha1.New()
		for _, b := range [][]byte{msg, ad, msg[:len(msg)/3]} {
			h.Write(b)
		}
		sums["sha1"].Write(h.Sum(nil))
		// SHA-256 likewise (summed with SHA-1, not with itself).
		h = sha256.New()
		for _, b := range [][]byte{msg[:len(msg)/3], ad, msg} {
			h.Write(b)
		}
		sums["sha256"].Write(h.Sum(nil))
		h = sha512.New()
		for _, b := range [][]byte{ad, msg, msg[:len(msg)/5]} {
			h.Write(b)
		}
		sums["sha512"].Write(h.Sum(nil))
		counterEnd(rng, sums["chacha20-end"], i)
		memmoves(rng, sums["memmove"], i)
		// RSA (bigmod's Montgomery multiplication): PKCS #1 v1.5
		// signatures, deterministic, with fixed keys whose CRT halves and
		// moduli take the fused sizes (1024, 1536 and 2048 bits) and
		// others; each verified, and a forgery refused.
		if i%60 == 0 {
			k := keys[i/60%len(keys)]
			digest := sha256.Sum256(msg)
			sig, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, digest[:])
			fmt.Fprintf(sums["rsa"], "%x %v %v\n", sig, err, rsa.VerifyPKCS1v15(&k.PublicKey, crypto.SHA256, digest[:], sig))
			digest[0] ^= 1
			fmt.Fprintf(sums["rsa"], "forged %v\n", rsa.VerifyPKCS1v15(&k.PublicKey, crypto.SHA256, digest[:], sig) != nil)
		}
	}
	for _, name := range []string{"x25519", "x25519-ecdh", "chacha20poly1305", "p256-ecdh", "p256-ecdsa", "sha1", "sha256", "sha512", "rsa", "memmove", "chacha20-end"} {
		fmt.Printf("%s %d %x\n", name, n, sums[name].Sum(nil))
	}
}

// memmoves copies (the runtime's memmove) between two buffers and within
// one, forward and backward, at every alignment and many lengths, into
// w: the overlay's NEON path takes the misaligned ones of 64 bytes or
// more.
func memmoves(rng *rand.Rand, w io.Writer, i int) {
	buf := make([]byte, 6000)
	fill(rng, buf, i)
	other := make([]byte, len(buf))
	n := rng.IntN(300)
	if i%10 == 0 {
		n = rng.IntN(5000)
	}
	src, dst := rng.IntN(len(buf)-n), rng.IntN(len(buf)-n)
	copy(other[dst:dst+n], buf[src:src+n])
	copy(buf[dst:dst+n], buf[src:src+n]) // overlapping when src and dst are near
	// And the cases chance may miss: overlapping forward copies a few
	// bytes apart, lengths of whole 64-byte chunks and one over.
	if i < 64 {
		n := 64 * (1 + i%4)
		copy(buf[1+i%8:1+i%8+n+i/32], buf[3+i%5:3+i%5+n+i/32])
		copy(buf[100+i%3:100+i%3+n], buf[101+i%7:101+i%7+n])
	}
	w.Write(other)
	w.Write(buf)
}

// The RSA keys of the differential, and a second of 2048 bits for the
// constant-time check (openssl genpkey, for these tests only).
//
//go:embed testdata/rsa-2048.pem testdata/rsa-3072.pem testdata/rsa-2048-b.pem
var rsaPEM embed.FS

// rsaKeys parses the named keys of testdata, the differential's by default.
func rsaKeys(names ...string) []*rsa.PrivateKey {
	if len(names) == 0 {
		names = []string{"rsa-2048.pem", "rsa-3072.pem"}
	}
	var keys []*rsa.PrivateKey
	for _, name := range names {
		name = "testdata/" + name
		b, _ := rsaPEM.ReadFile(name)
		blk, _ := pem.Decode(b)
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
		}
		keys = append(keys, k.(*rsa.PrivateKey))
	}
	return keys
}

// counterEnd reads x/crypto's ChaCha20 from a few blocks before its
// counter wraps, in random pieces, into w: each piece's output, and where
// the cipher panics ("counter overflow") instead of reusing key stream.
func counterEnd(rng *rand.Rand, w io.Writer, i int) {
	var key [32]byte
	var nonce [12]byte
	fill(rng, key[:], i)
	fill(rng, nonce[:], i+2)
	c, _ := chacha20.NewUnauthenticatedCipher(key[:], nonce[:])
	c.SetCounter(uint32(1<<32 - uint64(1+rng.IntN(6))))
	for call := 0; call < 30; call++ {
		buf := make([]byte, rng.IntN(200))
		fill(rng, buf, call)
		panicked := func() (p any) {
			defer func() { p = recover() }()
			c.XORKeyStream(buf, buf)
			return nil
		}()
		if panicked != nil {
			fmt.Fprintf(w, "panic %v\n", panicked)
			return
		}
		w.Write(buf)
	}
}

// mark is the armcost plugin's marker: it prints the instructions since
// the previous one under label.
func mark(label int) { syscall.RawSyscall(0x7ff0, uintptr(label), 0, 0) }

// cost marks, in turn: 20 X25519 key agreements (keygen + derive, as a
// TLS handshake does), 20 seals of 16 KiB (a TLS record) with
// ChaCha20-Poly1305, the SHA-1 of 1 MiB (the store's upload digest) and
// 10 RSA-2048 PSS signatures (as a TLS 1.3 server signs its handshake).
func cost() {
	var k, k2 [32]byte
	k[0], k2[0] = 9, 11
	buf := make([]byte, 16<<10)
	var key [32]byte
	var nonce [12]byte
	aead, _ := chacha20poly1305.New(key[:])
	out := make([]byte, 0, len(buf)+16)
	// Warm up, then count.
	curve25519.X25519(k[:], curve25519.Basepoint)
	aead.Seal(out[:0], nonce[:], buf, nil)
	mark(0)
	for i := 0; i < 20; i++ {
		pub, _ := curve25519.X25519(k[:], curve25519.Basepoint)
		s, _ := curve25519.X25519(k2[:], pub)
		binary.LittleEndian.PutUint32(k[:], uint32(i))
		k[1] ^= s[0]
	}
	mark(1)
	for i := 0; i < 20; i++ {
		out = aead.Seal(out[:0], nonce[:], buf, nil)
		nonce[0]++
	}
	mark(2)
	h := sha1.New()
	for range 64 {
		h.Write(buf)
	}
	mark(3)
	key2048 := rsaKeys()[0]
	digest := sha256.Sum256(buf)
	opts := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}
	rsa.SignPSS(crand.Reader, key2048, crypto.SHA256, digest[:], opts) // the key's precomputation
	mark(4)
	for range 10 {
		rsa.SignPSS(crand.Reader, key2048, crypto.SHA256, digest[:], opts)
	}
	mark(5)
}

// wycheproof checks every vector of x25519_test.json and
// chacha20_poly1305_test.json in dir: a valid one must give its output,
// an invalid one must fail, an "acceptable" one may do either (for X25519
// these are points of small order, which Go refuses with an error).
func wycheproof(dir string) (int, error) {
	type test struct {
		TcID                                int
		Result                              string
		Public, Private, Shared             string
		Key, Iv, Aad, Msg, Ct, Tag, Comment string
	}
	var file struct {
		TestGroups []struct {
			Tests []test
		}
	}
	var errs []error
	n := 0
	load := func(name string) error {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		file.TestGroups = nil
		return json.Unmarshal(b, &file)
	}
	if err := load("x25519_test.json"); err != nil {
		return 0, err
	}
	for _, g := range file.TestGroups {
		for _, c := range g.Tests {
			n++
			out, err := curve25519.X25519(h(c.Private), h(c.Public))
			ok := err == nil && bytes.Equal(out, h(c.Shared))
			if (c.Result == "valid" && !ok) || (c.Result == "invalid" && ok) {
				errs = append(errs, fmt.Errorf("x25519 #%d (%s): %x, %v", c.TcID, c.Result, out, err))
			}
		}
	}
	if err := load("chacha20_poly1305_test.json"); err != nil {
		return 0, err
	}
	for _, g := range file.TestGroups {
		for _, c := range g.Tests {
			n++
			aead, err := chacha20poly1305.New(h(c.Key))
			if err != nil || len(h(c.Iv)) != chacha20poly1305.NonceSize {
				if c.Result == "valid" {
					errs = append(errs, fmt.Errorf("chacha20poly1305 #%d: %v", c.TcID, err))
				}
				continue
			}
			sealed := aead.Seal(nil, h(c.Iv), h(c.Msg), h(c.Aad))
			want := append(h(c.Ct), h(c.Tag)...)
			opened, err := aead.Open(nil, h(c.Iv), want, h(c.Aad))
			ok := bytes.Equal(sealed, want) && err == nil && bytes.Equal(opened, h(c.Msg))
			if (c.Result == "valid" && !ok) || (c.Result == "invalid" && err == nil) {
				errs = append(errs, fmt.Errorf("chacha20poly1305 #%d (%s, %s): open: %v", c.TcID, c.Result, c.Comment, err))
			}
		}
	}
	var p256 struct {
		TestGroups []struct {
			PublicKey struct{ Uncompressed string }
			Tests     []struct {
				TcID                                      int
				Result, Public, Private, Shared, Msg, Sig string
			}
		}
	}
	for _, name := range []string{"ecdh_secp256r1_test.json", "ecdsa_secp256r1_sha256_test.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		p256.TestGroups = nil
		if err := json.Unmarshal(b, &p256); err != nil {
			return 0, err
		}
		for _, g := range p256.TestGroups {
			for _, c := range g.Tests {
				n++
				var ok bool
				var detail error
				if name == "ecdh_secp256r1_test.json" {
					// The peer's key as SubjectPublicKeyInfo DER.
					pub, err := x509.ParsePKIXPublicKey(h(c.Public))
					ek, _ := pub.(*ecdsa.PublicKey)
					priv, err2 := ecdh.P256().NewPrivateKey(leftPad(h(c.Private), 32))
					if err == nil && ek != nil && err2 == nil {
						if epub, err := ek.ECDH(); err == nil {
							s, err := priv.ECDH(epub)
							ok, detail = err == nil && bytes.Equal(s, h(c.Shared)), err
						}
					} else {
						detail = errors.Join(err, err2)
					}
				} else {
					pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), h(g.PublicKey.Uncompressed))
					if err == nil {
						d := sha256.Sum256(h(c.Msg))
						ok = ecdsa.VerifyASN1(pub, d[:], h(c.Sig))
					}
					detail = err
				}
				if (c.Result == "valid" && !ok) || (c.Result == "invalid" && ok) {
					errs = append(errs, fmt.Errorf("%s #%d (%s): %v %v", name, c.TcID, c.Result, ok, detail))
				}
			}
		}
	}
	m, err := wycheproofRSA(dir)
	return n + m, errors.Join(append(errs, err)...)
}

// wycheproofRSA checks PKCS #1 v1.5 signatures of a 2048-bit key
// (bigmod's fused 2048-bit rows) and decryptions with 2048 and 3072-bit
// keys (the private key's CRT halves: the 1024 and 1536-bit rows).
func wycheproofRSA(dir string) (int, error) {
	var file struct {
		TestGroups []struct {
			PublicKeyDer, PrivateKeyPkcs8 string
			Tests                         []struct {
				TcID                 any
				Result, Msg, Sig, Ct string
			}
		}
	}
	var errs []error
	n := 0
	for _, name := range []string{"rsa_signature_2048_sha256_test.json", "rsa_pkcs1_2048_test.json", "rsa_pkcs1_3072_test.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		file.TestGroups = nil
		if err := json.Unmarshal(b, &file); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		for _, g := range file.TestGroups {
			var pub *rsa.PublicKey
			var priv *rsa.PrivateKey
			if g.PublicKeyDer != "" {
				k, err := x509.ParsePKIXPublicKey(h(g.PublicKeyDer))
				if pub, _ = k.(*rsa.PublicKey); err != nil || pub == nil {
					return 0, fmt.Errorf("%s: public key: %v", name, err)
				}
			} else {
				k, err := x509.ParsePKCS8PrivateKey(h(g.PrivateKeyPkcs8))
				if priv, _ = k.(*rsa.PrivateKey); err != nil || priv == nil {
					return 0, fmt.Errorf("%s: private key: %v", name, err)
				}
			}
			for _, c := range g.Tests {
				n++
				var ok bool
				if pub != nil {
					d := sha256.Sum256(h(c.Msg))
					ok = rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], h(c.Sig)) == nil
				} else {
					//lint:ignore SA1019 Wycheproof's PKCS #1 v1.5 decryption vectors run the private key's CRT halves through bigmod.
					msg, err := rsa.DecryptPKCS1v15(nil, priv, h(c.Ct))
					ok = err == nil && bytes.Equal(msg, h(c.Msg))
				}
				if (c.Result == "valid" && !ok) || (c.Result == "invalid" && ok) {
					errs = append(errs, fmt.Errorf("%s #%v (%s): %v", name, c.TcID, c.Result, ok))
				}
			}
		}
	}
	return n, errors.Join(errs...)
}

// h is a hex string's bytes (Wycheproof's fields; a malformed one gives
// what decodes, which the vector's result then judges).
func h(s string) []byte {
	b, _ := hex.DecodeString(s)
	return b
}

// leftPad pads a big-endian number to n bytes (Wycheproof's private keys
// are minimal, sometimes with a leading zero byte too many).
func leftPad(b []byte, n int) []byte {
	for len(b) > n && b[0] == 0 {
		b = b[1:]
	}
	if len(b) >= n {
		return b
	}
	return append(make([]byte, n-len(b)), b...)
}

func ct(secret string) {
	// Only the secret may differ between two traces: no collection (it
	// shrinks stacks) and a stack grown beforehand, so that no prologue
	// takes the stack-growth path at one run and not the other (the
	// test also runs with GODEBUG=asyncpreemptoff=1).
	debug.SetGCPercent(-1)
	growStack(64)
	k := sha256.Sum256([]byte("x25519 " + secret))
	p := sha256.Sum256([]byte("point " + secret))
	out, err := curve25519.X25519(k[:], p[:])
	key := sha256.Sum256([]byte("chacha " + secret))
	aead, _ := chacha20poly1305.New(key[:])
	// The message and the sealed output in one allocation: Seal compares
	// their addresses (alias.InexactOverlap), and two allocations may land
	// in either order from one run to the next, which showed as a branch
	// in sealGeneric that no secret decides.
	buf := make([]byte, 2*1024+16)
	msg := buf[:1024]
	copy(msg, bytes.Repeat([]byte(secret), 1024/len(secret)+1))
	sealed := aead.Seal(buf[1024:1024], make([]byte, 12), msg, nil)
	// P-256: a key pair and a shared secret with a fixed peer.
	peer, _ := ecdh.P256().NewPrivateKey(bytes.Repeat([]byte{7}, 32))
	pk := sha256.Sum256([]byte("p256 " + secret))
	var shared []byte
	if priv, err := ecdh.P256().NewPrivateKey(pk[:]); err == nil {
		shared, _ = priv.ECDH(peer.PublicKey())
	}
	// ECDSA P-256: a signature, whose nonce is random in both runs.
	var sig []byte
	if key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), pk[:]); err == nil {
		d := sha256.Sum256([]byte(secret))
		sig, _ = ecdsa.SignASN1(crand.Reader, key, d[:])
	}
	// RSA-2048: a signature of a digest of the secret with one of two
	// keys, as the secret's first byte is even or odd (the
	// exponentiation's table is read at the private exponent's windows,
	// the reduction works with p and q); both keys are parsed in either
	// run. It prints the key's index, which the test requires to differ
	// between its two secrets.
	keys := rsaKeys("rsa-2048.pem", "rsa-2048-b.pem")
	pick := secret[0] & 1
	d := sha256.Sum256([]byte("rsa " + secret))
	rsaSig, _ := rsa.SignPKCS1v15(nil, keys[pick], crypto.SHA256, d[:])
	fmt.Printf("%x %v %x %x %d %d rsa-key=%d\n", out, err, sealed[len(sealed)-16:], shared, len(sig), len(rsaSig), pick)
}

//go:noinline
func growStack(n int) byte {
	var pad [1024]byte
	if n > 0 {
		pad[n] = growStack(n - 1)
	}
	return pad[n]
}

// pubX is a P-256 public key's x coordinate, as 32 bytes.
func pubX(k *ecdsa.PublicKey) []byte {
	b, err := k.Bytes() // 0x04 || x || y
	if err != nil {
		return nil
	}
	return b[1:33]
}
