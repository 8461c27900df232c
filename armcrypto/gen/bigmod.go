package main

import (
	"bytes"
	"fmt"
)

// RSA's Montgomery multiplication and squaring for
// crypto/internal/fips140/bigmod (nat_mont.go's montMulGo and montSqrGo),
// one function each per size: x = a×b/R mod m and x = a×a/R mod m with
// R = 2^bits, the final subtraction of m included, in constant time.
//
// Both work in a 2n-word sum T in the frame. The multiplication adds the
// rows a×b[i] into T; the squaring adds each cross product a[i]×a[j]
// (i < j) once, doubles T and adds the squares a[i]²: n(n-1)/2 + n word
// products for the multiplication's n². Then the reduction adds m×Y for
// each word of T from the bottom, Y making it zero, as the generic code
// does row by row (the same Y, so the same result), and T[n:2n], with the
// carry out of the top, is a×b/R below 2m.
//
// The rows go four words at a time: LDM of four words of the operand and
// of T, four UMAALs (which add the carry and the word of T), STM of the
// four words of T: seven instructions for four products. The rows loop
// (the squaring's triangle, whose rows shorten, is unrolled: 6.5 KB of
// code for 1024 bits, 20 KB for 2048); the carries
// between the reduction's rows stay in the C flag, which nothing in a
// row touches (the loop tests with TEQ).
//
// Registers in a row: R0 the operand (a or m), R1 T, R2 the multiplier
// (b[i], a[i] or Y), R3 the carry, R4-R7 four words of the operand,
// R8, R9, R12, R14 four words of T. Frame: the end of T's row starts at
// 4(R13), the next b[i]'s address at 8(R13), T from 16(R13).
const (
	fEnd = 4
	fB   = 8
	fT   = 16
)

// tBlock is the registers holding four words of T, in LDM's order.
var tBlock = [4]int{8, 9, 12, 14}

const tList = "[R8,R9,R12,R14]"

type montArgs struct {
	a, m, m0inv string // the arguments as the assembly names them
}

func emitMontMul(w *bytes.Buffer, bits int) {
	n := bits / 32
	args := montArgs{a: "a+4(FP)", m: "m+12(FP)", m0inv: "m0inv+16(FP)"}
	fmt.Fprintf(w, "// func montMul%d(x, a, b, m *uint, m0inv uint)\n", bits)
	fmt.Fprintf(w, "TEXT ·montMul%d(SB), NOSPLIT, $%d-20\n", bits, fT+8*n)
	p := printer(w)
	p("// T[0:n] = 0; the rows write T[n:2n] as they reach it")
	zeroT(p, n)
	p("MOVW\tb+8(FP), R12")
	p("MOVW\tR12, %d(R13)", fB)
	p("ADD\t$%d, R13, R1", fT)
	p("ADD\t$%d, R13, R12", fT+4*n)
	p("MOVW\tR12, %d(R13)", fEnd)
	fmt.Fprintln(w, "mulrow:")
	p("// T[i:i+n+1] += a×b[i]")
	p("MOVW\t%d(R13), R12", fB)
	p("MOVW.P\t4(R12), R2")
	p("MOVW\tR12, %d(R13)", fB)
	p("MOVW\t%s, R0", args.a)
	p("MOVW\t$0, R3")
	for k := 0; k < n; k += 4 {
		block(p)
	}
	p("MOVW\tR3, 0(R1)")
	p("SUB\t$%d, R1", 4*n-4)
	p("MOVW\t%d(R13), R12", fEnd)
	p("CMP\tR12, R1")
	p("B.NE\tmulrow")
	reduce(w, p, n, args)
	fmt.Fprintln(w)
}

func emitMontSqr(w *bytes.Buffer, bits int) {
	n := bits / 32
	args := montArgs{a: "a+4(FP)", m: "m+8(FP)", m0inv: "m0inv+12(FP)"}
	fmt.Fprintf(w, "// func montSqr%d(x, a, m *uint, m0inv uint)\n", bits)
	fmt.Fprintf(w, "TEXT ·montSqr%d(SB), NOSPLIT, $%d-16\n", bits, fT+8*n)
	p := printer(w)
	p("// T[0:n] = 0 and T[2n-1] = 0; the rows write T[n:2n-1] as they reach it")
	zeroT(p, n)
	p("MOVW\tR2, %d(R13)", fT+4*(2*n-1))
	// Row i adds a[i]×a[i+1:n] at T[2i+1]. a[i+1:n] is the rest of
	// a[i]'s block of four (one word at a time) and the blocks after it.
	for i := 0; i < n-1; i++ {
		next := i/4*4 + 4 // the first word of the next block
		p("// T[%d:%d] += a[%d]×a[%d:%d]", 2*i+1, i+n+1, i, i+1, n)
		p("MOVW\t%s, R0", args.a)
		p("MOVW\t%d(R0), R2", 4*i)
		p("MOVW\t$0, R3")
		for j := i + 1; j < next; j++ {
			p("MOVW\t%d(R0), R4", 4*j)
			p("MOVW\t%d(R13), R8", fT+4*(i+j))
			um(p, 8, 3, 4, 2)
			p("MOVW\tR8, %d(R13)", fT+4*(i+j))
		}
		if next < n {
			p("ADD\t$%d, R0", 4*next)
			p("ADD\t$%d, R13, R1", fT+4*(i+next))
			for j := next; j < n; j += 4 {
				block(p)
			}
		}
		p("MOVW\tR3, %d(R13)", fT+4*(i+n))
	}
	p("// T = 2T: the cross products counted twice")
	p("ADD\t$%d, R13, R1", fT)
	p("ADD.S\t$0, R1, R1 // C = 0")
	for k := 0; k < 2*n; k += 4 {
		p("MOVM.IA\t(R1), %s", tList)
		for _, r := range tBlock {
			p("ADC.S\tR%d, R%d, R%d", r, r, r)
		}
		p("MOVM.IA.W\t%s, (R1)", tList)
	}
	p("// T += a[i]² at T[2i]")
	p("MOVW\t%s, R0", args.a)
	p("ADD\t$%d, R13, R1", fT)
	p("ADD.S\t$0, R1, R1 // C = 0")
	for k := 0; k < n; k += 2 {
		p("MOVM.IA.W\t(R0), [R2-R3]")
		p("MULLU\tR2, R2, (R5, R4)")
		p("MULLU\tR3, R3, (R7, R6)")
		p("MOVM.IA\t(R1), %s", tList)
		for j, r := range tBlock {
			p("ADC.S\tR%d, R%d, R%d", 4+j, r, r)
		}
		p("MOVM.IA.W\t%s, (R1)", tList)
	}
	p("ADD\t$%d, R13, R12", fT+4*n)
	p("MOVW\tR12, %d(R13)", fEnd)
	reduce(w, p, n, args)
	fmt.Fprintln(w)
}

func printer(w *bytes.Buffer) func(string, ...any) {
	return func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
}

func um(p func(string, ...any), lo, hi, n, m int) {
	p("WORD\t$%#08x\t// UMAAL R%d, R%d, R%d, R%d", umaal(lo, hi, n, m), lo, hi, n, m)
}

// zeroT zeroes T[0:n] (n a multiple of 8) with R2-R9, which stay zero.
func zeroT(p func(string, ...any), n int) {
	for r := 2; r <= 9; r++ {
		p("MOVW\t$0, R%d", r)
	}
	p("ADD\t$%d, R13, R1", fT)
	for k := 0; k < n; k += 8 {
		p("MOVM.IA.W\t[R2-R9], (R1)")
	}
}

// block adds four words of the operand at R0 times R2, and the carry R3,
// to the four words of T at R1; both pointers move on four words.
func block(p func(string, ...any)) {
	p("MOVM.IA.W\t(R0), [R4-R7]")
	p("MOVM.IA\t(R1), %s", tList)
	for k, r := range tBlock {
		um(p, r, 3, 4+k, 2)
	}
	p("MOVM.IA.W\t%s, (R1)", tList)
}

// reduce divides T by R modulo m, one row a word of T, and writes x =
// T[n:2n] less m where that is not negative or T overflowed: the
// reduction rows, then the borrow of T[n:2n] - m without storing it,
// then the subtraction of m masked by it.
func reduce(w *bytes.Buffer, p func(string, ...any), n int, args montArgs) {
	p("// the reduction: T[i:i+n] += m×Y, Y = T[i]×m0inv making T[i] zero,")
	p("// and the carry into T[i+n] with the one out of the row before (C)")
	p("ADD\t$%d, R13, R1", fT)
	p("ADD.S\t$0, R1, R1 // C = 0")
	fmt.Fprintln(w, "redrow:")
	p("MOVW\t%s, R0", args.m)
	p("MOVW\t%s, R3", args.m0inv)
	p("MOVM.IA\t(R1), %s", tList)
	p("MUL\tR3, R8, R2")
	p("MOVW\t$0, R3")
	p("MOVM.IA.W\t(R0), [R4-R7]")
	for k, r := range tBlock {
		um(p, r, 3, 4+k, 2)
	}
	p("MOVM.IA.W\t%s, (R1)", tList)
	for k := 4; k < n; k += 4 {
		block(p)
	}
	p("MOVW\t0(R1), R8")
	p("ADC.S\tR3, R8, R8")
	p("MOVW\tR8, 0(R1)")
	p("SUB\t$%d, R1", 4*n-4)
	p("MOVW\t%d(R13), R12", fEnd)
	p("TEQ\tR12, R1 // leaves C")
	p("B.NE\tredrow")
	p("// R2 = the carry out of T's top; C = no borrow from T[n:2n] - m")
	p("MOVW\t$0, R2")
	p("ADC\t$0, R2, R2")
	p("MOVW\t%s, R0", args.m)
	for k := 0; k < n; k += 4 {
		p("MOVM.IA.W\t(R0), [R4-R7]")
		p("MOVM.IA.W\t(R1), %s", tList)
		for j, r := range tBlock {
			op := "SBC.S"
			if k == 0 && j == 0 {
				op = "SUB.S"
			}
			p("%s\tR%d, R%d, R%d", op, 4+j, r, r)
		}
	}
	p("// R3 = all ones if m is to be subtracted (T[n:2n] >= m or T overflowed), else 0")
	p("MOVW\t$0, R3")
	p("ADC\t$0, R3, R3")
	p("ORR\tR2, R3, R3")
	p("RSB\t$0, R3, R3")
	p("// x = T[n:2n] - m&R3")
	p("MOVW\t%s, R0", args.m)
	p("ADD\t$%d, R13, R1", fT+4*n)
	p("MOVW\tx+0(FP), R2")
	for k := 0; k < n; k += 4 {
		p("MOVM.IA.W\t(R0), [R4-R7]")
		p("MOVM.IA.W\t(R1), %s", tList)
		for j := range 4 {
			p("AND\tR3, R%d, R%d", 4+j, 4+j)
		}
		for j, r := range tBlock {
			op := "SBC.S"
			if k == 0 && j == 0 {
				op = "SUB.S"
			}
			p("%s\tR%d, R%d, R%d", op, 4+j, r, r)
		}
		p("MOVM.IA.W\t%s, (R2)", tList)
	}
	p("RET")
}

// emitMontSelect writes func montSelect<bits>(x, table *uint, k uint):
// x = table[k] of the 16 entries of bits/32 words each, in constant time:
// every entry is read, and ANDed with a mask that is all ones for entry k
// and zero for the others, into x.
//
// Registers: R0 the table, R1 x, R2 k less the entry's index, R3 the
// mask, R4-R7 four words of the entry, R8, R9, R12, R14 four of x. Frame:
// the table's end at 4(R13).
func emitMontSelect(w *bytes.Buffer, bits int) {
	n := bits / 32
	fmt.Fprintf(w, "// func montSelect%d(x, table *uint, k uint)\n", bits)
	fmt.Fprintf(w, "TEXT ·montSelect%d(SB), NOSPLIT, $8-12\n", bits)
	p := printer(w)
	p("MOVW\ttable+4(FP), R0")
	p("ADD\t$%d, R0, R12", 16*4*n)
	p("MOVW\tR12, %d(R13)", fEnd)
	p("MOVW\tk+8(FP), R2")
	p("// entry 0: x = table[0] & (k == 0 ? all ones : 0)")
	mask(p)
	p("MOVW\tx+0(FP), R1")
	for k := 0; k < n; k += 4 {
		p("MOVM.IA.W\t(R0), [R4-R7]")
		for j := range 4 {
			p("AND\tR3, R%d, R%d", 4+j, 4+j)
		}
		p("MOVM.IA.W\t[R4-R7], (R1)")
	}
	fmt.Fprintln(w, "entry:")
	p("// x |= table[i] & (k == i ? all ones : 0)")
	p("SUB\t$1, R2")
	mask(p)
	p("MOVW\tx+0(FP), R1")
	for k := 0; k < n; k += 4 {
		p("MOVM.IA.W\t(R0), [R4-R7]")
		p("MOVM.IA\t(R1), %s", tList)
		for j, r := range tBlock {
			p("AND\tR3, R%d, R%d", 4+j, 4+j)
			p("ORR\tR%d, R%d, R%d", 4+j, r, r)
		}
		p("MOVM.IA.W\t%s, (R1)", tList)
	}
	p("MOVW\t%d(R13), R12", fEnd)
	p("CMP\tR12, R0")
	p("B.NE\tentry")
	p("RET")
	fmt.Fprintln(w)
}

// mask sets R3 to all ones if R2 is zero, else to zero, without a branch:
// R2 | -R2 has its top bit set unless R2 is zero.
func mask(p func(string, ...any)) {
	p("RSB\t$0, R2, R3")
	p("ORR\tR2, R3, R3")
	p("MVN\tR3->31, R3")
}
