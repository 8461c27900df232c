package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/cpu"
)

// make fuzz-arm runs many more: go test ./armcrypto -args -cases 300000
var cases = flag.Int("cases", 3000, "random cases per primitive in the differential test")

// make test runs the standard packages' own tests with -short (their
// vectors bounded); make crypto-full (which make bench runs) runs them
// whole, with many more differential cases.
var full = flag.Bool("full", false, "the standard packages' tests whole, not -short")

// The std packages whose own tests (RFC 7748's and RFC 8439's vectors
// among them) run with the overlay and its added tests. TestFeMul and
// TestFeSquare compare limbs with the 64-bit code exactly, which the
// 32-bit code's differ from (the values are equal mod p, as
// TestFeMul32Differential checks); they are skipped.
var stdPackages = []string{
	"crypto/internal/fips140/edwards25519/field",
	"crypto/ecdh",
	"crypto/internal/fips140/nistec/fiat",
	"crypto/internal/fips140/nistec",
	"crypto/ecdsa",
	"golang.org/x/crypto/curve25519",
	"golang.org/x/crypto/internal/poly1305",
	"golang.org/x/crypto/chacha20",
	"vendor/golang.org/x/crypto/chacha20", // crypto/tls's copy, with the same tests added
	"golang.org/x/crypto/chacha20poly1305",
	"crypto/sha1",
	"crypto/sha256",
	"crypto/sha512",
	"crypto/ed25519",
	"crypto/hmac",
	"crypto/internal/fips140/bigmod",
	"crypto/rsa",
}

const skipLimbExact = `^(TestFeMul|TestFeSquare)$`

var (
	prepOnce sync.Once
	prepDir  string
	prepErr  error
)

// prepared is the overlay with the tests added, made once.
func prepared(t *testing.T) string {
	t.Helper()
	prepOnce.Do(func() {
		prepDir, prepErr = os.MkdirTemp("", "armcrypto")
		if prepErr == nil {
			prepErr = prepare(prepDir, true)
		}
	})
	if prepErr != nil {
		t.Fatal(prepErr)
	}
	return prepDir
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if prepDir != "" {
		os.RemoveAll(prepDir)
	}
	os.Exit(code)
}

func overlayFlags(dir string) []string {
	return []string{"-modfile=" + filepath.Join(dir, "go.mod"), "-overlay=" + filepath.Join(dir, "overlay.json")}
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

var armEnv = []string{"GOOS=linux", "GOARCH=arm", "GOARM=7", "CGO_ENABLED=0"}

func TestPinnedVersions(t *testing.T) {
	good := env{goVersion: goVersion, goModGo: goVersion, xVersion: xcryptoVer}
	if err := good.check(); err != nil {
		t.Fatalf("the pinned versions refused: %v", err)
	}
	for _, bad := range []env{
		{goVersion: "go1.27.0", goModGo: goVersion, xVersion: xcryptoVer},
		{goVersion: goVersion, goModGo: "go1.27.0", xVersion: xcryptoVer},
		{goVersion: goVersion, goModGo: goVersion, xVersion: "v0.60.0"},
	} {
		err := bad.check()
		if err == nil || !strings.Contains(err.Error(), "written and tested for") || !strings.Contains(err.Error(), "build-arm-std") {
			t.Errorf("%+v: %v, want a refusal that says why and what to do", bad, err)
		}
	}
	// The real toolchain and module are the pinned ones, and every file
	// the overlay replaces or relies on is the one it was written for.
	prepared(t)
}

// anotherGo is a Go release other than go.mod's that the module proxy
// serves, as a contributor's machine may have.
const anotherGo = "go1.27.3"

// make build-arm with another local Go (anotherGo's go command) builds,
// through GOTOOLCHAIN, the very binary the pinned Go builds: the fetched
// Go is taken out of the module cache, where an overlay may not reach.
func TestAnotherGoBuildsTheSame(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the board's binary twice")
	}
	cmd := exec.Command("go", "env", "GOROOT")
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+anotherGo)
	root, err := cmd.Output()
	if err != nil {
		t.Skipf("%s cannot be fetched here: %v", anotherGo, err)
	}
	other := filepath.Join(strings.TrimSpace(string(root)), "bin", "go")
	out := t.TempDir() // one OUT for both: the x/crypto copy's path is in the binary
	var sums [2]string
	for i, gocmd := range []string{other, "go"} {
		os.RemoveAll(out)
		run(t, nil, "make", "-C", "..", "build-arm", "GO="+gocmd, "OUT="+out)
		b, err := os.ReadFile(filepath.Join(out, "bonesync-armv7"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		sums[i] = hex.EncodeToString(sum[:])
	}
	if sums[0] != sums[1] {
		t.Errorf("built with %s's go command: %s; with the pinned Go: %s", anotherGo, sums[0], sums[1])
	}
	if c, _ := os.ReadFile(filepath.Join(out, "armcrypto", "go-command")); strings.TrimSpace(string(c)) != "go" {
		t.Errorf("the pinned Go's build ran %q", c)
	}
}

// The overlay's code on this machine (purego takes the generic paths on
// amd64 too): the std tests and the added differential ones, quickly.
func TestOverlayPurego(t *testing.T) {
	dir := prepared(t)
	args := append([]string{"test", "-count=1", "-tags", "purego", "-skip", skipLimbExact}, overlayFlags(dir)...)
	out := run(t, nil, "go", append(args, stdPackages...)...)
	t.Logf("%s", out)
}

// The packages the overlay touches, as go vet and go build name them
// (the standard library's vendored copies included).
var overlaid = []string{
	"crypto/ecdh",
	"crypto/internal/fips140/edwards25519/field",
	"crypto/internal/fips140/nistec/fiat",
	"crypto/internal/fips140/nistec",
	"vendor/golang.org/x/crypto/internal/poly1305",
	"vendor/golang.org/x/crypto/chacha20",
	"golang.org/x/crypto/internal/poly1305",
	"golang.org/x/crypto/chacha20",
	"crypto/sha1",
	"crypto/internal/fips140/sha256",
	"crypto/internal/fips140/sha512",
	"crypto/internal/fips140deps/cpu",
	"crypto/internal/fips140/bigmod",
	"runtime",
}

// go vet on the board's build and the PC's checks the assembly against
// its Go declarations (asmdecl: argument names, offsets, frame sizes).
func TestOverlayVet(t *testing.T) {
	dir := prepared(t)
	args := append(append([]string{"vet"}, overlayFlags(dir)...), overlaid...)
	run(t, armEnv, "go", args...)
	run(t, amd64Env, "go", args...)
}

var amd64Env = []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}

// The PC's build on this machine (amd64, not purego: bigmod's MULX and
// ADX code where the CPU has them): the std tests and the added ones,
// again with ADX turned off as on a CPU without it (the generic code),
// the probe's outputs against the untouched standard library's, and
// under qemu-x86_64 the constant-time check (testConstantTime), which
// sees the amd64 assembly's blocks and the standard library's there.
func TestOnAMD64(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the PC's build runs on amd64")
	}
	if !cpu.X86.HasADX || !cpu.X86.HasBMI2 {
		t.Log("this CPU has no ADX or BMI2: the amd64 assembly does not run here, only the generic code")
	}
	dir := prepared(t)
	t.Run("std", func(t *testing.T) {
		args := append([]string{"test", "-count=1", "-short", "-timeout", "60m", "-skip", skipLimbExact}, overlayFlags(dir)...)
		if *full {
			args = slices.DeleteFunc(args, func(a string) bool { return a == "-short" })
		}
		t.Logf("%s", run(t, amd64Env, "go", append(args, stdPackages...)...))
	})
	t.Run("without ADX", func(t *testing.T) {
		args := append([]string{"test", "-count=1", "-short"}, overlayFlags(dir)...)
		t.Logf("%s", run(t, append(slices.Clone(amd64Env), "GODEBUG=cpu.adx=off"), "go", append(args, "crypto/internal/fips140/bigmod", "crypto/rsa")...))
	})
	t.Run("differential", func(t *testing.T) {
		probe := filepath.Join(t.TempDir(), "probe-amd64")
		run(t, amd64Env, "go", append(append([]string{"build"}, overlayFlags(dir)...), "-o", probe, "./probe")...)
		n := strconv.Itoa(*cases)
		want := run(t, nil, "go", "run", "./probe", "diff", n)
		if got := run(t, nil, probe, "diff", n); got != want {
			t.Errorf("the overlay's outputs differ from the standard library's:\namd64 with overlay:\n%suntouched:\n%s", got, want)
		}
		t.Logf("%s", run(t, nil, probe, "wycheproof", "testdata/wycheproof"))
	})
	t.Run("constant-time", func(t *testing.T) {
		if _, err := exec.LookPath("qemu-x86_64-static"); err != nil {
			t.Skip("qemu-x86_64-static not installed (Debian's qemu-user-static)")
		}
		probe := filepath.Join(t.TempDir(), "probe-amd64")
		run(t, amd64Env, "go", append(append([]string{"build"}, overlayFlags(dir)...), "-o", probe, "./probe")...)
		testConstantTime(t, probe, "qemu-x86_64-static", "-cpu", "max")
	})
}

// Every replaced file builds exactly where the one it replaces did: the
// overlay must not break another architecture, nor GOARM=5 (no UMAAL)
// or 6 (no NEON).
func TestOverlayBuildsEverywhere(t *testing.T) {
	dir := prepared(t)
	for _, env := range [][]string{
		{"GOARCH=arm", "GOARM=5"}, {"GOARCH=arm", "GOARM=6"}, {"GOARCH=arm64"}, {"GOARCH=386"}, {"GOARCH=riscv64"}, {"GOARCH=loong64"}, {"GOARCH=amd64"},
	} {
		args := append(append([]string{"build", "-o", os.DevNull}, overlayFlags(dir)...), "./probe")
		run(t, append([]string{"GOOS=linux", "CGO_ENABLED=0"}, env...), "go", args...)
	}
}

func needQemu(t *testing.T) {
	if _, err := exec.LookPath("qemu-arm-static"); err != nil {
		t.Skip("qemu-arm-static not installed (Debian's qemu-user-static)")
	}
}

// buildProbe builds the probe for the board with the overlay.
func buildProbe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "probe-arm")
	run(t, armEnv, "go", append(append([]string{"build"}, overlayFlags(prepared(t))...), "-o", bin, "./probe")...)
	return bin
}

// The board's build under qemu-arm: the std tests, the output of every
// replaced primitive against the untouched standard implementation
// (built natively), Wycheproof's vectors, and constant time.
func TestOnARM(t *testing.T) {
	needQemu(t)
	dir := prepared(t)
	probe := buildProbe(t)

	t.Run("std", func(t *testing.T) {
		args := append([]string{"test", "-count=1", "-short", "-timeout", "60m", "-exec", "qemu-arm-static", "-skip", skipLimbExact}, overlayFlags(dir)...)
		if *full {
			// Whole, but for crypto/ecdh's TestLinker, which runs the ARM
			// program it builds directly, not through qemu-arm.
			args = slices.DeleteFunc(args, func(a string) bool { return a == "-short" })
			args[slices.Index(args, skipLimbExact)] = `^(TestFeMul|TestFeSquare|TestLinker)$`
		}
		t.Logf("%s", run(t, armEnv, "go", append(args, stdPackages...)...))
		if *full {
			// The runtime's memmove tests (every alignment, overlaps,
			// large copies), for the overlay's memmove.
			t.Logf("%s", run(t, armEnv, "go", append(args[:len(args):len(args)], "-run", "Memmove", "runtime")...))
		}
	})
	// A core without NEON (ARMv6, GOARM=6) takes SHA-1's fallback through
	// block itself, SHA-512's Go code and Poly1305's one block at a time.
	// (ChaCha20's is Go's generic code, which the purego run tests.)
	t.Run("without NEON", func(t *testing.T) {
		args := append([]string{"test", "-count=1", "-short", "-exec", "qemu-arm-static -cpu arm1176"}, overlayFlags(dir)...)
		env := append(slices.Clone(armEnv), "GOARM=6")
		t.Logf("%s", run(t, env, "go", append(args, "crypto/sha1", "crypto/sha512", "golang.org/x/crypto/internal/poly1305")...))
	})
	t.Run("differential", func(t *testing.T) {
		n := strconv.Itoa(*cases)
		want := run(t, nil, "go", "run", "./probe", "diff", n)
		got := run(t, nil, "qemu-arm-static", probe, "diff", n)
		if got != want {
			t.Errorf("the overlay's outputs differ from the standard library's:\nARM with overlay:\n%suntouched:\n%s", got, want)
		}
		t.Logf("%d cases each, equal:\n%s", *cases, got)
	})
	t.Run("wycheproof", func(t *testing.T) {
		t.Logf("%s", run(t, nil, "qemu-arm-static", probe, "wycheproof", "testdata/wycheproof"))
	})
	t.Run("constant-time", func(t *testing.T) { testConstantTime(t, probe, "qemu-arm-static") })
}

// testConstantTime runs the probe with two secrets under qemu's
// execution trace (-d exec,nochain: every translated block as it runs)
// and compares the blocks run inside the X25519 field code, the ladder,
// Poly1305, ChaCha20, P-256's field, ECDSA's inverse (of a random
// nonce, different in the two runs), RSA's Montgomery multiplication
// and squaring, exponentiation, table selection and reduction modulo p
// and q (a signature of different data with a different key of the same
// size) and the SHA-256 and SHA-512 blocks
// (HKDF's and ECDSA's nonce's HMACs of secrets): a branch on a secret
// would show as a different path. (Table indexes are argued in the code: there are none.)
//
// qemu is the emulator and its flags: qemu-arm-static for the board's
// build, qemu-x86_64-static -cpu max (MULX and ADX) for the PC's.
func testConstantTime(t *testing.T, probe string, qemu ...string) {
	syms := functions(t, probe)
	ranges := tracedRanges(syms)
	if ranges == "" {
		t.Fatal("none of the traced functions is in the probe")
	}
	starts := map[string]uint64{}
	for _, s := range syms {
		starts[s.name] = s.addr
	}
	var paths [2][]string
	var rsaKeys [2]string
	for i, secret := range []string{"first secret", "another, longer secret"} {
		log := filepath.Join(t.TempDir(), "trace")
		cmd := exec.Command(qemu[0], append(qemu[1:], "-d", "exec,nochain", "-dfilter", ranges, "-D", log, probe, "ct", secret)...)
		cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("probe ct: %v %s", err, out)
		}
		rsaKeys[i] = regexp.MustCompile(`rsa-key=\d`).FindString(string(out))
		paths[i] = tracePath(t, log, starts)
	}
	if rsaKeys[0] == "" || rsaKeys[0] == rsaKeys[1] {
		t.Fatalf("the two secrets signed with RSA keys %q and %q, want two different ones", rsaKeys[0], rsaKeys[1])
	}
	if len(paths[0]) < 10000 {
		t.Fatalf("only %d blocks traced in the crypto code: the trace's format changed?", len(paths[0]))
	}
	for i := range min(len(paths[0]), len(paths[1])) {
		if paths[0][i] != paths[1][i] {
			t.Fatalf("the code path depends on the secret at block %d: %s against %s", i, paths[0][i], paths[1][i])
		}
	}
	if len(paths[0]) != len(paths[1]) {
		t.Fatalf("the code path depends on the secret: %d blocks against %d", len(paths[0]), len(paths[1]))
	}
	t.Logf("%d blocks, the same path for both secrets", len(paths[0]))
}

// tracedName is the functions the constant-time test follows.
const tracedName = `(edwards25519/field\.|ecdh\.(x25519|fe8)|poly1305\.|chacha20\.|nistec/fiat\.|nistec\.(P256OrdInverse|p256OrdMontMul|ordReduceOnce)|bigmod\.(\(\*Nat\)\.(montgomeryMul|Mod|Exp)|montMul|montSqr|montSelect)|sha256\.block|sha512\.block)`

var traced = regexp.MustCompile(`^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/[^]]*\] (\S*` + tracedName + `\S*)`)

// tracedRanges is qemu's -dfilter for the traced functions' code, so that
// the trace holds their blocks only (an RSA signature runs 11 million
// instructions, most of them elsewhere).
func tracedRanges(syms []symbol) string {
	name := regexp.MustCompile(tracedName)
	var ranges []string
	for _, s := range syms {
		if s.size > 0 && name.MatchString(s.name) {
			ranges = append(ranges, fmt.Sprintf("%#x+%d", s.addr, s.size))
		}
	}
	return strings.Join(ranges, ",")
}

// tracePath is the blocks of the traced functions, in order, less the
// detours a function's prologue takes to grow the stack or to be
// preempted (runtime.morestack, at whatever moment the scheduler
// chooses): the two blocks of its stub and the function's restart.
func tracePath(t *testing.T, log string, starts map[string]uint64) []string {
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []block
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := traced.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pc, _ := strconv.ParseUint(m[1], 16, 64)
		all = append(all, block{pc, m[2]})
	}
	var path []string
	for i := 0; i < len(all); i++ {
		if n := morestackDetour(all, i, starts); n > 0 {
			i += n - 1
			continue
		}
		path = append(path, fmt.Sprintf("%x %s", all[i].pc, all[i].name))
	}
	return path
}

// block is one block of a trace: where it starts, and in which function.
type block struct {
	pc   uint64
	name string
}

// morestackDetour is how many blocks from all[i] on are a prologue's
// detour through runtime.morestack, or 0: the blocks of the function's
// stub, then the function's start again. On ARM the stub's two blocks
// are 8 bytes apart; on amd64 the prologue's first block jumps to the
// stub at the function's end, which takes two or three blocks (the
// CALL, the arguments reloaded, the jump back).
func morestackDetour(all []block, i int, starts map[string]uint64) int {
	b, start := all[i], starts[all[i].name]
	back := func(j int) bool { return j < len(all) && all[j].name == b.name && all[j].pc == start }
	if i+2 < len(all) && all[i+1].name == b.name && all[i+1].pc == b.pc+8 && back(i+2) {
		return 3
	}
	if i == 0 || all[i-1].name != b.name || all[i-1].pc != start || b.pc <= start {
		return 0
	}
	for j := i + 1; j < len(all) && j <= i+3; j++ {
		switch {
		case back(j):
			return j - i + 1
		case all[j].name != b.name || all[j].pc <= b.pc:
			return 0
		}
	}
	return 0
}

// symbol is one of the probe's functions, as go tool nm -size lists it.
type symbol struct {
	addr, size uint64
	name       string
}

// functions lists the probe's functions.
func functions(t *testing.T, bin string) []symbol {
	var syms []symbol
	for _, l := range strings.Split(run(t, nil, "go", "tool", "nm", "-size", bin), "\n") {
		f := strings.Fields(l) // address, size, type, name
		if len(f) < 4 || f[2] != "T" {
			continue
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			syms = append(syms, symbol{addr, size, strings.Join(f[3:], " ")})
		}
	}
	if len(syms) == 0 {
		t.Fatal("go tool nm found no functions in the probe")
	}
	return syms
}
