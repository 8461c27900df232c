package main

import (
	"bytes"
	"fmt"
)

// SHA-512's round constants (FIPS 180-4, 4.2.3).
var sha512K = [80]uint64{
	0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
	0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
	0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
	0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
	0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
	0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
	0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
	0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
	0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
	0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
	0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
	0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
	0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
	0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
	0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
	0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
	0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
	0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
	0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
	0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
}

// sigma sets d to ror(x,r0) ^ ror(x,r1) ^ (x >> s, or ror(x,s) if
// rot): SHA-512's σ0 and σ1 on two lanes (qf), or Σ0 and Σ1 on one; t1
// and t2 are scratch.
func (e neon64) sigma(qf bool, d, x, t1, t2 int, r0, r1, s int, rot bool) {
	e.shr(qf, d, x, r0)
	e.shr(qf, t1, x, r1)
	e.shr(qf, t2, x, s)
	e.sli(qf, d, x, 64-r0)
	e.sli(qf, t1, x, 64-r1)
	if rot {
		e.sli(qf, t2, x, 64-s)
	}
	e.eor(qf, d, d, t1)
	e.eor(qf, d, d, t2)
}

// emitSHA512 writes func blockNEON(dig *Digest, p []byte) for
// crypto/internal/fips140/sha512: every whole 128-byte block of p.
//
// D registers: d0-d7 the working variables a-h, whose names rotate
// instead of the values moving; d16-d31 (q8-q15) the schedule's window
// of sixteen words, W[t] in d(16 + t mod 16); d8-d15 (q4-q7) scratch,
// d8 the round's K. Two words of the schedule are made at once in the
// two lanes of a Q register, just before the rounds that need them. R0
// the message, R1 K, R2 the message's end, R3 the digest, R12 scratch.
func emitSHA512(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	e := neon64{w}
	for i, k := range sha512K {
		p("DATA\t·sha512NEONK+%d(SB)/4, $%#08x", 8*i, uint32(k))
		p("DATA\t·sha512NEONK+%d(SB)/4, $%#08x", 8*i+4, uint32(k>>32))
	}
	fmt.Fprintf(w, "GLOBL\t·sha512NEONK(SB), RODATA|NOPTR, $%d\n\n", 8*len(sha512K))
	fmt.Fprintln(w, "// func blockNEON(dig *Digest, p []byte)")
	fmt.Fprintln(w, "TEXT ·blockNEON(SB), NOSPLIT, $0-16")
	p("MOVW\tdig+0(FP), R3")
	p("MOVW\tp_base+4(FP), R0")
	p("MOVW\tp_len+8(FP), R2")
	p("BIC\t$127, R2, R2")
	p("ADD\tR0, R2, R2")
	fmt.Fprintln(w, "loop:")
	p("CMP\tR0, R2")
	p("B.EQ\tdone")
	p("MOVW\t$·sha512NEONK(SB), R1")
	// The message, big-endian words: four loads of four D registers,
	// then each word's bytes reversed.
	for i := 0; i < 4; i++ {
		e.op(vldst(true, 16+4*i, 4, 8, 0, true), "VLD1.8 {d%d-d%d}, [R0]!", 16+4*i, 19+4*i)
	}
	for i := 0; i < 8; i++ {
		e.op(vrev64_8(16+2*i, 16+2*i), "VREV64.8 q%d, q%d", 8+i, 8+i)
	}
	p("ADD\t$32, R3, R12")
	e.op(vldst(true, 0, 4, 8, 3, false), "VLD1.8 {d0-d3}, [R3]")
	e.op(vldst(true, 4, 4, 8, 12, false), "VLD1.8 {d4-d7}, [R12]")
	v := []int{0, 1, 2, 3, 4, 5, 6, 7}              // a..h
	wq := func(t int) int { return 16 + (t%16)&^1 } // the Q register (as its first D) of W[t], t even
	for t := 0; t < 80; t++ {
		if t >= 16 && t%2 == 0 {
			p("// W[%d], W[%d]", t, t+1)
			x := wq(t)                                                                   // W[t-16], W[t-15]: becomes W[t], W[t+1]
			e.op(vext8(4, x/2, wq(t+2)/2, 8), "VEXT.8 q4, q%d, q%d, #8", x/2, wq(t+2)/2) // W[t-15], W[t-14]
			e.sigma(true, 10, 8, 12, 14, 1, 8, 7, false)                                 // σ0
			e.add(true, x, x, 10)
			e.op(vext8(4, wq(t-8)/2, wq(t-6)/2, 8), "VEXT.8 q4, q%d, q%d, #8", wq(t-8)/2, wq(t-6)/2) // W[t-7], W[t-6]
			e.add(true, x, x, 8)
			e.sigma(true, 10, wq(t-2), 12, 14, 19, 61, 6, false) // σ1 of W[t-2], W[t-1]
			e.add(true, x, x, 10)
		}
		a, b, c, d, ee, f, g, h := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		p("// round %d", t)
		e.op(vldst(true, 8, 1, 64, 1, true), "VLD1.64 {d8}, [R1]!")
		e.sigma(false, 9, ee, 10, 11, 14, 18, 41, true) // Σ1(e)
		e.add(false, h, h, 8)
		e.add(false, h, h, 16+t%16)
		e.mov(12, ee)
		e.bsl(12, f, g) // Ch(e, f, g)
		e.add(false, h, h, 9)
		e.add(false, h, h, 12) // T1
		e.add(false, d, d, h)
		e.sigma(false, 9, a, 10, 11, 28, 34, 39, true) // Σ0(a)
		e.eor(false, 12, a, b)
		e.bsl(12, c, b) // Maj(a, b, c): c where a and b differ, else b
		e.add(false, h, h, 9)
		e.add(false, h, h, 12)
		v = append([]int{h}, v[:7]...)
	}
	p("// the digest += the working variables")
	e.op(vldst(true, 8, 4, 8, 3, false), "VLD1.8 {d8-d11}, [R3]")
	e.op(vldst(true, 12, 4, 8, 12, false), "VLD1.8 {d12-d15}, [R12]")
	for i := 0; i < 4; i++ {
		e.add(true, 2*i, 2*i, 8+2*i)
	}
	e.op(vldst(false, 0, 4, 8, 3, false), "VST1.8 {d0-d3}, [R3]")
	e.op(vldst(false, 4, 4, 8, 12, false), "VST1.8 {d4-d7}, [R12]")
	p("B\tloop")
	fmt.Fprintln(w, "done:")
	p("RET")
	fmt.Fprintln(w)
}

// vrev64_8 is VREV64.8 Qd, Qm (by D number): the bytes of each 64-bit
// word reversed.
func vrev64_8(d, m int) uint32 {
	vd, D := dreg(d)
	vm, M := dreg(m)
	return 0xF3B00000 | D<<22 | vd<<12 | 1<<6 | M<<5 | vm
}
