package main

import (
	"bytes"
	"fmt"
)

// SHA-1 for the store's upload digest: crypto/sha1's block function,
// replaced for GOARCH=arm.
//
// The rounds keep c, d and e "lazy": each round's ROL 30 of b is not
// done, and the three registers that would hold rotated values hold them
// unrotated, with every use reading them through the shifter (ROR #2),
// which on ARM costs nothing. So a round is its F (2 or 3 instructions,
// maj as a sum of two disjoint terms) and three additions, plus the
// message word:
//
//	e = (e ROR 2) + w[i] + K    e += a ROR 27    e += F(b, c ROR 2, d ROR 2)
//
// blockNEON computes the message schedule four words at a time in NEON
// first (w[i] + K for all 80 rounds, into the frame), so each round loads
// one word; blockARM, for cores without NEON, computes it in the rounds
// from a 16-word window, with byte loads (any alignment, ARMv5 too).
//
// Constant time: no branch but the loop over the blocks (the length) and
// no table index; the path (NEON or not) depends on the core alone.

// sha1K are the four round constants.
var sha1K = [4]uint32{0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6}

// sha1Rounds writes the 80 rounds on the state in R2-R6 (a, b, true; c,
// d, e lazy), R7 scratch; word(i) writes what puts round i's message word
// in a register, which it returns, and whether K is still to be added
// (from R1). After 80 rounds the names are back where they started.
func sha1Rounds(p func(string, ...any), word func(i int) (reg string, addK bool)) {
	s := [5]string{"R2", "R3", "R4", "R5", "R6"}
	for i := 0; i < 80; i++ {
		a, b, c, d, e := s[0], s[1], s[2], s[3], s[4]
		w, addK := word(i)
		p("ADD\t%s@>2, %s, %s", e, w, e)
		if addK {
			p("ADD\tR1, %s, %s", e, e)
		}
		p("ADD\t%s@>27, %s, %s", a, e, e)
		switch i / 20 {
		case 0: // d ^ (b & (c ^ d))
			p("EOR\t%s, %s, R7", d, c)
			p("AND\tR7@>2, %s, R7", b)
			p("EOR\t%s@>2, R7, R7", d)
			p("ADD\tR7, %s, %s", e, e)
		case 1, 3: // b ^ c ^ d
			p("EOR\t%s@>2, %s, R7", c, b)
			p("EOR\t%s@>2, R7, R7", d)
			p("ADD\tR7, %s, %s", e, e)
		case 2: // maj(b, c, d) = (b & c) + (d & (b ^ c)), disjoint bits
			p("AND\t%s@>2, %s, R7", c, b)
			p("ADD\tR7, %s, %s", e, e)
			p("EOR\t%s@>2, %s, R7", c, b)
			p("AND\t%s@>2, R7, R7", d)
			p("ADD\tR7, %s, %s", e, e)
		}
		s = [5]string{e, a, b, c, d}
	}
}

// sha1Lazy makes c, d and e lazy (ROL 2, so that ROR 2 reads them back).
func sha1Lazy(p func(string, ...any)) {
	for _, r := range []string{"R4", "R5", "R6"} {
		p("MOVW\t%s@>30, %s", r, r)
	}
}

// sha1Add adds the state to the digest at dig (a register other than
// R2-R7) and leaves the sum in R2-R6, true values.
func sha1Add(p func(string, ...any), dig string) {
	for i, r := range []string{"R2", "R3", "R4", "R5", "R6"} {
		p("MOVW\t%d(%s), R7", 4*i, dig)
		if i < 2 {
			p("ADD\tR7, %s, %s", r, r)
		} else {
			p("ADD\t%s@>2, R7, %s", r, r)
		}
		p("MOVW\t%s, %d(%s)", r, 4*i, dig)
	}
}

// sha1Entry loads the arguments: R0 the data, R9 the end of its whole
// blocks (the loop ends there, at once when there is none), R2-R6 the
// digest.
func sha1Entry(p func(string, ...any)) {
	p("MOVW\tdig+0(FP), R7")
	p("MOVW\tp_base+4(FP), R0")
	p("MOVW\tp_len+8(FP), R9")
	p("BIC\t$63, R9, R9")
	p("ADD\tR0, R9, R9")
	p("MOVM.IA\t(R7), [R2-R6]")
}

// emitSHA1 writes block (which takes the NEON path where the kernel
// reports NEON), blockNEON and blockARM, all func(dig *digest, p []byte).
func emitSHA1(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	fmt.Fprintln(w, "// func block(dig *digest, p []byte)")
	fmt.Fprintln(w, "TEXT ·block(SB), NOSPLIT, $0-16")
	p("MOVBU\t·useNEON(SB), R0")
	p("CMP\t$0, R0")
	p("B.NE\tneon")
	p("B\t·blockARM(SB)")
	fmt.Fprintln(w, "neon:")
	p("B\t·blockNEON(SB)")
	fmt.Fprintln(w)
	emitSHA1NEON(w, p)
	fmt.Fprintln(w)
	emitSHA1ARM(w, p)
}

// emitSHA1NEON: per block, the schedule first. q0-q3 hold the last 16
// words (q[g%4] words 4g..4g+3), q4-q6 scratch, q7 zero, q8 w+K on its
// way to the frame, q12-q15 the constants. Then the rounds read w[i]+K
// from 4+4i(R13). R1 points into the frame as the schedule stores.
func emitSHA1NEON(w *bytes.Buffer, p func(string, ...any)) {
	e := neon{w}
	fmt.Fprintln(w, "// func blockNEON(dig *digest, p []byte)")
	fmt.Fprintln(w, "TEXT ·blockNEON(SB), 0, $320-16")
	sha1Entry(p)
	for i, k := range sha1K {
		p("MOVW\t$%#08x, R8", k)
		e.dup(12+i, 8)
	}
	e.eor(7, 7, 7)
	fmt.Fprintln(w, "loop:")
	p("CMP\tR0, R9")
	p("B.EQ\tdone")
	p("ADD\t$4, R13, R1")
	e.ld(0, 2, 0, true)
	e.ld(2, 2, 0, true)
	for g := 0; g < 20; g++ {
		x := g % 4
		if g < 4 {
			e.rev8(x, x)
		} else {
			// x holds w[i-16..i-13], then x+1, x+2, x+3 (mod 4) the
			// next twelve; i = 4g.
			x1, x2, x3 := (g+1)%4, (g+2)%4, (g+3)%4
			e.ext2(4, x, x1, 8) // w[i-14..i-11]
			e.eor(4, 4, x)      // ^ w[i-16..i-13]
			e.eor(4, 4, x2)     // ^ w[i-8..i-5]
			e.ext2(5, x3, 7, 4) // w[i-3..i-1], 0
			e.eor(4, 4, 5)
			e.rotl(x, 4, 1) // w[i..i+3], but w[i+3] lacks w[i]'s term:
			e.ext2(5, 7, x, 4)
			e.rotl(6, 5, 1) // 0, 0, 0, w[i] ROL 1
			e.eor(x, x, 6)
		}
		e.add(8, x, 12+g/5)
		e.st(8, 1, 1, true)
	}
	sha1Lazy(p)
	sha1Rounds(p, func(i int) (string, bool) {
		p("MOVW\t%d(R13), R8", 4+4*i)
		return "R8", false
	})
	p("MOVW\tdig+0(FP), R1")
	sha1Add(p, "R1")
	p("B\tloop")
	fmt.Fprintln(w, "done:")
	p("RET")
}

// emitSHA1ARM: the schedule's window of 16 words at 4(R13) to 64(R13),
// K in R1, R8 the word, R12 and R14 scratch.
func emitSHA1ARM(w *bytes.Buffer, p func(string, ...any)) {
	fmt.Fprintln(w, "// func blockARM(dig *digest, p []byte)")
	fmt.Fprintln(w, "TEXT ·blockARM(SB), 0, $64-16")
	sha1Entry(p)
	fmt.Fprintln(w, "loop:")
	p("CMP\tR0, R9")
	p("B.EQ\tdone")
	sha1Lazy(p)
	slot := func(i int) int { return 4 + 4*(i%16) }
	sha1Rounds(p, func(i int) (string, bool) {
		if i%20 == 0 {
			p("MOVW\t$%#08x, R1", sha1K[i/20])
		}
		if i < 16 { // big-endian, from bytes
			p("MOVBU\t%d(R0), R8", 4*i+3)
			p("MOVBU\t%d(R0), R12", 4*i+2)
			p("MOVBU\t%d(R0), R14", 4*i+1)
			p("ORR\tR12<<8, R8, R8")
			p("MOVBU\t%d(R0), R12", 4*i)
			p("ORR\tR14<<16, R8, R8")
			p("ORR\tR12<<24, R8, R8")
		} else {
			p("MOVW\t%d(R13), R8", slot(i-3))
			p("MOVW\t%d(R13), R12", slot(i-8))
			p("MOVW\t%d(R13), R14", slot(i-14))
			p("EOR\tR12, R8, R8")
			p("MOVW\t%d(R13), R12", slot(i-16))
			p("EOR\tR14, R8, R8")
			p("EOR\tR12, R8, R8")
			p("MOVW\tR8@>31, R8")
		}
		if i < 77 { // the last three are not read again
			p("MOVW\tR8, %d(R13)", slot(i))
		}
		return "R8", true
	})
	p("ADD\t$64, R0, R0")
	p("MOVW\tdig+0(FP), R12")
	sha1Add(p, "R12")
	p("B\tloop")
	fmt.Fprintln(w, "done:")
	p("RET")
}
