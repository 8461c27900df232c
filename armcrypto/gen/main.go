// Command gen writes the overlay's assembly, for ARM and (bigmod's) for
// amd64. Run from the module root:
//
//		go run ./armcrypto/gen
//
//	  - the X25519 field multiplication and squaring in ten 32-bit limbs
//	    (radix 2^25.5) with one UMLAL per partial product, then the carry
//	    and the packing back into Element's five 51-bit limbs;
//	  - X25519's field in eight 32-bit words, which its ladder keeps
//	    throughout (x25519.go), with UMAAL;
//	  - Poly1305's block loop in five 26-bit limbs, likewise, and in
//	    NEON two blocks at a time (poly1305neon.go);
//	  - ChaCha20 in NEON, two blocks at a time (neon.go encodes the
//	    instructions Go's assembler has no mnemonics for);
//	  - P-256's field and scalar Montgomery multiplications with UMAAL;
//	  - RSA's Montgomery multiplication and squaring (bigmod) four
//	    words at a time with LDM, UMAAL and STM, and the constant-time
//	    selection from its exponentiation's table;
//	  - SHA-256's block, its rotations in the barrel shifter;
//	  - SHA-512's block in NEON, its 64-bit words in D registers;
//	  - the runtime's memmove of misaligned copies in NEON (memmove.go);
//	  - SHA-1's block (the store's upload digest) with the message
//	    schedule in NEON, and without NEON (sha1.go);
//	  - on amd64, RSA's Montgomery multiplication and squaring whole in
//	    one call each with MULX, ADCX and ADOX, and the table selection
//	    in SSE2 (bigmodadx.go).
//
// UMAAL needs ARMv6 (those files build for GOARM=6 and 7 only); the NEON
// code runs only where the kernel's HWCAP reports NEON; the rest is plain
// ARM code. The amd64 code runs only where the CPU has ADX and BMI2.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

// term is one partial product of a column: a[ai] × b[bi], the operands
// already scaled (by 2, 4, 19) in the tables the Go side fills.
type term struct{ ai, bi int }

// Operand tables, made in the frame from the Elements:
//
//	a: f[0..9], 2f[0..9], 4f[0..9]
//	b: g[0..9], 19g[0..9]
//
// For a square g is f. The multiples fit 32 bits: limbs are below 2^26.
const (
	aF, aF2, aF4 = 0, 10, 20
	bG, bG19     = 0, 10
)

// mulColumns: column k takes f_i g_j for i+j = k, and 19 f_i g_j for
// i+j = k+10; a product of two odd limbs counts twice (two half bits of
// radix make one).
func mulColumns() [10][]term {
	var cols [10][]term
	for k := 0; k < 10; k++ {
		for i := 0; i < 10; i++ {
			j, b := k-i, bG
			if j < 0 {
				j, b = j+10, bG19
			}
			a := aF
			if i%2 == 1 && j%2 == 1 {
				a = aF2
			}
			cols[k] = append(cols[k], term{a + i, b + j})
		}
	}
	return cols
}

// sqrColumns: as mulColumns with g = f, each pair i < j taken once and
// doubled.
func sqrColumns() [10][]term {
	var cols [10][]term
	for k := 0; k < 10; k++ {
		for i := 0; i < 10; i++ {
			j, b := k-i, bG
			if j < 0 {
				j, b = j+10, bG19
			}
			if j < i {
				continue
			}
			odd := i%2 == 1 && j%2 == 1
			a := aF
			switch {
			case i == j && odd, i < j && !odd:
				a = aF2
			case i < j && odd:
				a = aF4
			}
			cols[k] = append(cols[k], term{a + i, b + j})
		}
	}
	return cols
}

// outDir is where the files go (the test writes them elsewhere to
// compare).
var outDir = "armcrypto/_overlay"

// asmFiles are the files gen writes: where, for which package and
// constraint, and what goes in.
var asmFiles = []struct {
	path, pkg, tag, note string
	emit                 []func(*bytes.Buffer)
}{
	{"field/fe_arm32_arm.s", "crypto/internal/fips140/edwards25519/field", "arm && !purego", "",
		[]func(*bytes.Buffer){
			func(w *bytes.Buffer) { emit(w, "feMul", "v, x, y *Element", mulColumns()) },
			func(w *bytes.Buffer) { emit(w, "feSquare", "v, x *Element", sqrColumns()) },
		}},
	{"ecdh/x25519_arm32_arm.s", "crypto/ecdh", "arm && arm.6 && !purego",
		"\n// UMAAL: ARMv6 and later.", []func(*bytes.Buffer){
			func(w *bytes.Buffer) { emitFe8Mul(w, false) },
			func(w *bytes.Buffer) { emitFe8Mul(w, true) },
			emitFe8AddSub, emitFe8MulA24,
		}},
	{"poly1305/mac_arm32_arm.s", "golang.org/x/crypto/internal/poly1305", "arm && gc && !purego",
		"\n// NEON (loop26x2): blocks26 takes it only where the kernel reports NEON.", []func(*bytes.Buffer){emitPoly, emitPolyNEON}},
	{"chacha20/chacha_arm32_arm.s", "golang.org/x/crypto/chacha20", "arm && gc && !purego",
		"\n// NEON: chacha_arm32_arm.go calls it only where the kernel reports NEON.", []func(*bytes.Buffer){emitChaCha}},
	{"fiat/p256_fiat32_arm.s", "crypto/internal/fips140/nistec/fiat", "arm && arm.6 && !purego",
		"\n// UMAAL: ARMv6 and later.", []func(*bytes.Buffer){emitP256, emitP256AddSub}},
	{"nistec/p256_ordinv_arm32_arm.s", "crypto/internal/fips140/nistec", "arm && arm.6 && !purego",
		"\n// UMAAL: ARMv6 and later.", []func(*bytes.Buffer){emitOrdMontMul}},
	{"bigmod/nat_arm32_arm.s", "crypto/internal/fips140/bigmod", "arm && arm.6 && !purego",
		"\n// UMAAL: ARMv6 and later.", []func(*bytes.Buffer){
			func(w *bytes.Buffer) { emitMontMul(w, 1024) },
			func(w *bytes.Buffer) { emitMontSqr(w, 1024) },
			func(w *bytes.Buffer) { emitMontMul(w, 1536) },
			func(w *bytes.Buffer) { emitMontSqr(w, 1536) },
			func(w *bytes.Buffer) { emitMontMul(w, 2048) },
			func(w *bytes.Buffer) { emitMontSqr(w, 2048) },
			func(w *bytes.Buffer) { emitMontSelect(w, 1024) },
			func(w *bytes.Buffer) { emitMontSelect(w, 1536) },
			func(w *bytes.Buffer) { emitMontSelect(w, 2048) },
		}},
	{"bigmod/nat_mont_amd64.s", "crypto/internal/fips140/bigmod", "amd64 && !purego",
		"\n// MULX (BMI2), ADCX and ADOX (ADX): montAsm takes them only where the CPU has both.", []func(*bytes.Buffer){
			func(w *bytes.Buffer) { emitMontMulADX(w, 1024) },
			func(w *bytes.Buffer) { emitMontSqrADX(w, 1024) },
			func(w *bytes.Buffer) { emitMontMulADX(w, 1536) },
			func(w *bytes.Buffer) { emitMontSqrADX(w, 1536) },
			func(w *bytes.Buffer) { emitMontMulADX(w, 2048) },
			func(w *bytes.Buffer) { emitMontSqrADX(w, 2048) },
			func(w *bytes.Buffer) { emitMontSelectADX(w, 1024) },
			func(w *bytes.Buffer) { emitMontSelectADX(w, 1536) },
			func(w *bytes.Buffer) { emitMontSelectADX(w, 2048) },
		}},
	{"sha256/sha256block_arm32_arm.s", "crypto/internal/fips140/sha256", "arm && arm.6 && !purego",
		"\n// REV: ARMv6 and later.", []func(*bytes.Buffer){emitSHA256}},
	{"sha512/sha512block_arm32_arm.s", "crypto/internal/fips140/sha512", "arm && !purego",
		"\n// NEON: block takes blockNEON only where the kernel reports NEON.", []func(*bytes.Buffer){emitSHA512}},
	{"runtime/memmove_arm32_arm.s", "runtime", "arm",
		"\n// NEON: memmove takes it only where the kernel reports NEON.", []func(*bytes.Buffer){emitMemmove}},
	{"sha1/sha1block_arm.s", "crypto/sha1", "!purego",
		"\n// NEON: block takes blockNEON only where the kernel reports NEON.", []func(*bytes.Buffer){emitSHA1}},
}

func main() {
	if len(os.Args) > 1 {
		outDir = os.Args[1]
	}
	for _, f := range asmFiles {
		var w bytes.Buffer
		goarch := "arm"
		if strings.HasSuffix(f.path, "_amd64.s") {
			goarch = "amd64"
		}
		fmt.Fprintf(&w, "// Code generated by armcrypto/gen; DO NOT EDIT.\n"+
			"// bonesync's armcrypto overlay: added to %s\n"+
			"// for GOARCH=%s (see armcrypto/main.go). Not assembled on its own.%s\n\n"+
			"//go:build %s\n\n#include \"textflag.h\"\n\n", f.pkg, goarch, f.note, f.tag)
		for _, e := range f.emit {
			e(&w)
		}
		if err := os.WriteFile(outDir+"/"+f.path, w.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// emitPoly writes func loop26(p *poly26, msg []byte, hibit uint32), the
// block loop of mac_arm32.go's loop26Go. hibit is 1<<24 or 0, as the Go
// form takes it.
//
// Registers: R0-R4 the accumulator h; R6:R5 a column (hi:lo); R7 an
// operand; R8 the message; R9 5×r4 and R14 r0, the operands used most;
// R12 p. The new limbs wait in the frame, 4(R13) to 20(R13), until the
// column that needs the old ones is done; the message's end is at
// 24(R13). poly26 is h at 0(p), r at 20(p), 5×r1..5×r4 at 40(p).
func emitPoly(w *bytes.Buffer) {
	const r, s = 20, 40 // offsets of r[0] and s[0] (5×r1) in poly26
	const fend = 24     // the message's end, in the frame
	// Column k: h_i × r_{k-i}, or h_i × 5r_{k-i+5} past the top. r0
	// (five products) waits in R14 and 5×r4 (four) in R9; the rest are
	// loaded from p as needed.
	operand := func(i, k int) string {
		off := s + 4*(k-i+5-1)
		if j := k - i; j >= 0 {
			off = r + 4*j
		}
		switch off {
		case r:
			return "R14"
		case s + 12:
			return "R9"
		}
		fmt.Fprintf(w, "\tMOVW\t%d(R12), R7\n", off)
		return "R7"
	}
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	fmt.Fprintln(w, "// func loop26(p *poly26, msg []byte, hibit uint32)")
	fmt.Fprintln(w, "TEXT ·loop26(SB), NOSPLIT, $28-20")
	p("MOVW\tp+0(FP), R12")
	for i := 0; i < 5; i++ {
		p("MOVW\t%d(R12), R%d", 4*i, i)
	}
	p("MOVW\t%d(R12), R14", r)
	p("MOVW\t%d(R12), R9", s+12)
	p("MOVW\tmsg_base+4(FP), R8")
	p("MOVW\tmsg_len+8(FP), R7")
	p("BIC\t$15, R7, R7")
	p("ADD\tR8, R7, R7")
	p("MOVW\tR7, %d(R13)", fend)
	p("CMP\tR8, R7")
	p("BEQ\tdone")
	// Two copies of the loop: with the 2^128 bit of a full block (an
	// immediate), and without it (the padded last block).
	p("MOVW\thibit+16(FP), R6")
	p("CMP\t$0, R6")
	p("BEQ\tnohibit")
	for _, hibit := range []bool{true, false} {
		label := map[bool]string{true: "loop", false: "nohibit"}[hibit]
		fmt.Fprintln(w, label+":")
		// The block's five 26-bit limbs, added in: unaligned loads are
		// allowed to LDR on ARMv7 Linux.
		p("// h += the block, in 26-bit limbs")
		p("MOVW\t0(R8), R5")
		p("BIC\t$0xfc000000, R5, R6")
		p("ADD\tR6, R0, R0")
		p("MOVW\t4(R8), R6")
		p("MOVW\tR5>>26, R5")
		p("ORR\tR6<<6, R5, R5")
		p("BIC\t$0xfc000000, R5, R5")
		p("ADD\tR5, R1, R1")
		p("MOVW\t8(R8), R5")
		p("MOVW\tR6>>20, R6")
		p("ORR\tR5<<12, R6, R6")
		p("BIC\t$0xfc000000, R6, R6")
		p("ADD\tR6, R2, R2")
		p("MOVW\t12(R8), R6")
		p("MOVW\tR5>>14, R5")
		p("ORR\tR6<<18, R5, R5")
		p("BIC\t$0xfc000000, R5, R5")
		p("ADD\tR5, R3, R3")
		p("ADD\tR6>>8, R4, R4")
		if hibit {
			p("ADD\t$0x1000000, R4, R4")
		}
		p("ADD\t$16, R8, R8")
		for k := 0; k < 5; k++ {
			p("// column %d", k)
			for i := 0; i < 5; i++ {
				op := operand(i, k)
				if i == 0 && k == 0 {
					p("MULLU\tR%d, %s, (R6, R5)", i, op)
				} else {
					p("MULALU\tR%d, %s, (R6, R5)", i, op)
				}
			}
			// The limb, then the carry (up to 2^36) starts the next column.
			p("BIC\t$0xfc000000, R5, R7")
			p("MOVW\tR7, %d(R13)", 4+4*k)
			p("MOVW\tR5>>26, R5")
			p("ORR\tR6<<6, R5, R5")
			p("MOVW\tR6>>26, R6")
		}
		// h0 += 5 × the top carry, h0's carry into h1; the new limbs in.
		p("// h0 += 5 × the top carry; its carry into h1")
		p("MOVW\t$5, R7")
		p("MULLU\tR5, R7, (R1, R0)")
		p("MULA\tR6, R7, R1, R1")
		p("MOVW\t4(R13), R5")
		p("ADD.S\tR5, R0, R0")
		p("ADC\t$0, R1, R1")
		p("MOVW\tR0>>26, R5")
		p("ORR\tR1<<6, R5, R5")
		p("BIC\t$0xfc000000, R0, R0")
		p("MOVW\t8(R13), R1")
		p("ADD\tR5, R1, R1")
		p("MOVW\t12(R13), R2")
		p("MOVW\t16(R13), R3")
		p("MOVW\t20(R13), R4")
		p("MOVW\t%d(R13), R7", fend)
		p("CMP\tR8, R7")
		p("BNE\t%s", label)
		if hibit {
			p("B\tdone")
		}
	}
	fmt.Fprintln(w, "done:")
	p("MOVW\tp+0(FP), R12")
	for i := 0; i < 5; i++ {
		p("MOVW\tR%d, %d(R12)", i, 4*i)
	}
	p("RET")
}

// The frame: the operand tables a (30 words) and b (20 words), then the
// ten reduced limbs t, above the saved link register at 0(R13).
const (
	frameA = 4
	frameB = frameA + 4*30
	frameT = frameB + 4*20
	frame  = frameT + 4*10 + 12 // with room to spare
)

// split loads the Element at R(ptr) and stores its ten limbs, each also
// times 2 and 4 at a (if a), or times 19 at b (if not a).
func split(w *bytes.Buffer, ptr int, a bool) {
	for k := 0; k < 5; k++ {
		fmt.Fprintf(w, "\tMOVW\t%d(R%d), R4\n\tMOVW\t%d(R%d), R5\n", 8*k, ptr, 8*k+4, ptr)
		// even limb: the low 26 bits; odd limb: the next 26.
		fmt.Fprintf(w, "\tBIC\t$0xfc000000, R4, R6\n\tMOVW\tR4>>26, R7\n\tORR\tR5<<6, R7, R7\n")
		for n, r := range []string{"R6", "R7"} {
			limb := 2*k + n
			if a {
				fmt.Fprintf(w, "\tMOVW\t%s, %d(R13)\n", r, frameA+4*(aF+limb))
				fmt.Fprintf(w, "\tMOVW\t%s<<1, R8\n\tMOVW\tR8, %d(R13)\n", r, frameA+4*(aF2+limb))
				fmt.Fprintf(w, "\tMOVW\t%s<<2, R8\n\tMOVW\tR8, %d(R13)\n", r, frameA+4*(aF4+limb))
			} else {
				fmt.Fprintf(w, "\tMOVW\t%s, %d(R13)\n", r, frameB+4*(bG+limb))
				// 19×limb = limb + 2×limb + 16×limb
				fmt.Fprintf(w, "\tADD\t%s<<1, %s, R8\n\tADD\t%s<<4, R8, R8\n\tMOVW\tR8, %d(R13)\n", r, r, r, frameB+4*(bG19+limb))
			}
		}
	}
}

// emit writes func NAME(ARGS): v = x×y, or x² with y = x.
//
// Registers: R0 v, R1 x, R2 y; R3:R2 later the column (hi:lo); R4, R5
// the operands; R6:R7 the carry (lo, hi); R8 a scratch.
func emit(w *bytes.Buffer, name, args string, cols [10][]term) {
	fmt.Fprintf(w, "// func %s(%s)\n", name, args)
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $%d-%d\n", name, frame, 4*strings.Count(args, ",")+4)
	fmt.Fprintf(w, "\tMOVW\tx+4(FP), R1\n")
	split(w, 1, true)
	if name == "feMul" {
		fmt.Fprintf(w, "\tMOVW\ty+8(FP), R1\n")
	}
	split(w, 1, false)
	for k, col := range cols {
		width := 26 - k%2
		fmt.Fprintf(w, "\t// column %d (%d bits), %d products\n", k, width, len(col))
		for n, t := range col {
			fmt.Fprintf(w, "\tMOVW\t%d(R13), R4\n\tMOVW\t%d(R13), R5\n", frameA+4*t.ai, frameB+4*t.bi)
			if n == 0 && k == 0 {
				fmt.Fprintf(w, "\tMULLU\tR4, R5, (R3, R2)\n")
			} else {
				fmt.Fprintf(w, "\tMULALU\tR4, R5, (R3, R2)\n")
			}
		}
		// limb k = column mod 2^width; the carry, column >> width, starts
		// the next column (or, times 19, goes back to limb 0).
		fmt.Fprintf(w, "\tMOVW\tR2>>%d, R6\n\tORR\tR3<<%d, R6, R6\n\tMOVW\tR3>>%d, R7\n", width, 32-width, width)
		if width == 26 {
			fmt.Fprintf(w, "\tBIC\t$0xfc000000, R2, R2\n")
		} else {
			fmt.Fprintf(w, "\tBIC\t$0xfe000000, R2, R2\n")
		}
		fmt.Fprintf(w, "\tMOVW\tR2, %d(R13)\n", frameT+4*k)
		if k < 9 {
			fmt.Fprintf(w, "\tMOVW\tR6, R2\n\tMOVW\tR7, R3\n")
		}
	}
	// limb 0 += 19 × carry (carry < 2^36, so the sum < 2^42), then
	// limb 0's own carry into limb 1.
	fmt.Fprintf(w, "\t// limb 0 += 19 × the top carry; limb 0's carry into limb 1\n")
	fmt.Fprintf(w, "\tMOVW\t$19, R8\n\tMULLU\tR6, R8, (R3, R2)\n\tMULA\tR7, R8, R3, R3\n")
	fmt.Fprintf(w, "\tMOVW\t%d(R13), R4\n\tADD.S\tR4, R2, R2\n\tADC\t$0, R3, R3\n", frameT)
	fmt.Fprintf(w, "\tMOVW\tR2>>26, R6\n\tORR\tR3<<6, R6, R6\n\tBIC\t$0xfc000000, R2, R2\n\tMOVW\tR2, %d(R13)\n", frameT)
	fmt.Fprintf(w, "\tMOVW\t%d(R13), R4\n\tADD\tR6, R4, R4\n\tMOVW\tR4, %d(R13)\n", frameT+4, frameT+4)
	// Pack: l_k = t_2k + t_2k+1 × 2^26, as lo and hi words.
	fmt.Fprintf(w, "\t// pack: l_k = t_2k | t_2k+1 << 26\n\tMOVW\tv+0(FP), R0\n")
	for k := 0; k < 5; k++ {
		fmt.Fprintf(w, "\tMOVW\t%d(R13), R4\n\tMOVW\t%d(R13), R5\n", frameT+8*k, frameT+8*k+4)
		fmt.Fprintf(w, "\tORR\tR5<<26, R4, R4\n\tMOVW\tR5>>6, R5\n")
		fmt.Fprintf(w, "\tMOVW\tR4, %d(R0)\n\tMOVW\tR5, %d(R0)\n", 8*k, 8*k+4)
	}
	fmt.Fprintf(w, "\tRET\n\n")
}
