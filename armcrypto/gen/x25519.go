package main

import (
	"bytes"
	"fmt"
)

// X25519's field in eight 32-bit words (crypto/ecdh's fe8, an element
// any value below 2^256 congruent modulo p = 2^255-19): the operations
// of x25519_arm32.go's Go forms, with one UMAAL per partial product.

// fold38 writes the fold of a carry: res += 38×R(c), and 38 once more if
// that carries out of the top word (x25519_arm32.go's fold38). R(k38)
// holds 38; c is left zero or 38 in the end, and is free after.
func fold38(w *bytes.Buffer, res []int, c, k38 int) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	p("MUL\tR%d, R%d, R%d", c, k38, c)
	p("ADD.S\tR%d, R%d, R%d", c, res[0], res[0])
	for k := 1; k < 8; k++ {
		p("ADC.S\t$0, R%d, R%d", res[k], res[k])
	}
	p("MOVW\t$0, R%d", c)
	p("ADC\t$0, R%d, R%d", c, c)
	p("MUL\tR%d, R%d, R%d", c, k38, c)
	p("ADD\tR%d, R%d, R%d", c, res[0], res[0])
}

// store writes the eight words in res to the fe8 that argument arg
// points to, through R(ptr).
func store(w *bytes.Buffer, res []int, arg string, ptr int) {
	fmt.Fprintf(w, "\tMOVW\t%s+0(FP), R%d\n", arg, ptr)
	for k, r := range res {
		fmt.Fprintf(w, "\tMOVW\tR%d, %d(R%d)\n", r, 4*k, ptr)
	}
}

// emitFe8Mul writes fe8Mul (v = a×b) or, with square, fe8Square
// (v = a², a read once).
//
// The 512-bit product row by row: row i adds a × b[i] to the running
// words t (R0-R7) with the carry in R8, a word of a in R12 and b[i] in
// R14; the row's bottom word is final and goes to the frame, and the
// names rotate (the carry register becomes the top word, the stored one
// the next carry). Then the top eight words times 38 (R14) onto the
// bottom eight from the frame, and the fold of the last carry.
//
// Frame: a at 4(R13), b at 36(R13), the product's bottom words at
// 68(R13).
func emitFe8Mul(w *bytes.Buffer, square bool) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	const fa, fr = 4, 68
	fb := 36
	if square {
		fb = fa
		fmt.Fprintln(w, "// func fe8Square(v, a *fe8)")
		fmt.Fprintln(w, "TEXT ·fe8Square(SB), NOSPLIT, $100-8")
	} else {
		fmt.Fprintln(w, "// func fe8Mul(v, a, b *fe8)")
		fmt.Fprintln(w, "TEXT ·fe8Mul(SB), NOSPLIT, $100-12")
	}
	copyToFrame(w, "MOVW\ta+4(FP)", fa, 8)
	if !square {
		copyToFrame(w, "MOVW\tb+8(FP)", fb, 8)
	}
	t := []int{0, 1, 2, 3, 4, 5, 6, 7}
	c := 8
	for _, r := range t {
		p("MOVW\t$0, R%d", r)
	}
	for i := 0; i < 8; i++ {
		p("// row %d: t += a × b[%d]", i, i)
		p("MOVW\t%d(R13), R14", fb+4*i)
		p("MOVW\t$0, R%d", c)
		for j := 0; j < 8; j++ {
			p("MOVW\t%d(R13), R12", fa+4*j)
			p("WORD\t$%#08x\t// UMAAL R%d, R%d, R12, R14", umaal(t[j], c, 12, 14), t[j], c)
		}
		p("MOVW\tR%d, %d(R13)", t[0], fr+4*i)
		t, c = append(append([]int{}, t[1:]...), c), t[0]
	}
	p("// the top half times 38 onto the bottom")
	p("MOVW\t$38, R14")
	p("MOVW\t$0, R%d", c)
	free := 12
	var res []int
	for k := 0; k < 8; k++ {
		p("MOVW\t%d(R13), R%d", fr+4*k, free)
		p("WORD\t$%#08x\t// UMAAL R%d, R%d, R%d, R14", umaal(free, c, t[k], 14), free, c, t[k])
		res = append(res, free)
		free = t[k]
	}
	fold38(w, res, c, 14)
	store(w, res, "v", free)
	p("RET")
	fmt.Fprintln(w)
}

// emitFe8AddSub writes fe8Add (v = a+b) and fe8Sub (v = a-b): one carry
// chain in R0-R7 and the fold of its carry (38 added), or of its
// borrow (38 taken). No frame: they must not touch R14.
func emitFe8AddSub(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	for _, add := range []bool{true, false} {
		name, op, opc := "fe8Add", "ADD", "ADC"
		if !add {
			name, op, opc = "fe8Sub", "SUB", "SBC"
		}
		fmt.Fprintf(w, "// func %s(v, a, b *fe8)\n", name)
		fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-12\n", name)
		p("MOVW\ta+4(FP), R12")
		for k := 0; k < 8; k++ {
			p("MOVW\t%d(R12), R%d", 4*k, k)
		}
		p("MOVW\tb+8(FP), R12")
		for k := 0; k < 8; k++ {
			p("MOVW\t%d(R12), R8", 4*k)
			if k == 0 {
				p("%s.S\tR8, R0, R0", op)
			} else {
				p("%s.S\tR8, R%d, R%d", opc, k, k)
			}
		}
		res := []int{0, 1, 2, 3, 4, 5, 6, 7}
		if add {
			p("MOVW\t$38, R9")
			p("MOVW\t$0, R8")
			p("ADC\t$0, R8, R8")
			fold38(w, res, 8, 9)
		} else {
			// C clear is a borrow: R8 = 0 - 0 - borrow, all ones or
			// zero, masks 38; twice, as fe8SubGo.
			for n := 0; n < 2; n++ {
				p("MOVW\t$0, R8")
				p("SBC\t$0, R8, R8")
				p("AND\t$38, R8, R8")
				if n == 0 {
					p("SUB.S\tR8, R0, R0")
					for k := 1; k < 8; k++ {
						p("SBC.S\t$0, R%d, R%d", k, k)
					}
				} else {
					p("SUB\tR8, R0, R0")
				}
			}
		}
		store(w, res, "v", 12)
		p("RET")
		fmt.Fprintln(w)
	}
}

// emitFe8MulA24 writes fe8MulA24 (v = a×121665): a in R0-R7, the
// constant in R8; each word's UMAAL adds the running carry (lo) to a
// zeroed register (hi), so the names rotate: the carry register takes
// the word, the zeroed one the carry, and a's register, used, is the next
// zeroed one. No frame: it must not touch R14.
func emitFe8MulA24(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	fmt.Fprintln(w, "// func fe8MulA24(v, a *fe8)")
	fmt.Fprintln(w, "TEXT ·fe8MulA24(SB), NOSPLIT, $0-8")
	p("MOVW\ta+4(FP), R12")
	for k := 0; k < 8; k++ {
		p("MOVW\t%d(R12), R%d", 4*k, k)
	}
	p("MOVW\t$121665, R8")
	c, zero := 9, 12
	p("MOVW\t$0, R%d", c)
	var res []int
	for k := 0; k < 8; k++ {
		p("MOVW\t$0, R%d", zero)
		p("WORD\t$%#08x\t// UMAAL R%d, R%d, R%d, R8", umaal(c, zero, k, 8), c, zero, k)
		res = append(res, c)
		c, zero = zero, k
	}
	p("MOVW\t$38, R%d", zero)
	fold38(w, res, c, zero)
	store(w, res, "v", zero)
	p("RET")
	fmt.Fprintln(w)
}
