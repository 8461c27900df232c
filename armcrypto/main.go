// Command armcrypto prepares the board's build, and the PC's, with faster
// crypto. On the board: Go's X25519, P-256, Poly1305 and RSA arithmetic
// use 64-bit limbs, and on the Cortex-A8's 32-bit core every bits.Mul64
// is emulated; SHA-256 and SHA-512 are generic Go, SHA-1 and ChaCha20
// leave NEON unused. The files in _overlay put 32-bit-word and NEON code
// in their place through `go build -overlay`. On amd64 only RSA's
// Montgomery arithmetic changes (bigmod: a whole multiplication or
// squaring in one call with MULX and ADX, where the CPU has them); the
// rest builds there as the standard library's. crypto/tls, crypto/ecdh
// and x/crypto/ssh are untouched and call it as they called the code it
// replaces. Where a function must give way inside a file (crypto/ecdh's
// X25519 ladder, bigmod's Montgomery multiplication, the runtime's
// memmove), the overlay takes the pinned file with that one declaration
// renamed and adds a file that defines the name.
//
//	go run ./armcrypto -out DIR [-tests]
//
// writes DIR/overlay.json, and DIR/go.mod and DIR/go.sum that replace
// golang.org/x/crypto with a copy in DIR/x-crypto (go build refuses to
// overlay a file in the module cache). make build, build-arm and deb
// then take
//
//	go build -modfile=DIR/go.mod -overlay=DIR/overlay.json
//
// With -tests the overlay also adds the differential tests to the
// standard packages (armcrypto_test.go runs them).
//
// The overlay is written against one toolchain and one x/crypto: it
// refuses, with the reason, if go.mod, the go command or x/crypto name
// another version, or if a file it replaces or relies on differs from
// the one it was tested with.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// The versions the overlay was written and tested for.
const (
	goVersion     = "go1.26.8"
	xcryptoModule = "golang.org/x/crypto"
	xcryptoVer    = "v0.59.0"
)

// A patch is one file the overlay replaces or adds, or (with no src) one
// it relies on unchanged.
//
// A file that takes another's place must build exactly where the original
// did, and the originals' constraints differ between the standard
// library's vendored x/crypto and the module (loong64, riscv64): such a
// file's own //go:build line is replaced, as the overlay is written, by
// the constraint of the file named in tagOf (the pinned original, in the
// same folder), and with extra (what this file leaves to another of
// ours, as the ARM assembly) when set.
type patch struct {
	root   string // "GOROOT", "x/crypto" or "bonesync" (this module)
	file   string // path in the root
	sha256 string // the original's, "" for a file the overlay adds
	src    string // in _overlay; "" for a file only relied on
	test   bool   // only with -tests
	tagOf  string // a file in the same folder whose //go:build line this one takes
	extra  string // a constraint ANDed with tagOf's
	// rename, for a file relied on (sha256 set, no src): the overlay
	// takes the original with each declaration's line start changed from
	// [0] to [1] (a function renamed, as "func f(" to "func fGeneric(",
	// or an assembly TEXT symbol), so that a file of ours can define the
	// name and call the original under the new one.
	rename [][2]string
}

const (
	field    = "src/crypto/internal/fips140/edwards25519/field/"
	poly     = "src/vendor/golang.org/x/crypto/internal/poly1305/"
	xpoly    = "internal/poly1305/"
	fieldSrc = "field/"
	polySrc  = "poly1305/"

	nistec    = "src/crypto/internal/fips140/nistec/"
	nistecSrc = "nistec/"
	fiat      = "src/crypto/internal/fips140/nistec/fiat/"
	fiatSrc   = "fiat/"
	chacha    = "src/vendor/golang.org/x/crypto/chacha20/"
	xchacha   = "chacha20/"
	chachaSrc = "chacha20/"
	sha1      = "src/crypto/sha1/"
	sha1Src   = "sha1/"
	bigmod    = "src/crypto/internal/fips140/bigmod/"
	bigmodSrc = "bigmod/"
	sha256Dir = "src/crypto/internal/fips140/sha256/"
	sha256Src = "sha256/"
	sha512Dir = "src/crypto/internal/fips140/sha512/"
	sha512Src = "sha512/"
	ecdh      = "src/crypto/ecdh/"
	ecdhSrc   = "ecdh/"
)

var patches = []patch{
	// X25519's field multiplication and squaring in radix 2^25.5.
	{root: "GOROOT", file: field + "fe_amd64_noasm.go", sha256: "3f3d670d4da11ac2e68a8dfd69d869f955ea9a85264cf88ee55184e61f74ba2e", src: fieldSrc + "fe_arm32.go", tagOf: "fe_amd64_noasm.go"},
	{root: "GOROOT", file: field + "fe.go", sha256: "7e678ceaf12dff6b4f09ff09e45d02fe912f55d8147c527ba5865d2c0007aea3"},
	{root: "GOROOT", file: field + "fe_generic.go", sha256: "75d213650f76b7c5501202bf5cae1f0cdc1f84fbaa8bed5f93c0109189e01dba"},
	{root: "GOROOT", file: field + "fe_arm32_noasm.go", src: fieldSrc + "fe_arm32_noasm.go", tagOf: "fe_amd64_noasm.go", extra: "!arm || purego"},
	{root: "GOROOT", file: field + "fe_arm32_arm.go", src: fieldSrc + "fe_arm32_arm.go"},
	{root: "GOROOT", file: field + "fe_arm32_arm.s", src: fieldSrc + "fe_arm32_arm.s"},
	{root: "GOROOT", file: field + "fe_arm32_test.go", src: fieldSrc + "fe_arm32_test.go", test: true, tagOf: "fe_amd64_noasm.go"},
	// X25519's whole ladder in eight 32-bit words with UMAAL; the
	// standard library's ladder stays, renamed, for the other builds.
	{root: "GOROOT", file: ecdh + "x25519.go", sha256: "6dff1337f8540910d0bed609b7acf338e365c26be56df9d6cd60fd6b49afa41e", rename: [][2]string{{"func x25519ScalarMult(", "func x25519ScalarMultGeneric("}}},
	{root: "GOROOT", file: ecdh + "x25519_arm32.go", src: ecdhSrc + "x25519_arm32.go"},
	{root: "GOROOT", file: ecdh + "x25519_arm32_noasm.go", src: ecdhSrc + "x25519_arm32_noasm.go"},
	{root: "GOROOT", file: ecdh + "x25519_arm32_arm.go", src: ecdhSrc + "x25519_arm32_arm.go"},
	{root: "GOROOT", file: ecdh + "x25519_arm32_arm.s", src: ecdhSrc + "x25519_arm32_arm.s"},
	{root: "GOROOT", file: ecdh + "x25519_arm32_test.go", src: ecdhSrc + "x25519_arm32_test.go", test: true},
	// Poly1305 in radix 2^26, for crypto/tls (the standard library's
	// vendored x/crypto) and for x/crypto/ssh (the module).
	{root: "GOROOT", file: poly + "mac_noasm.go", sha256: "f5308cd6f14bab1b00963eeae8137d63fc5452db7f7d49276a56f457bfd89d2d", src: polySrc + "mac_arm32.go", tagOf: "mac_noasm.go"},
	{root: "GOROOT", file: poly + "mac_arm32_noasm.go", src: polySrc + "mac_arm32_noasm.go", tagOf: "mac_noasm.go", extra: "!arm || !gc || purego"},
	{root: "GOROOT", file: poly + "mac_arm32_arm.go", src: polySrc + "mac_arm32_arm.go"},
	{root: "GOROOT", file: poly + "mac_arm32_arm.s", src: polySrc + "mac_arm32_arm.s"},
	{root: "GOROOT", file: poly + "sum_generic.go", sha256: "b0094a2895d5bda42dcaaf57c0b31fc914c3b6c6aa6237aab0100a6d78346933"},
	{root: "GOROOT", file: poly + "poly1305.go", sha256: "c4b20ab7330e47ee155a775f69ae3b0e432c75d74ad005cf764228a69ddf6da6"},
	{root: "x/crypto", file: xpoly + "mac_noasm.go", sha256: "e8ad079a9c995609bb5bf27fe41d597c5a0bda8ee0b887cb6f23754427c107ea", src: polySrc + "mac_arm32.go", tagOf: "mac_noasm.go"},
	{root: "x/crypto", file: xpoly + "mac_arm32_noasm.go", src: polySrc + "mac_arm32_noasm.go", tagOf: "mac_noasm.go", extra: "!arm || !gc || purego"},
	{root: "x/crypto", file: xpoly + "mac_arm32_arm.go", src: polySrc + "mac_arm32_arm.go"},
	{root: "x/crypto", file: xpoly + "mac_arm32_arm.s", src: polySrc + "mac_arm32_arm.s"},
	{root: "x/crypto", file: xpoly + "sum_generic.go", sha256: "b0094a2895d5bda42dcaaf57c0b31fc914c3b6c6aa6237aab0100a6d78346933"},
	{root: "x/crypto", file: xpoly + "poly1305.go", sha256: "c4b20ab7330e47ee155a775f69ae3b0e432c75d74ad005cf764228a69ddf6da6"},
	{root: "x/crypto", file: xpoly + "mac_arm32_test.go", src: polySrc + "mac_arm32_test.go", test: true, tagOf: "mac_noasm.go"},
	// P-256's field in 32-bit words.
	{root: "GOROOT", file: fiat + "p256_fiat64.go", sha256: "f01a239cc66c1c6b8dd98e66bfa69b4e72f899431fdb63393e84e003705923ac", src: fiatSrc + "p256_fiat32.go"},
	{root: "GOROOT", file: fiat + "p256.go", sha256: "b5e874ddd907466916c93ed1bca988d7264ee2cadcc4892bcf72c8d3ea50fa68"},
	{root: "GOROOT", file: fiat + "p256_invert.go", sha256: "2677f82201b5789d9257a9cc5b5ddd6036858245574d9ee220bdd1715d2e67bc"},
	{root: "GOROOT", file: fiat + "p256_fiat32_noasm.go", src: fiatSrc + "p256_fiat32_noasm.go"},
	{root: "GOROOT", file: fiat + "p256_fiat32_arm.go", src: fiatSrc + "p256_fiat32_arm.go"},
	{root: "GOROOT", file: fiat + "p256_fiat32_arm.s", src: fiatSrc + "p256_fiat32_arm.s"},
	{root: "GOROOT", file: fiat + "p256_fiat32_test.go", src: fiatSrc + "p256_fiat32_test.go", test: true},
	// ECDSA's inverse mod n (Go has it in assembly on amd64 and arm64 only).
	{root: "GOROOT", file: nistec + "p256_ordinv_noasm.go", sha256: "be71dad977c50335c9239a3d373506841b58a0ffa63f99c9d86931fb4ff25e7c", src: nistecSrc + "p256_ordinv_arm32.go", tagOf: "p256_ordinv_noasm.go"},
	{root: "GOROOT", file: nistec + "p256.go", sha256: "aefa1a76543721e8e4d0b38cb07dfc71bfda7b005500864c7a69457fe216d660"},
	{root: "GOROOT", file: "src/crypto/internal/fips140/ecdsa/ecdsa.go", sha256: "a8cada6e2681439e415b81b698f94aa499d1ba7157fc4fb9e34881ba9d082ec3"},
	{root: "GOROOT", file: nistec + "p256_ordinv_arm32_noasm.go", src: nistecSrc + "p256_ordinv_arm32_noasm.go", tagOf: "p256_ordinv_noasm.go", extra: "!arm || !arm.6 || purego"},
	{root: "GOROOT", file: nistec + "p256_ordinv_arm32_arm.go", src: nistecSrc + "p256_ordinv_arm32_arm.go"},
	{root: "GOROOT", file: nistec + "p256_ordinv_arm32_arm.s", src: nistecSrc + "p256_ordinv_arm32_arm.s"},
	{root: "GOROOT", file: nistec + "p256_ordinv_arm32_test.go", src: nistecSrc + "p256_ordinv_arm32_test.go", test: true, tagOf: "p256_ordinv_noasm.go"},
	// ChaCha20 in NEON, for the same two.
	{root: "GOROOT", file: chacha + "chacha_noasm.go", sha256: "bbdb67ceb30ef13efc54e17935f47e00744b96754e03364e606d4f1f8f9085c1", src: chachaSrc + "chacha_arm32_noasm.go", tagOf: "chacha_noasm.go", extra: "!arm || !gc || purego"},
	{root: "GOROOT", file: chacha + "chacha_generic.go", sha256: "34403e82b1387b4402b00ce30c1364508c333f4bdbe671321690c6ebaa8d3180"},
	{root: "GOROOT", file: chacha + "chacha_arm32_arm.go", src: chachaSrc + "chacha_arm32_arm.go"},
	{root: "GOROOT", file: chacha + "chacha_arm32_arm.s", src: chachaSrc + "chacha_arm32_arm.s"},
	{root: "GOROOT", file: chacha + "chacha_arm32_test.go", src: chachaSrc + "chacha_arm32_test.go", test: true},
	{root: "x/crypto", file: xchacha + "chacha_noasm.go", sha256: "7533b8266ccb098f4cff5649dddff8a58574411c4765712d5bb045484bd078b1", src: chachaSrc + "chacha_arm32_noasm.go", tagOf: "chacha_noasm.go", extra: "!arm || !gc || purego"},
	{root: "x/crypto", file: xchacha + "chacha_generic.go", sha256: "34403e82b1387b4402b00ce30c1364508c333f4bdbe671321690c6ebaa8d3180"},
	{root: "x/crypto", file: xchacha + "chacha_arm32_arm.go", src: chachaSrc + "chacha_arm32_arm.go"},
	{root: "x/crypto", file: xchacha + "chacha_arm32_arm.s", src: chachaSrc + "chacha_arm32_arm.s"},
	{root: "x/crypto", file: xchacha + "chacha_arm32_test.go", src: chachaSrc + "chacha_arm32_test.go", test: true},
	{root: "x/crypto", file: xchacha + "chacha_arm32_arm_test.go", src: chachaSrc + "chacha_arm32_arm_test.go", test: true},
	// SHA-1 (the store's upload digest): the message schedule in NEON.
	{root: "GOROOT", file: sha1 + "sha1block_arm.s", sha256: "19776a03d2ec49a1b0062c1cccf5d677ac84f6ff402a6d1634c420a2613bfaae", src: sha1Src + "sha1block_arm.s"},
	{root: "GOROOT", file: sha1 + "sha1block_decl.go", sha256: "d106c8095b96f4e7f704912106cd2c301209343e373f7e3895969ec7a222b10a"},
	{root: "GOROOT", file: sha1 + "sha1.go", sha256: "ee286c960d9f42c93e95c59838e74d4420641497fc3eb6e84ac2cc2d2e367ae7"},
	{root: "GOROOT", file: sha1 + "sha1block.go", sha256: "64a5f9acf7a3dc268abbcd16e6727a8e105267393cd909c2736ec8d8f32a24f3"},
	{root: "GOROOT", file: sha1 + "sha1block_arm32_arm.go", src: sha1Src + "sha1block_arm32_arm.go"},
	{root: "GOROOT", file: sha1 + "sha1block_arm32_arm_test.go", src: sha1Src + "sha1block_arm32_arm_test.go", test: true},
	// RSA's Montgomery multiplication and squaring with UMAAL, four
	// words at a time, the exponentiation's table selection, and the
	// reduction of a ciphertext modulo p and q by one multiplication;
	// the standard library's stay, renamed, for other sizes and builds.
	{root: "GOROOT", file: bigmod + "nat.go", sha256: "02e9175e5315b183eb60afa8d5ebb4c52d2b0d88289b81e16823a8ebb695cd49", rename: [][2]string{
		{"func (x *Nat) montgomeryMul(", "func (x *Nat) montgomeryMulGeneric("},
		{"func (out *Nat) Mod(", "func (out *Nat) modGeneric("},
		{"func (out *Nat) Exp(", "func (out *Nat) expGeneric("},
	}},
	{root: "GOROOT", file: bigmod + "nat_mont.go", src: bigmodSrc + "nat_mont.go"},
	{root: "GOROOT", file: bigmod + "nat_mont_noasm.go", src: bigmodSrc + "nat_mont_noasm.go"},
	{root: "GOROOT", file: bigmod + "nat_mont_asm.go", src: bigmodSrc + "nat_mont_asm.go"},
	{root: "GOROOT", file: bigmod + "nat_arm32_arm.go", src: bigmodSrc + "nat_arm32_arm.go"},
	{root: "GOROOT", file: bigmod + "nat_arm32_arm.s", src: bigmodSrc + "nat_arm32_arm.s"},
	{root: "GOROOT", file: bigmod + "nat_mont_test.go", src: bigmodSrc + "nat_mont_test.go", test: true},
	// The same on amd64 with MULX, ADCX and ADOX, where the CPU has them
	// (nat_asm.go's supportADX).
	{root: "GOROOT", file: bigmod + "nat_asm.go", sha256: "2cbf10e43db0371bd3466068580d3b69960a9be8b57d857c8e66b888fec10bf0"},
	{root: "GOROOT", file: bigmod + "nat_mont_amd64.go", src: bigmodSrc + "nat_mont_amd64.go"},
	{root: "GOROOT", file: bigmod + "nat_mont_amd64.s", src: bigmodSrc + "nat_mont_amd64.s"},
	{root: "GOROOT", file: bigmod + "nat_mont_amd64_test.go", src: bigmodSrc + "nat_mont_amd64_test.go", test: true},
	// SHA-256 (the handshake's transcript, HKDF and certificates).
	{root: "GOROOT", file: sha256Dir + "sha256block_noasm.go", sha256: "b481697aa528de27d61b405f4cdc5f5ab262c0a64d291a6d8e17ecf2e6f0793d", src: sha256Src + "sha256block_arm32_noasm.go", tagOf: "sha256block_noasm.go", extra: "!arm || !arm.6 || purego"},
	{root: "GOROOT", file: sha256Dir + "sha256block.go", sha256: "eb49287421c308743473db444fff531f65231f1c5d8ecbc48b6b4ca1441975ec"},
	{root: "GOROOT", file: sha256Dir + "sha256.go", sha256: "94f8a5508cda46bc036b891d32eae19eb31253946d3442e44d4bb3e0341643b8"},
	{root: "GOROOT", file: sha256Dir + "sha256block_arm32_arm.go", src: sha256Src + "sha256block_arm32_arm.go"},
	{root: "GOROOT", file: sha256Dir + "sha256block_arm32_arm.s", src: sha256Src + "sha256block_arm32_arm.s"},
	// SHA-512 in NEON (ECDSA's nonce, Ed25519).
	{root: "GOROOT", file: sha512Dir + "sha512block_noasm.go", sha256: "868546eb72313abd97c42d04409e991966abc0f1de6b9812c24f75e0f1453a83", src: sha512Src + "sha512block_arm32_noasm.go", tagOf: "sha512block_noasm.go", extra: "!arm || purego"},
	{root: "GOROOT", file: sha512Dir + "sha512block.go", sha256: "4c5febb80a02435b3b9baa16b6009dbb7ed4dbc6027455bbe7eb609109803ffb"},
	{root: "GOROOT", file: sha512Dir + "sha512.go", sha256: "2d5b0c8c656c71c5a9eff37daf1919141e7742f519c7ad135336ee8805f76cdc"},
	{root: "GOROOT", file: sha512Dir + "sha512block_arm32_arm.go", src: sha512Src + "sha512block_arm32_arm.go"},
	{root: "GOROOT", file: "src/crypto/internal/fips140deps/cpu/cpu.go", sha256: "0a17476e7b34fba9e513e3bc9a34f300185ff39f44c45e4b309031d4e2d1d453"},
	{root: "GOROOT", file: "src/crypto/internal/fips140deps/cpu/cpu_arm32.go", src: "fips140deps/cpu_arm32.go"},
	{root: "GOROOT", file: sha512Dir + "sha512block_arm32_arm.s", src: sha512Src + "sha512block_arm32_arm.s"},
	// memmove of misaligned copies (TLS records, HTTP/2 frames, SSH
	// packets) in NEON; the runtime's stays, renamed, for the rest.
	{root: "GOROOT", file: "src/runtime/memmove_arm.s", sha256: "536430961a3cdd3f5c5f4b4f8b0799535efc1bf20a4da53f810f201720de5494", rename: [][2]string{{"TEXT runtime·memmove(SB)", "TEXT runtime·memmoveGeneric(SB)"}}},
	{root: "GOROOT", file: "src/runtime/memmove_arm32_arm.s", src: "runtime/memmove_arm32_arm.s"},
	{root: "GOROOT", file: "src/runtime/memmove_arm32_arm.go", src: "runtime/memmove_arm32_arm.go"},
	// The binary's own mark that it was built with the overlay: without
	// it, the board's build says at start that it is the slow path.
	{root: "bonesync", file: "appliance/armcrypto_overlay.go", src: "armcrypto_overlay.go"},
}

func main() {
	out := flag.String("out", "", "folder for overlay.json, go.mod, go.sum and the x/crypto copy")
	tests := flag.Bool("tests", false, "add the differential tests to the standard packages")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: go run ./armcrypto -out DIR [-tests]")
		os.Exit(2)
	}
	if err := prepare(*out, *tests); err != nil {
		fmt.Fprintln(os.Stderr, "armcrypto:", err)
		os.Exit(1)
	}
}

// env is what prepare reads from the go command and the module.
type env struct {
	goVersion string // the go command's, as `go env GOVERSION`
	goroot    string
	modRoot   string // this module's folder
	modCache  string // GOMODCACHE: where GOTOOLCHAIN puts a fetched Go
	goModGo   string // go.mod's go line, as "go1.26.8"
	xDir      string // x/crypto in the module cache
	xVersion  string
}

func readEnv() (env, error) {
	var e env
	q, err := exec.Command("go", "env", "GOVERSION", "GOROOT", "GOMOD", "GOMODCACHE").Output()
	if err != nil {
		return e, fmt.Errorf("go env: %w", err)
	}
	f := strings.Split(strings.TrimSpace(string(q)), "\n")
	if len(f) != 4 || f[2] == "" || f[2] == os.DevNull {
		return e, fmt.Errorf("go env printed %q: run from the bonesync module", q)
	}
	e.goVersion, e.goroot, e.modRoot, e.modCache = f[0], f[1], filepath.Dir(f[2]), f[3]
	mod, err := os.ReadFile(f[2])
	if err != nil {
		return e, err
	}
	if m := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(mod); m != nil {
		e.goModGo = "go" + string(m[1])
	}
	q, err = exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", xcryptoModule).Output()
	if err != nil {
		return e, fmt.Errorf("go list -m %s: %w", xcryptoModule, err)
	}
	e.xDir, e.xVersion, _ = strings.Cut(strings.TrimSpace(string(q)), " ")
	return e, nil
}

// check refuses a toolchain or x/crypto other than the overlay's.
func (e env) check() error {
	switch {
	case e.goModGo != goVersion:
		return fmt.Errorf("go.mod says %s, but the crypto overlay (armcrypto) was written and tested for %s: test and update armcrypto (its pinned versions and file hashes) with the new toolchain, or build without it (make build-std, make build-arm-std)", e.goModGo, goVersion)
	case e.goVersion != goVersion:
		return fmt.Errorf("the go command is %s, but the crypto overlay (armcrypto) was written and tested for %s (go.mod's): run it as make does, with GOTOOLCHAIN=%s (the go command fetches that release), or build without the overlay (make build-std, make build-arm-std)", e.goVersion, goVersion, goVersion)
	case e.xVersion != xcryptoVer:
		return fmt.Errorf("%s is %s, but the crypto overlay (armcrypto) was written and tested for %s: test and update armcrypto, or build without it (make build-std, make build-arm-std)", xcryptoModule, e.xVersion, xcryptoVer)
	}
	return nil
}

func (e env) rootOf(p patch, xcopy string) string {
	switch p.root {
	case "GOROOT":
		return e.goroot
	case "bonesync":
		return e.modRoot
	}
	return xcopy
}

func prepare(out string, tests bool) error {
	e, err := readEnv()
	if err != nil {
		return err
	}
	if err := e.check(); err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	// The go command refuses to overlay a file in the module cache, where
	// GOTOOLCHAIN puts the Go it fetched when the local one is another
	// release: that Go is then linked (or copied) out of the cache, and the
	// board's build runs it from there (DIR/go-command names it).
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	gocmd := "go"
	if rel, err := filepath.Rel(e.modCache, e.goroot); err == nil && !strings.HasPrefix(rel, "..") {
		root := filepath.Join(out, "goroot-"+e.goVersion) // never another release's, kept from before
		if err := linkTree(e.goroot, root); err != nil {
			return fmt.Errorf("copy the fetched Go out of the module cache: %w", err)
		}
		e.goroot, gocmd = root, filepath.Join(root, "bin", "go")
	}
	if err := os.WriteFile(filepath.Join(out, "go-command"), []byte(gocmd+"\n"), 0o644); err != nil {
		return err
	}
	// The copy of x/crypto, fresh: the overlay may name files in it.
	xcopy := filepath.Join(out, "x-crypto")
	os.RemoveAll(xcopy)
	if err := copyTree(e.xDir, xcopy); err != nil {
		return fmt.Errorf("copy %s: %w", xcryptoModule, err)
	}
	replace := map[string]string{}
	src := filepath.Join(e.modRoot, "armcrypto", "_overlay")
	for _, p := range patches {
		target := filepath.Join(e.rootOf(p, xcopy), filepath.FromSlash(p.file))
		if p.sha256 != "" {
			b, err := os.ReadFile(target)
			if err != nil {
				return fmt.Errorf("a file the overlay replaces or relies on: %w", err)
			}
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != p.sha256 {
				return fmt.Errorf("%s differs from the file the overlay was written for (%s with %s %s): test and update armcrypto", target, goVersion, xcryptoModule, xcryptoVer)
			}
		}
		if len(p.rename) > 0 {
			r, err := renameFunc(target, p.rename, filepath.Join(out, "src", p.root, filepath.FromSlash(p.file)))
			if err != nil {
				return err
			}
			replace[target] = r
		}
		if p.src == "" || (p.test && !tests) {
			continue
		}
		s := filepath.Join(src, filepath.FromSlash(p.src))
		if _, err := os.Stat(s); err != nil {
			return err
		}
		if p.tagOf != "" {
			if s, err = retag(s, filepath.Join(filepath.Dir(target), p.tagOf), p.extra, filepath.Join(out, "src", p.root, filepath.FromSlash(p.file))); err != nil {
				return err
			}
		}
		replace[target] = s
	}
	if err := writeModFiles(e, out, xcopy); err != nil {
		return err
	}
	j, err := json.MarshalIndent(map[string]any{"Replace": replace}, "", "\t")
	if err != nil {
		return fmt.Errorf("overlay.json: %w", err)
	}
	return os.WriteFile(filepath.Join(out, "overlay.json"), append(j, '\n'), 0o644)
}

// renameFunc writes src to dst with, for each decl, the one line that
// starts with decl[0] starting with decl[1] instead (a declaration
// renamed: its callers keep the old name, which a file of ours then
// defines), and returns dst.
func renameFunc(src string, decls [][2]string, dst string) (string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	for _, decl := range decls {
		old := []byte("\n" + decl[0])
		if n := bytes.Count(b, old); n != 1 {
			return "", fmt.Errorf("%s has %d lines starting %q, want one", src, n, decl[0])
		}
		b = bytes.Replace(b, old, []byte("\n"+decl[1]), 1)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	return dst, os.WriteFile(dst, b, 0o644)
}

var buildLine = regexp.MustCompile(`(?m)^//go:build (.*)$`)

// retag writes src to dst with its //go:build line replaced by from's
// (and extra), and returns dst.
func retag(src, from, extra, dst string) (string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	f, err := os.ReadFile(from)
	if err != nil {
		return "", err
	}
	if !buildLine.Match(b) {
		return "", fmt.Errorf("%s has no //go:build line to replace", src)
	}
	tag := ""
	if m := buildLine.FindSubmatch(f); m != nil {
		tag = string(m[1])
	}
	switch {
	case tag != "" && extra != "":
		tag = "(" + tag + ") && (" + extra + ")"
	case extra != "":
		tag = extra
	}
	line := []byte("//go:build " + tag)
	if tag == "" {
		line = []byte("// (no build constraint: the original has none)")
	}
	b = buildLine.ReplaceAllLiteral(b, line)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	return dst, os.WriteFile(dst, b, 0o644)
}

// writeModFiles writes go.mod (this module's, replacing x/crypto by the
// copy) and go.sum beside it, as -modfile expects.
func writeModFiles(e env, out, xcopy string) error {
	mod, err := os.ReadFile(filepath.Join(e.modRoot, "go.mod"))
	if err != nil {
		return err
	}
	mod = fmt.Appendf(mod, "\n// Written by armcrypto: the board's build with the crypto overlay.\nreplace %s => %s\n", xcryptoModule, xcopy)
	if err := os.WriteFile(filepath.Join(out, "go.mod"), mod, 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(e.modRoot, "go.sum"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "go.sum"), sum, 0o644)
}

// linkTree makes to a tree like from, each file a hard link to from's
// (a copy where the two are on different file systems), made aside and
// renamed whole; one already there of the same release is kept.
func linkTree(from, to string) error {
	if a, err := os.ReadFile(filepath.Join(to, "VERSION")); err == nil {
		if b, _ := os.ReadFile(filepath.Join(from, "VERSION")); string(a) == string(b) {
			return nil
		}
	}
	os.RemoveAll(to)
	tmp := to + ".tmp"
	os.RemoveAll(tmp)
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			if os.Link(p, dst) == nil {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, fi.Mode().Perm()|0o200)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return os.Rename(tmp, to)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		}
		return errors.New("unexpected file type: " + p)
	})
}
