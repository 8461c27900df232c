package main

import (
	"bytes"
	"fmt"
)

// umaal is UMAAL RdLo, RdHi, Rn, Rm (RdHi:RdLo = Rn×Rm + RdHi + RdLo), an
// ARMv6 instruction Go's assembler has no mnemonic for.
func umaal(lo, hi, n, m int) uint32 {
	return 0xE0400090 | uint32(hi)<<16 | uint32(lo)<<12 | uint32(m)<<8 | uint32(n)
}

// emitP256 writes func p256MontMul(out, a, b *[4]uint64): out = a×b×2^-256
// mod p for a, b below p, word-by-word Montgomery (CIOS) as fiat's
// p256MontMulGo. The running sum's nine words live in registers whose
// names rotate as the sum shifts down a word each row (the generator
// keeps the map); a and b are copied to the frame first, so no register
// holds a pointer.
//
// Frame: a at 4(R13), b at 36(R13), the difference t-p at 68(R13).
func emitP256(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	const fa, fb, fd = 4, 36, 68
	fmt.Fprintln(w, "// func p256MontMul(out, a, b *[4]uint64)")
	fmt.Fprintln(w, "TEXT ·p256MontMul(SB), NOSPLIT, $108-12")
	copyToFrame(w, "MOVW\ta+4(FP)", fa, 8)
	copyToFrame(w, "MOVW\tb+8(FP)", fb, 8)
	// t[0..8] in R0-R8, the carry in R9; R12 an operand of a, R14 the
	// word of b, both free again during the reduction.
	t := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	c := 9
	for _, r := range t {
		p("MOVW\t$0, R%d", r)
	}
	for i := 0; i < 8; i++ {
		productRow(w, t, c, i, fa, fb)
		// m = t[0]; (t + m×p) / 2^32: m at words 2 and 5, m×(2^32-1)
		// at 6 (low = -m, high = m - 1, or 0 when m is 0).
		m := t[0]
		n := append(append([]int{}, t[1:]...), c)
		p("// reduce: m = R%d", m)
		p("RSB.S\t$0, R%d, R12", m)
		p("SBC\t$0, R%d, R14", m)
		p("ADD.S\tR%d, R%d, R%d", m, n[2], n[2])
		p("ADC.S\t$0, R%d, R%d", n[3], n[3])
		p("ADC.S\t$0, R%d, R%d", n[4], n[4])
		p("ADC.S\tR%d, R%d, R%d", m, n[5], n[5])
		p("ADC.S\tR12, R%d, R%d", n[6], n[6])
		p("ADC.S\tR14, R%d, R%d", n[7], n[7])
		p("ADC\t$0, R%d, R%d", n[8], n[8])
		t, c = n, m
	}
	reduceOnce(w, t, c, fd, "out", subP)
	p("RET")
}

// copyToFrame copies n words from the pointer that load (an instruction
// without its destination) puts in R12 to the frame at off.
func copyToFrame(w *bytes.Buffer, load string, off, n int) {
	fmt.Fprintf(w, "\t%s, R12\n", load)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "\tMOVW\t%d(R12), R14\n\tMOVW\tR14, %d(R13)\n", 4*i, off+4*i)
	}
}

// productRow writes row i of a Montgomery multiplication: t += a × b[i]
// with one UMAAL per word of a (both from the frame, at fa and fb), the
// carry into t[8] and the 257th bit into R(c).
func productRow(w *bytes.Buffer, t []int, c, i, fa, fb int) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	p("// row %d: t += a × b[%d]", i, i)
	p("MOVW\t%d(R13), R14", fb+4*i)
	p("MOVW\t$0, R%d", c)
	for j := 0; j < 8; j++ {
		p("MOVW\t%d(R13), R12", fa+4*j)
		fmt.Fprintf(w, "\tWORD\t$%#08x\t// UMAAL R%d, R%d, R12, R14\n", umaal(t[j], c, 12, 14), t[j], c)
	}
	p("ADD.S\tR%d, R%d, R%d", c, t[8], t[8])
	p("MOVW\t$0, R%d", c)
	p("ADC\t$0, R%d, R%d", c, c)
}

// subP subtracts p's word k: all ones (in R12, set first), zero or one.
func subP(w *bytes.Buffer, k int) string {
	if k == 0 {
		fmt.Fprintf(w, "\tMVN\t$0, R12\n")
	}
	return []string{"R12", "R12", "R12", "$0", "$0", "$0", "$1", "R12"}[k]
}

// reduceOnce writes out = t - m if t (words in regs t[0..7], the 257th
// bit in t[8]) is at least the modulus m, else t, through the frame at
// fd: sub writes what word k of m needs and returns its operand (it may
// use R12, not the flags). R14 is scratch, R(outReg) takes the out
// pointer.
func reduceOnce(w *bytes.Buffer, t []int, outReg, fd int, outArg string, sub func(w *bytes.Buffer, k int) string) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	c := outReg
	// t - m into the frame; keep t where that borrows past the top word.
	p("// out = t - m if t >= m, else t")
	for k := 0; k < 8; k++ {
		op := sub(w, k)
		if k == 0 {
			p("SUB.S\t%s, R%d, R14", op, t[k])
		} else {
			p("SBC.S\t%s, R%d, R14", op, t[k])
		}
		p("MOVW\tR14, %d(R13)", fd+4*k)
	}
	p("SBC.S\t$0, R%d, R14", t[8])
	p("MOVW\t$0, R14")
	p("SBC\t$0, R14, R14") // all ones when t < p
	p("MOVW\t%s+0(FP), R%d", outArg, c)
	for k := 0; k < 8; k++ {
		p("MOVW\t%d(R13), R12", fd+4*k)
		p("AND\tR14, R%d, R%d", t[k], t[k])
		p("BIC\tR14, R12, R12")
		p("ORR\tR12, R%d, R%d", t[k], t[k])
		p("MOVW\tR%d, %d(R%d)", t[k], 4*k, c)
	}
}

// emitP256AddSub writes p256Add and p256Sub (the fiat signatures: out,
// arg1, arg2 *[4]uint64 as Montgomery-domain elements), each one add or
// subtract chain and a masked correction by p. p256Sub has no frame, so
// its link register is not saved: it must not touch R14.
func emitP256AddSub(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	const fd = 4
	fmt.Fprintln(w, "// func p256Add(out1, arg1, arg2 *p256MontgomeryDomainFieldElement)")
	fmt.Fprintln(w, "TEXT ·p256Add(SB), NOSPLIT, $40-12")
	p("MOVW\targ1+4(FP), R12")
	for i := 0; i < 8; i++ {
		p("MOVW\t%d(R12), R%d", 4*i, i)
	}
	p("MOVW\targ2+8(FP), R12")
	for i := 0; i < 8; i++ {
		p("MOVW\t%d(R12), R14", 4*i)
		if i == 0 {
			p("ADD.S\tR14, R0, R0")
		} else {
			p("ADC.S\tR14, R%d, R%d", i, i)
		}
	}
	p("MOVW\t$0, R8")
	p("ADC\t$0, R8, R8")
	reduceOnce(w, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, 9, fd, "out1", subP)
	p("RET")
	fmt.Fprintln(w)

	fmt.Fprintln(w, "// func p256Sub(out1, arg1, arg2 *p256MontgomeryDomainFieldElement)")
	fmt.Fprintln(w, "TEXT ·p256Sub(SB), NOSPLIT, $0-12")
	p("MOVW\targ1+4(FP), R12")
	for i := 0; i < 8; i++ {
		p("MOVW\t%d(R12), R%d", 4*i, i)
	}
	p("MOVW\targ2+8(FP), R12")
	for i := 0; i < 8; i++ {
		p("MOVW\t%d(R12), R8", 4*i)
		if i == 0 {
			p("SUB.S\tR8, R0, R0")
		} else {
			p("SBC.S\tR8, R%d, R%d", i, i)
		}
	}
	// A borrow (C clear) means arg1 < arg2: add p back, masked. p's
	// words are all ones, zero or one: the mask, zero, or its low bit.
	p("MOVW\t$0, R12")
	p("SBC\t$0, R12, R12")
	p("AND\t$1, R12, R9")
	pw := []string{"R12", "R12", "R12", "$0", "$0", "$0", "R9", "R12"}
	for i := 0; i < 8; i++ {
		if i == 0 {
			p("ADD.S\t%s, R0, R0", pw[i])
		} else {
			p("ADC.S\t%s, R%d, R%d", pw[i], i, i)
		}
	}
	p("MOVW\tout1+0(FP), R12")
	for i := 0; i < 8; i++ {
		p("MOVW\tR%d, %d(R12)", i, 4*i)
	}
	p("RET")
}

// P-256's group order n, its words least significant first, and
// -n^-1 mod 2^32.
var (
	p256N  = [8]uint32{0xfc632551, 0xf3b9cac2, 0xa7179e84, 0xbce6faad, 0xffffffff, 0xffffffff, 0, 0xffffffff}
	p256N0 = uint32(0xee00bc4f)
)

// emitOrdMontMul writes func p256OrdMontMul(out, a, b *[8]uint32):
// a×b×2^-256 mod n for a, b below n, word-by-word Montgomery (CIOS) with
// m = t[0]×(-n^-1) each row, as p256OrdMontMulGo. n's words and -n^-1
// are copied from p256OrdNWords into the frame with a and b, so no register
// holds a pointer; the running sum's top bit waits in the frame while
// the carry register serves the m×n chain.
//
// Frame: a at 4, b at 36, n at 68, -n^-1 at 100, the top bit at 104,
// t-n at 108.
func emitOrdMontMul(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	const fa, fb, fn, fn0, ftop, fd = 4, 36, 68, 100, 104, 108
	for i, v := range append(p256N[:], p256N0) {
		p("DATA\t·p256OrdNWords+%d(SB)/4, $%#08x", 4*i, v)
	}
	fmt.Fprintln(w, "GLOBL\t·p256OrdNWords(SB), RODATA|NOPTR, $36")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "// func p256OrdMontMul(out, a, b *[8]uint32)")
	fmt.Fprintln(w, "TEXT ·p256OrdMontMul(SB), NOSPLIT, $148-12")
	copyToFrame(w, "MOVW\ta+4(FP)", fa, 8)
	copyToFrame(w, "MOVW\tb+8(FP)", fb, 8)
	copyToFrame(w, "MOVW\t$·p256OrdNWords(SB)", fn, 9)
	t := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	c := 9
	for _, r := range t {
		p("MOVW\t$0, R%d", r)
	}
	for i := 0; i < 8; i++ {
		productRow(w, t, c, i, fa, fb)
		p("MOVW\tR%d, %d(R13)", c, ftop)
		// m = t[0] × -n^-1; t += m × n, whose low word cancels t[0].
		p("// reduce: m = R%d × -n^-1", t[0])
		p("MOVW\t%d(R13), R14", fn0)
		p("MUL\tR14, R%d, R14", t[0])
		p("MOVW\t$0, R%d", c)
		for j := 0; j < 8; j++ {
			p("MOVW\t%d(R13), R12", fn+4*j)
			fmt.Fprintf(w, "\tWORD\t$%#08x\t// UMAAL R%d, R%d, R12, R14\n", umaal(t[j], c, 12, 14), t[j], c)
		}
		p("ADD.S\tR%d, R%d, R%d", c, t[8], t[8])
		p("MOVW\t%d(R13), R%d", ftop, t[0])
		p("ADC\t$0, R%d, R%d", t[0], t[0])
		t = append(append([]int{}, t[1:]...), t[0])
	}
	// out = t - n if t >= n, else t: n's words from the frame.
	reduceOnce(w, t, c, fd, "out", func(w *bytes.Buffer, k int) string {
		fmt.Fprintf(w, "\tMOVW\t%d(R13), R12\n", fn+4*k)
		return "R12"
	})
	p("RET")
}
