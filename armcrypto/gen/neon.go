package main

import (
	"bytes"
	"fmt"
)

// Go's ARM assembler has no NEON mnemonics: the instructions are written
// as WORDs, each encoded here from the ARM Architecture Reference Manual
// (ARMv7-A, A1 encodings) and printed with its mnemonic beside it.

// q splits Q register n into the 4-bit field and the high bit that name
// its first D register (d2n).
func q(n int) (v, hi uint32) { return dreg(2 * n) }

// three is the three-register form on Q registers (threeD's).
func three(base uint32, d, n, m int) uint32 { return threeD(base, true, 2*d, 2*n, 2*m) }

func vadd32(d, n, m int) uint32 { return three(0xF2200800, d, n, m) } // VADD.I32 Qd, Qn, Qm
func veor(d, n, m int) uint32   { return three(0xF3000110, d, n, m) } // VEOR Qd, Qn, Qm
func vorr(d, m int) uint32      { return three(0xF2200110, d, m, m) } // VORR Qd, Qm, Qm (VMOV)

// vext8 is VEXT.8 Qd, Qn, Qm, #imm (bytes imm.. of Qn, then of Qm).
func vext8(d, n, m, imm int) uint32 { return three(0xF2B00000|uint32(imm)<<8, d, n, m) }

// shift is the two-register-and-immediate form: 1111 001U 1 D imm6 Vd op L Q M 1 Vm.
func shift(base uint32, d, m int, imm6 uint32) uint32 {
	vd, D := q(d)
	vm, M := q(m)
	return base | D<<22 | imm6<<16 | vd<<12 | 1<<6 | M<<5 | 1<<4 | vm
}

func vshl32(d, m, n int) uint32 { return shift(0xF2800500, d, m, uint32(32+n)) } // VSHL.I32 Qd, Qm, #n
func vsri32(d, m, n int) uint32 { return shift(0xF3800400, d, m, uint32(64-n)) } // VSRI.32 Qd, Qm, #n

// vrev32_16 is VREV32.16 Qd, Qm: the halves of each word swapped, a
// rotation by 16.
func vrev32_16(d, m int) uint32 {
	vd, D := q(d)
	vm, M := q(m)
	return 0xF3B40080 | D<<22 | vd<<12 | 1<<6 | M<<5 | vm
}

// vrev32_8 is VREV32.8 Qd, Qm: the bytes of each word reversed (a
// big-endian word loaded little-endian, or back).
func vrev32_8(d, m int) uint32 {
	vd, D := q(d)
	vm, M := q(m)
	return 0xF3B00080 | D<<22 | vd<<12 | 1<<6 | M<<5 | vm
}

// vdup32 is VDUP.32 Qd, Rt: the ARM register in all four lanes.
func vdup32(d, rt int) uint32 {
	vd, D := q(d)
	return 0xEEA00B10 | vd<<16 | uint32(rt)<<12 | D<<7
}

// vldst is VLD1 / VST1 {d(first)..d(first+n-1)}, [Rn] of 1, 2 or 4 D
// registers with elements of size bits (8, 32 or 64), Rn advanced by
// the size moved if wb.
func vldst(load bool, first, n, size, rn int, wb bool) uint32 {
	vd, D := dreg(first)
	base := uint32(0xF4000000)
	if load {
		base = 0xF4200000
	}
	typ := map[int]uint32{1: 0b0111, 2: 0b1010, 4: 0b0010}[n]
	sz := map[int]uint32{8: 0, 16: 1, 32: 2, 64: 3}[size]
	rm := uint32(15)
	if wb {
		rm = 13
	}
	return base | D<<22 | uint32(rn)<<16 | vd<<12 | typ<<8 | sz<<6 | rm
}

// vldst1 is VLD1.8 / VST1.8 of Q registers: nq (1 or 2) from q(first).
// Size 8: byte elements have no alignment to keep, and on a
// little-endian core the lanes hold the same words as VLD1.32's.
func vldst1(load bool, first, nq, rn int, wb bool) uint32 {
	return vldst(load, 2*first, 2*nq, 8, rn, wb)
}

type neon struct{ w *bytes.Buffer }

func (e neon) op(word uint32, format string, a ...any) {
	fmt.Fprintf(e.w, "\tWORD\t$%#08x\t// %s\n", word, fmt.Sprintf(format, a...))
}

func (e neon) add(d, n, m int)   { e.op(vadd32(d, n, m), "VADD.I32 q%d, q%d, q%d", d, n, m) }
func (e neon) eor(d, n, m int)   { e.op(veor(d, n, m), "VEOR q%d, q%d, q%d", d, n, m) }
func (e neon) mov(d, m int)      { e.op(vorr(d, m), "VMOV q%d, q%d", d, m) }
func (e neon) ext(d, n, imm int) { e.ext2(d, n, n, imm) }
func (e neon) ext2(d, n, m, imm int) {
	e.op(vext8(d, n, m, imm), "VEXT.8 q%d, q%d, q%d, #%d", d, n, m, imm)
}
func (e neon) rev8(d, m int) { e.op(vrev32_8(d, m), "VREV32.8 q%d, q%d", d, m) }
func (e neon) dup(d, rt int) { e.op(vdup32(d, rt), "VDUP.32 q%d, R%d", d, rt) }

// rotl sets d to t rotated left by n: VSHL then VSRI (shift right and
// insert), or VREV32.16 for 16.
func (e neon) rotl(d, t, n int) {
	if n == 16 {
		e.op(vrev32_16(d, t), "VREV32.16 q%d, q%d", d, t)
		return
	}
	e.op(vshl32(d, t, n), "VSHL.I32 q%d, q%d, #%d", d, t, n)
	e.op(vsri32(d, t, 32-n), "VSRI.32 q%d, q%d, #%d", d, t, 32-n)
}

func (e neon) ld(first, nq, rn int, wb bool) {
	e.op(vldst1(true, first, nq, rn, wb), "VLD1.8 {d%d-d%d}, [R%d]%s", 2*first, 2*first+2*nq-1, rn, map[bool]string{true: "!"}[wb])
}

func (e neon) st(first, nq, rn int, wb bool) {
	e.op(vldst1(false, first, nq, rn, wb), "VST1.8 {d%d-d%d}, [R%d]%s", 2*first, 2*first+2*nq-1, rn, map[bool]string{true: "!"}[wb])
}

// quarter is ChaCha20's quarter round on the rows a, b, c, d of one or
// more blocks at once (each block's own registers), t a scratch per
// block: the four columns (or, after the rows are turned, diagonals) in
// the four lanes.
func (e neon) quarter(blocks [][5]int) {
	each := func(f func(a, b, c, d, t int)) {
		for _, r := range blocks {
			f(r[0], r[1], r[2], r[3], r[4])
		}
	}
	each(func(a, b, c, d, t int) { e.add(a, a, b) })
	each(func(a, b, c, d, t int) { e.eor(t, d, a) })
	each(func(a, b, c, d, t int) { e.rotl(d, t, 16) })
	each(func(a, b, c, d, t int) { e.add(c, c, d) })
	each(func(a, b, c, d, t int) { e.eor(t, b, c) })
	each(func(a, b, c, d, t int) { e.rotl(b, t, 12) })
	each(func(a, b, c, d, t int) { e.add(a, a, b) })
	each(func(a, b, c, d, t int) { e.eor(t, d, a) })
	each(func(a, b, c, d, t int) { e.rotl(d, t, 8) })
	each(func(a, b, c, d, t int) { e.add(c, c, d) })
	each(func(a, b, c, d, t int) { e.eor(t, b, c) })
	each(func(a, b, c, d, t int) { e.rotl(b, t, 7) })
}

// emitChaCha writes func chachaNEON(dst, src *byte, n int, state
// *[16]uint32, one *[4]uint32): n bytes (a multiple of 128) of src XORed
// with the key stream into dst, two blocks at a time, each block's state
// in four Q registers (rows), the diagonal rounds by turning rows with
// VEXT. state's counter (word 12) is advanced by n/64.
//
// Q registers: q0-q3 block A, q4-q7 block B (counter + 1), q8 and q9
// scratch, q10-q13 the input state, q15 {1, 0, 0, 0}.
func emitChaCha(w *bytes.Buffer) {
	e := neon{w}
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	fmt.Fprintln(w, "// func chachaNEON(dst, src *byte, n int, state *[16]uint32, one *[4]uint32)")
	fmt.Fprintln(w, "TEXT ·chachaNEON(SB), NOSPLIT, $0-20")
	p("MOVW\tdst+0(FP), R0")
	p("MOVW\tsrc+4(FP), R1")
	p("MOVW\tn+8(FP), R2")
	p("MOVW\tstate+12(FP), R3")
	p("MOVW\tone+16(FP), R4")
	e.ld(15, 1, 4, false)
	fmt.Fprintln(w, "blocks:")
	p("MOVW\tR3, R5")
	e.ld(10, 2, 5, true)
	e.ld(12, 2, 5, false)
	for i := 0; i < 4; i++ {
		e.mov(i, 10+i)
		if i < 3 {
			e.mov(4+i, 10+i)
		}
	}
	e.add(7, 13, 15)
	p("MOVW\t$10, R6")
	fmt.Fprintln(w, "rounds:")
	both := [][5]int{{0, 1, 2, 3, 8}, {4, 5, 6, 7, 9}}
	e.quarter(both)
	for _, r := range both { // diagonals into the columns
		e.ext(r[1], r[1], 4)
		e.ext(r[2], r[2], 8)
		e.ext(r[3], r[3], 12)
	}
	e.quarter(both)
	for _, r := range both { // and back
		e.ext(r[1], r[1], 12)
		e.ext(r[2], r[2], 8)
		e.ext(r[3], r[3], 4)
	}
	p("SUB.S\t$1, R6, R6")
	p("BNE\trounds")
	// The input added back (B's counter one more), then the XOR.
	for i := 0; i < 4; i++ {
		e.add(i, i, 10+i)
	}
	e.add(13, 13, 15)
	for i := 0; i < 4; i++ {
		e.add(4+i, 4+i, 10+i)
	}
	for blk := 0; blk < 2; blk++ {
		for half := 0; half < 2; half++ {
			r := 4*blk + 2*half
			e.ld(8, 2, 1, true)
			e.eor(r, r, 8)
			e.eor(r+1, r+1, 9)
			e.st(r, 2, 0, true)
		}
	}
	p("MOVW\t48(R3), R7")
	p("ADD\t$2, R7, R7")
	p("MOVW\tR7, 48(R3)")
	p("SUB.S\t$128, R2, R2")
	p("BNE\tblocks")
	p("RET")
}

// NEON on 64-bit lanes, by D register number (a Q register qn is d2n
// with qf set). Encodings from the ARMv7-A manual's A1 forms, checked by
// gen_test.go against LLVM's disassembler.

func dreg(d int) (v, hi uint32) { return uint32(d) & 15, uint32(d) >> 4 }

// threeD is the three-register form by D numbers (qf: on the Q
// registers they start): 1111 001U 0 D sz Vn Vd op N Q M o Vm.
func threeD(base uint32, qf bool, d, n, m int) uint32 {
	vd, D := dreg(d)
	vn, N := dreg(n)
	vm, M := dreg(m)
	return base | D<<22 | vn<<16 | vd<<12 | N<<7 | qbit(qf)<<6 | M<<5 | vm
}

// shift64 is the two-register-and-immediate form with L set (64-bit
// lanes): 1111 001U 1 D imm6 Vd op 1 Q M 1 Vm.
func shift64(base uint32, qf bool, d, m int, imm6 uint32) uint32 {
	vd, D := dreg(d)
	vm, M := dreg(m)
	return base | D<<22 | imm6<<16 | vd<<12 | 1<<7 | qbit(qf)<<6 | M<<5 | 1<<4 | vm
}

func qbit(qf bool) uint32 {
	if qf {
		return 1
	}
	return 0
}

// neon64 writes the 64-bit-lane instructions SHA-512 needs.
type neon64 struct{ w *bytes.Buffer }

func (e neon64) op(word uint32, format string, a ...any) {
	fmt.Fprintf(e.w, "\tWORD\t$%#08x\t// %s\n", word, fmt.Sprintf(format, a...))
}

// reg names D register d, or the Q register it starts with qf.
func reg(qf bool, d int) string {
	if qf {
		return fmt.Sprintf("q%d", d/2)
	}
	return fmt.Sprintf("d%d", d)
}

func (e neon64) add(qf bool, d, n, m int) {
	e.op(threeD(0xF2300800, qf, d, n, m), "VADD.I64 %s, %s, %s", reg(qf, d), reg(qf, n), reg(qf, m))
}
func (e neon64) eor(qf bool, d, n, m int) {
	e.op(threeD(0xF3000110, qf, d, n, m), "VEOR %s, %s, %s", reg(qf, d), reg(qf, n), reg(qf, m))
}

// bsl is VBSL Dd, Dn, Dm: where d's bits are set take n's, else m's.
func (e neon64) bsl(d, n, m int) {
	e.op(threeD(0xF3100110, false, d, n, m), "VBSL d%d, d%d, d%d", d, n, m)
}
func (e neon64) mov(d, m int) {
	e.op(threeD(0xF2200110, false, d, m, m), "VORR d%d, d%d, d%d", d, m, m)
}
func (e neon64) shr(qf bool, d, m, n int) {
	e.op(shift64(0xF3800000, qf, d, m, uint32(64-n)), "VSHR.U64 %s, %s, #%d", reg(qf, d), reg(qf, m), n)
}
func (e neon64) sli(qf bool, d, m, n int) {
	e.op(shift64(0xF3800500, qf, d, m, uint32(n)), "VSLI.64 %s, %s, #%d", reg(qf, d), reg(qf, m), n)
}
