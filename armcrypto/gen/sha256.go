package main

import (
	"bytes"
	"fmt"
)

// SHA-256's round constants (FIPS 180-4, 4.2.2).
var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// emitSHA256 writes func block(dig *Digest, p []byte) for
// crypto/internal/fips140/sha256: every whole 64-byte block of p.
//
// The 64 words of the schedule first, into the frame (the message's
// words with REV, then W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) +
// W[t-16]), then the 64 rounds with the working variables a-h in R0-R7,
// whose names rotate instead of the values moving. Every rotation is the
// barrel shifter's (R@>n), and Σ0 and Σ1 take two of their three rotations
// folded: Σ1(e) = ror(e ^ ror(e,5) ^ ror(e,19), 6), Σ0(a) = ror(a ^
// ror(a,11) ^ ror(a,20), 2). K comes from the literal pool. Scratch: R8,
// R9, R12, R14.
//
// Frame: W at 4(R13), the next block's address at 260(R13), the end at
// 264(R13). The message is read with unaligned word loads, which ARMv6
// and later allow on Linux.
func emitSHA256(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	const fw, fnext, fend = 4, 260, 264
	wt := func(t int) int { return fw + 4*t }
	fmt.Fprintln(w, "// func block(dig *Digest, p []byte)")
	fmt.Fprintln(w, "TEXT ·block(SB), NOSPLIT, $268-16")
	p("MOVW\tp_base+4(FP), R12")
	p("MOVW\tp_len+8(FP), R8")
	p("BIC\t$63, R8, R8")
	p("ADD\tR12, R8, R8")
	p("MOVW\tR8, %d(R13)", fend)
	fmt.Fprintln(w, "loop:")
	p("MOVW\t%d(R13), R8", fend)
	p("CMP\tR12, R8")
	p("B.EQ\tdone")
	p("// the message's words, big-endian")
	for t := 0; t < 16; t++ {
		p("MOVW\t%d(R12), R8", 4*t)
		p("REV\tR8, R8")
		p("MOVW\tR8, %d(R13)", wt(t))
	}
	p("ADD\t$64, R12, R12")
	p("MOVW\tR12, %d(R13)", fnext)
	p("// the schedule")
	for t := 16; t < 64; t++ {
		p("MOVW\t%d(R13), R8", wt(t-2))
		p("MOVW\tR8@>17, R9")
		p("EOR\tR8@>19, R9, R9")
		p("EOR\tR8>>10, R9, R9")
		p("MOVW\t%d(R13), R8", wt(t-15))
		p("MOVW\tR8@>7, R12")
		p("EOR\tR8@>18, R12, R12")
		p("EOR\tR8>>3, R12, R12")
		p("ADD\tR12, R9, R9")
		p("MOVW\t%d(R13), R8", wt(t-7))
		p("ADD\tR8, R9, R9")
		p("MOVW\t%d(R13), R8", wt(t-16))
		p("ADD\tR8, R9, R9")
		p("MOVW\tR9, %d(R13)", wt(t))
	}
	p("MOVW\tdig+0(FP), R8")
	for k := 0; k < 8; k++ {
		p("MOVW\t%d(R8), R%d", 4*k, k)
	}
	v := []string{"R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7"} // a..h
	for t := 0; t < 64; t++ {
		a, b, c, d, e, f, g, h := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		p("// round %d", t)
		p("EOR\t%s@>5, %s, R8", e, e)
		p("EOR\t%s@>19, R8, R8", e)
		p("ADD\tR8@>6, %s, %s", h, h) // h += Σ1(e)
		p("EOR\t%s, %s, R9", f, g)
		p("AND\t%s, R9, R9", e)
		p("EOR\t%s, R9, R9", g)
		p("ADD\tR9, %s, %s", h, h) // h += Ch(e, f, g)
		p("MOVW\t$%#08x, R9", sha256K[t])
		p("ADD\tR9, %s, %s", h, h)
		p("MOVW\t%d(R13), R9", wt(t))
		p("ADD\tR9, %s, %s", h, h) // h = T1
		p("ADD\t%s, %s, %s", h, d, d)
		p("EOR\t%s@>11, %s, R8", a, a)
		p("EOR\t%s@>20, R8, R8", a)
		p("ADD\tR8@>2, %s, %s", h, h) // h = T1 + Σ0(a)
		p("ORR\t%s, %s, R8", a, b)
		p("AND\t%s, R8, R8", c)
		p("AND\t%s, %s, R9", a, b)
		p("ORR\tR9, R8, R8")
		p("ADD\tR8, %s, %s", h, h) // + Maj(a, b, c): the new a
		v = append([]string{h}, v[:7]...)
	}
	p("// the digest += the working variables")
	p("MOVW\tdig+0(FP), R8")
	for k := 0; k < 8; k++ {
		p("MOVW\t%d(R8), R9", 4*k)
		p("ADD\tR9, %s, %s", v[k], v[k])
		p("MOVW\t%s, %d(R8)", v[k], 4*k)
	}
	p("MOVW\t%d(R13), R12", fnext)
	p("B\tloop")
	fmt.Fprintln(w, "done:")
	p("RET")
}
