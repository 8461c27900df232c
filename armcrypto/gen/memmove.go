package main

import (
	"bytes"
	"fmt"
)

// emitMemmove writes runtime·memmove for GOARCH=arm: where the source
// and the destination are not aligned alike (no pointer can be in such a
// copy, since pointers are word-aligned in both), at least 64 bytes
// long, the copy forward-safe (the destination below the source, or the
// two apart) and the kernel reports NEON (memmoveNEON,
// memmove_arm32_arm.go), 64 bytes at a time with
// VLD1.8/VST1.8, which take any alignment; the rest, and every other
// copy, is the runtime's own (memmove_arm.s, whose TEXT the overlay
// renames memmoveGeneric), which such copies shift a word at a time,
// twelve instructions per 16 bytes. TLS records (5-byte headers), HTTP/2
// frames (9) and SSH packets move misaligned so.
//
// Registers: R0 to, R1 from, R2 n, R3 the end of the 64-byte chunks,
// R12 scratch. NOSPLIT without a frame: it must not touch R14.
func emitMemmove(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	e := neon64{w}
	fmt.Fprintln(w, "// func memmove(to, from unsafe.Pointer, n uintptr)")
	fmt.Fprintln(w, "TEXT runtime·memmove(SB), NOSPLIT|NOFRAME, $0-12")
	p("MOVW\tn+8(FP), R2")
	p("CMP\t$64, R2")
	p("B.LO\tgeneric")
	p("MOVW\tto+0(FP), R0")
	p("MOVW\tfrom+4(FP), R1")
	p("EOR\tR0, R1, R12")
	p("AND.S\t$3, R12")
	p("B.EQ\tgeneric // aligned alike: pointers may be in it, words must move whole")
	p("// forward-safe: to <= from, or to >= from+n")
	p("CMP\tR1, R0")
	p("B.LS\tforward")
	p("ADD\tR1, R2, R12")
	p("CMP\tR12, R0")
	p("B.LO\tgeneric")
	fmt.Fprintln(w, "forward:")
	p("MOVBU\truntime·memmoveNEON(SB), R12")
	p("CMP\t$0, R12")
	p("B.EQ\tgeneric")
	p("BIC\t$63, R2, R3")
	p("ADD\tR0, R3, R3")
	fmt.Fprintln(w, "loop:")
	for i := 0; i < 2; i++ {
		e.op(vldst(true, 0, 4, 8, 1, true), "VLD1.8 {d0-d3}, [R1]!")
		e.op(vldst(false, 0, 4, 8, 0, true), "VST1.8 {d0-d3}, [R0]!")
	}
	p("CMP\tR3, R0")
	p("B.NE\tloop")
	p("// the last n mod 64 bytes: the runtime's code")
	p("AND\t$63, R2, R2")
	p("MOVW\tR0, to+0(FP)")
	p("MOVW\tR1, from+4(FP)")
	p("MOVW\tR2, n+8(FP)")
	fmt.Fprintln(w, "generic:")
	p("B\truntime·memmoveGeneric(SB)")
	fmt.Fprintln(w)
}
