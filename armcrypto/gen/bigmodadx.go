package main

import (
	"bytes"
	"fmt"
)

// RSA's Montgomery multiplication and squaring on amd64 with BMI2's MULX
// and ADX's ADCX and ADOX (crypto/internal/fips140/bigmod, nat_mont.go's
// montMulGo and montSqrGo), one function each per size, the final
// subtraction of m included, in constant time; and the exponentiation's
// table selection in SSE2.
//
// The standard library's amd64 code already runs a row of products at
// about one MULX a cycle (addMulVVW1024 and its siblings, two calls a row
// of its Montgomery multiplication); what it leaves on the table is the
// rest: a call per row, the copy out of T and the final subtraction in Go
// (a third of an RSA-2048 signature), and a square computed as a product.
// Here one call does a whole multiplication, and a square adds each cross
// product a[i]×a[j] (i < j) once, doubles the sum and adds the squares:
// n(n-1)/2 + n word products for n², plus the reduction's n².
//
// The sum T has 2n words in the frame. A row adds an operand times one
// word, DX, to a window of T with two carry chains: MULX leaves the
// flags alone, ADCX carries the low words' sums in CF and ADOX carries in
// OF the high word of the column before and the word of T, so that a
// column is MULX, ADCX, ADOX and the store, and the row's last high word
// takes both carries. The reduction is the ARM code's (bigmod.go): a row
// a word of T, m×Y with Y making that word zero, the carry into the word
// past the row kept as a mask between rows (NEG, ADC, SBB), then
// T[n:2n] - m into T[0:n] (free by then) and x = one or the other by CMOV
// on the borrow and the carry, which leaks nothing: both are read.
//
// Registers: SI the operand, DI the window of T, DX the multiplier, AX
// zero (the XOR that makes it clears CF and OF), R8-R13 a column's
// words; in the multiplication's rows BX is the next b[i] and CX b's
// end; in the reduction CX is m0inv, BX the carry mask and R14 T[n]'s
// address, the rows' end; R15 is x.

// adxRow adds the n words at off(op) times DX to the n words of T at
// tOff(tb), and leaves the row's top word (below 2^64: the sum fits n+1
// words) in the register it returns. With skipFirst the first column is
// not stored: a reduction row's, zero by Y's choice.
func adxRow(p func(string, ...any), op string, off int, tb string, tOff, n int, skipFirst bool) string {
	lo := [2]string{"R8", "R9"}
	hi := [2]string{"R10", "R11"}
	p("XORL\tAX, AX // CF = OF = 0")
	for j := range n {
		k := j % 2
		p("MULXQ\t%d(%s), %s, %s", off+8*j, op, lo[k], hi[k])
		if j > 0 {
			p("ADCXQ\t%s, %s", hi[1-k], lo[k])
		}
		p("ADOXQ\t%d(%s), %s", tOff+8*j, tb, lo[k])
		if j > 0 || !skipFirst {
			p("MOVQ\t%s, %d(%s)", lo[k], tOff+8*j, tb)
		}
	}
	top := hi[(n-1)%2]
	p("ADCXQ\tAX, %s", top)
	p("ADOXQ\tAX, %s", top)
	return top
}

// zeroTADX zeroes words [from, to) of T at 0(SP), two at a time.
func zeroTADX(p func(string, ...any), from, to int) {
	p("PXOR\tX0, X0")
	for k := from; k < to; k += 2 {
		p("MOVOU\tX0, %d(SP)", 8*k)
	}
}

func emitMontMulADX(w *bytes.Buffer, bits int) {
	n := bits / 64
	fmt.Fprintf(w, "// func montMul%d(x, a, b, m *uint, m0inv uint)\n", bits)
	fmt.Fprintf(w, "TEXT ·montMul%d(SB), $%d-40\n", bits, 16*n)
	p := printer(w)
	p("// T[0:n] = 0; row i writes T[i+n] fresh")
	zeroTADX(p, 0, n)
	p("MOVQ\ta+8(FP), SI")
	p("MOVQ\tb+16(FP), BX")
	p("LEAQ\t%d(BX), CX", 8*n)
	p("MOVQ\tSP, DI")
	fmt.Fprintln(w, "mulrow:")
	p("// T[i:i+n+1] = T[i:i+n] + a×b[i]")
	p("MOVQ\t(BX), DX")
	top := adxRow(p, "SI", 0, "DI", 0, n, false)
	p("MOVQ\t%s, %d(DI)", top, 8*n)
	p("ADDQ\t$8, BX")
	p("ADDQ\t$8, DI")
	p("CMPQ\tBX, CX")
	p("JNE\tmulrow")
	reduceADX(w, p, n, "m+24(FP)", "m0inv+32(FP)")
	fmt.Fprintln(w)
}

func emitMontSqrADX(w *bytes.Buffer, bits int) {
	n := bits / 64
	fmt.Fprintf(w, "// func montSqr%d(x, a, m *uint, m0inv uint)\n", bits)
	fmt.Fprintf(w, "TEXT ·montSqr%d(SB), $%d-32\n", bits, 16*n)
	p := printer(w)
	p("// T[0:n] = 0 and T[2n-1] = 0; row i writes T[i+n] fresh")
	zeroTADX(p, 0, n)
	p("MOVQ\tX0, %d(SP)", 8*(2*n-1))
	p("MOVQ\ta+8(FP), SI")
	for i := 0; i < n-1; i++ {
		p("// T[%d:%d] += a[%d]×a[%d:%d]", 2*i+1, i+n+1, i, i+1, n)
		p("MOVQ\t%d(SI), DX", 8*i)
		top := adxRow(p, "SI", 8*(i+1), "SP", 8*(2*i+1), n-1-i, false)
		p("MOVQ\t%s, %d(SP)", top, 8*(i+n))
	}
	p("// T = 2T + the squares a[i]² at T[2i]: the doubling in CF, the squares in OF")
	p("XORL\tAX, AX")
	for i := range n {
		p("MOVQ\t%d(SI), DX", 8*i)
		p("MULXQ\tDX, R8, R9")
		for k, r := range []string{"R8", "R9"} {
			t := 8 * (2*i + k)
			p("MOVQ\t%d(SP), R10", t)
			p("ADCXQ\tR10, R10")
			p("ADOXQ\t%s, R10", r)
			p("MOVQ\tR10, %d(SP)", t)
		}
	}
	reduceADX(w, p, n, "m+16(FP)", "m0inv+24(FP)")
	fmt.Fprintln(w)
}

// reduceADX divides T (at SP) by R modulo m and writes x: the
// reduction rows, then T[n:2n] - m into T[0:n], and x = that where it did
// not borrow or T overflowed, else T[n:2n].
func reduceADX(w *bytes.Buffer, p func(string, ...any), n int, m, m0inv string) {
	p("// the reduction: T[i:i+n] += m×Y, Y = T[i]×m0inv making T[i] zero,")
	p("// and the row's top word into T[i+n] with the carry out of the row before (BX)")
	p("MOVQ\t%s, SI", m)
	p("MOVQ\t%s, CX", m0inv)
	p("XORL\tBX, BX")
	p("MOVQ\tSP, DI")
	p("LEAQ\t%d(SP), R14", 8*n)
	fmt.Fprintln(w, "redrow:")
	p("MOVQ\t(DI), DX")
	p("IMULQ\tCX, DX")
	top := adxRow(p, "SI", 0, "DI", 0, n, true)
	p("NEGQ\tBX // CF = the carry")
	p("ADCQ\t%s, %d(DI)", top, 8*n)
	p("SBBQ\tBX, BX")
	p("ADDQ\t$8, DI")
	p("CMPQ\tDI, R14")
	p("JNE\tredrow")
	p("// T[0:n] = T[n:2n] - m; BX |= all ones where that did not borrow")
	for j := range n {
		p("MOVQ\t%d(R14), R8", 8*j)
		op := "SBBQ"
		if j == 0 {
			op = "SUBQ"
		}
		p("%s\t%d(SI), R8", op, 8*j)
		p("MOVQ\tR8, %d(SP)", 8*j)
	}
	p("SBBQ\tR9, R9")
	p("NOTQ\tR9")
	p("ORQ\tR9, BX")
	p("// x = BX ? T[0:n] : T[n:2n], each word by CMOV (both read)")
	p("MOVQ\tx+0(FP), R15")
	p("TESTQ\tBX, BX")
	for j := range n {
		p("MOVQ\t%d(R14), R8", 8*j)
		p("CMOVQNE\t%d(SP), R8", 8*j)
		p("MOVQ\tR8, %d(R15)", 8*j)
	}
	p("RET")
}

// emitMontSelectADX writes func montSelect<bits>(x, table *uint, k uint):
// x = the entry k of table's 16, bits/64 words each, in constant time:
// every entry is read and ANDed with a mask, all ones for entry k and
// zero for the others, into x; sixteen words at a time in X0-X7, the
// mask in X8. SSE2, which every amd64 has.
func emitMontSelectADX(w *bytes.Buffer, bits int) {
	n := bits / 64
	fmt.Fprintf(w, "// func montSelect%d(x, table *uint, k uint)\n", bits)
	fmt.Fprintf(w, "TEXT ·montSelect%d(SB), NOSPLIT, $0-24\n", bits)
	p := printer(w)
	p("MOVQ\tx+0(FP), DI")
	p("MOVQ\ttable+8(FP), SI")
	p("MOVQ\tk+16(FP), DX")
	for c := 0; c < n; c += 16 {
		words := min(16, n-c)
		p("// x[%d:%d]", c, c+words)
		for e := range 16 {
			p("// entry %d: R9 = k == %d ? all ones : 0 (k^%d | -(k^%d) has its top bit set unless zero)", e, e, e, e)
			p("MOVQ\tDX, R8")
			p("XORQ\t$%d, R8", e)
			p("MOVQ\tR8, R9")
			p("NEGQ\tR9")
			p("ORQ\tR8, R9")
			p("SARQ\t$63, R9")
			p("NOTQ\tR9")
			p("MOVQ\tR9, X8")
			p("PUNPCKLQDQ\tX8, X8")
			for r := 0; r < words/2; r++ {
				off := 8 * (e*n + c + 2*r)
				if e == 0 {
					p("MOVOU\t%d(SI), X%d", off, r)
					p("PAND\tX8, X%d", r)
					continue
				}
				p("MOVOU\t%d(SI), X9", off)
				p("PAND\tX8, X9")
				p("POR\tX9, X%d", r)
			}
		}
		for r := 0; r < words/2; r++ {
			p("MOVOU\tX%d, %d(DI)", r, 8*(c+2*r))
		}
	}
	p("RET")
	fmt.Fprintln(w)
}
