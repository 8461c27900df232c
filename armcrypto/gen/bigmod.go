package main

import (
	"bytes"
	"fmt"
)

// emitMontMulFused writes func montMulFused<bits>(T, a, b, m *uint,
// m0inv uint) (c uint) for crypto/internal/fips140/bigmod: the rows of a
// Montgomery multiplication of bits-bit numbers (nat_arm32.go's
// montMulRowsGo), each word of T loaded once and stored once, a[j]×b[i]
// and m[j]×Y added with one UMAAL each. The rows loop; the words of a row
// are unrolled, at fixed offsets.
//
// Registers: R0 a, R1 m, R2 T at the row's bottom word, R3 b[i], R4 Y,
// R5 and R6 the two carries, R7 the word of T, R8 a[j], R9 m[j], R12 and
// R14 scratch. Frame: the carry out of the rows at 4(R13), the next
// b[i]'s address at 8(R13), the end of T's rows at 12(R13).
func emitMontMulFused(w *bytes.Buffer, bits int) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	um := func(lo, hi, n, m int) {
		p("WORD\t$%#08x\t// UMAAL R%d, R%d, R%d, R%d", umaal(lo, hi, n, m), lo, hi, n, m)
	}
	n := bits / 32
	const fc, fb, fend = 4, 8, 12
	fmt.Fprintf(w, "// func montMulFused%d(T, a, b, m *uint, m0inv uint) (c uint)\n", bits)
	fmt.Fprintf(w, "TEXT ·montMulFused%d(SB), NOSPLIT, $16-24\n", bits)
	p("MOVW\t$0, R14")
	p("MOVW\tR14, %d(R13)", fc)
	p("MOVW\tb+8(FP), R12")
	p("MOVW\tR12, %d(R13)", fb)
	p("MOVW\tT+0(FP), R2")
	p("ADD\t$%d, R2, R12", 4*n)
	p("MOVW\tR12, %d(R13)", fend)
	fmt.Fprintln(w, "row:")
	p("MOVW\ta+4(FP), R0")
	p("MOVW\tm+12(FP), R1")
	p("MOVW\t%d(R13), R12", fb)
	p("MOVW.P\t4(R12), R3")
	p("MOVW\tR12, %d(R13)", fb)
	p("// word 0: Y makes it zero")
	p("MOVW\t0(R0), R8")
	p("MOVW\t0(R2), R7")
	p("MOVW\t$0, R5")
	um(7, 5, 8, 3)
	p("MOVW\tm0inv+16(FP), R14")
	p("MUL\tR14, R7, R4")
	p("MOVW\t0(R1), R9")
	p("MOVW\t$0, R6")
	um(7, 6, 9, 4)
	for j := 1; j < n; j++ {
		p("MOVW\t%d(R0), R8", 4*j)
		p("MOVW\t%d(R1), R9", 4*j)
		p("MOVW\t%d(R2), R7", 4*j)
		um(7, 5, 8, 3)
		um(7, 6, 9, 4)
		p("MOVW\tR7, %d(R2)", 4*j)
	}
	p("// the row's top word: the two carries and the one before")
	p("MOVW\t%d(R13), R14", fc)
	p("ADD.S\tR6, R5, R5")
	p("MOVW\t$0, R6")
	p("ADC\t$0, R6, R6")
	p("ADD.S\tR14, R5, R5")
	p("ADC\t$0, R6, R6")
	p("MOVW\tR5, %d(R2)", 4*n)
	p("MOVW\tR6, %d(R13)", fc)
	p("ADD\t$4, R2, R2")
	p("MOVW\t%d(R13), R14", fend)
	p("CMP\tR14, R2")
	p("B.NE\trow")
	p("MOVW\t%d(R13), R14", fc)
	p("MOVW\tR14, c+20(FP)")
	p("RET")
	fmt.Fprintln(w)
}
