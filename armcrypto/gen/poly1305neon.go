package main

import (
	"bytes"
	"fmt"
)

// Poly1305 in NEON: two blocks at a time, one in each 32-bit lane of a D
// register (mac_arm32.go's pairs26 and loop26x2Go). Encodings from the
// ARMv7-A manual's A1 forms, checked by gen_test.go against LLVM's
// disassembler; registers by D number.

// long is the three-register "long" form (VMULL, VMLAL):
// 1111 001U 1 D sz Vn Vd op 0 N 0 M 0 Vm, Qd given as its first D.
func long(base uint32, d, n, m int) uint32 {
	vd, D := dreg(d)
	vn, N := dreg(n)
	vm, M := dreg(m)
	return base | D<<22 | vn<<16 | vd<<12 | N<<7 | M<<5 | vm
}

// shift32 is the two-register-and-immediate form on D registers with
// 32-bit lanes: 1111 001U 1 D imm6 Vd op 0 0 M 1 Vm.
func shift32(base uint32, d, m int, imm6 uint32) uint32 {
	vd, D := dreg(d)
	vm, M := dreg(m)
	return base | D<<22 | imm6<<16 | vd<<12 | M<<5 | 1<<4 | vm
}

type neonPoly struct{ neon64 }

func (e neonPoly) mull(qd, n, m int) {
	e.op(long(0xF3A00C00, qd, n, m), "VMULL.U32 q%d, d%d, d%d", qd/2, n, m)
}
func (e neonPoly) mlal(qd, n, m int) {
	e.op(long(0xF3A00800, qd, n, m), "VMLAL.U32 q%d, d%d, d%d", qd/2, n, m)
}
func (e neonPoly) movn(d, qm int) {
	vd, D := dreg(d)
	vm, M := dreg(qm)
	e.op(0xF3BA0200|D<<22|vd<<12|M<<5|vm, "VMOVN.I64 d%d, q%d", d, qm/2)
}

// sra is VSRA.U64 Qd, Qm, #n (by D numbers): Qd += Qm >> n in each
// 64-bit lane.
func (e neonPoly) sra(qd, qm, n int) {
	e.op(shift64(0xF3800100, true, qd, qm, uint32(64-n)), "VSRA.U64 q%d, q%d, #%d", qd/2, qm/2, n)
}

// shrn is VSHRN.I64 Dd, Qm, #n: each 64-bit lane shifted right and
// narrowed to 32 bits.
func (e neonPoly) shrn(d, qm, n int) {
	vd, D := dreg(d)
	vm, M := dreg(qm)
	e.op(0xF2800810|D<<22|uint32(64-n)<<16|vd<<12|M<<5|vm, "VSHRN.I64 d%d, q%d, #%d", d, qm/2, n)
}

func (e neonPoly) and(d, n, m int) {
	e.op(threeD(0xF2000110, false, d, n, m), "VAND d%d, d%d, d%d", d, n, m)
}
func (e neonPoly) orr(d, n, m int) {
	e.op(threeD(0xF2200110, false, d, n, m), "VORR d%d, d%d, d%d", d, n, m)
}
func (e neonPoly) add32(d, n, m int) {
	e.op(threeD(0xF2200800, false, d, n, m), "VADD.I32 d%d, d%d, d%d", d, n, m)
}
func (e neonPoly) shr32(d, m, n int) {
	e.op(shift32(0xF3800000, d, m, uint32(64-n)), "VSHR.U32 d%d, d%d, #%d", d, m, n)
}
func (e neonPoly) sli32(d, m, n int) {
	e.op(shift32(0xF3800500, d, m, uint32(32+n)), "VSLI.32 d%d, d%d, #%d", d, m, n)
}
func (e neonPoly) shl32(d, m, n int) {
	e.op(shift32(0xF2800500, d, m, uint32(32+n)), "VSHL.I32 d%d, d%d, #%d", d, m, n)
}
func (e neonPoly) ld32(first, n, rn int, wb bool) {
	e.op(vldst(true, first, n, 32, rn, wb), "VLD1.32 %s, [R%d]%s", dlist(first, n), rn, map[bool]string{true: "!"}[wb])
}
func (e neonPoly) st32(first, n, rn int) {
	e.op(vldst(false, first, n, 32, rn, false), "VST1.32 %s, [R%d]", dlist(first, n), rn)
}
func (e neonPoly) dup32(d, rt int) {
	vd, D := dreg(d)
	e.op(0xEE800B10|vd<<16|uint32(rt)<<12|D<<7, "VDUP.32 d%d, R%d", d, rt)
}

func dlist(first, n int) string {
	if n == 1 {
		return fmt.Sprintf("{d%d}", first)
	}
	return fmt.Sprintf("{d%d-d%d}", first, first+n-1)
}

// emitPolyNEON writes func loop26x2(x *poly26x2, msg []byte, hibit
// uint32): loop26x2Go, each 32-byte pair of blocks one VLD1 and a VTRN
// (lane 0 the first block, lane 1 the second).
//
// D registers: d0-d4 the accumulator's limbs, d5-d9 r, d10-d13 5×r1..5×r4
// (poly26x2 as it lies in memory); q7-q11 (d14-d23) the five columns, in
// 64-bit lanes, and before them the block's limbs; q12, q13 the message;
// d30 the limb mask, d31 hibit. R0 x, R1 the message, R2
// its end, R3 and R12 scratch.
func emitPolyNEON(w *bytes.Buffer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, "\t"+f+"\n", a...) }
	e := neonPoly{neon64{w}}
	fmt.Fprintln(w, "// func loop26x2(x *poly26x2, msg []byte, hibit uint32)")
	fmt.Fprintln(w, "TEXT ·loop26x2(SB), NOSPLIT, $0-20")
	p("MOVW\tx+0(FP), R0")
	p("MOVW\tmsg_base+4(FP), R1")
	p("MOVW\tmsg_len+8(FP), R2")
	p("BIC\t$31, R2, R2")
	p("ADD\tR1, R2, R2")
	p("MOVW\t$0x3ffffff, R3")
	e.dup32(30, 3)
	p("MOVW\thibit+16(FP), R3")
	e.dup32(31, 3)
	e.ld32(0, 4, 0, false)
	p("ADD\t$32, R0, R12")
	e.ld32(4, 1, 12, true)
	e.ld32(5, 4, 12, true)
	e.ld32(9, 4, 12, true)
	e.ld32(13, 1, 12, false)
	fmt.Fprintln(w, "loop:")
	p("CMP\tR1, R2")
	p("B.EQ\tdone")
	p("// the two blocks' words: d24 w0, d26 w1, d25 w2, d27 w3 of each")
	e.ld32(24, 4, 1, true)
	e.op(0xF3BA0080|1<<22|8<<12|1<<6|1<<5|10, "VTRN.32 q12, q13")
	p("// h += the blocks, in 26-bit limbs")
	e.and(14, 24, 30)
	e.shr32(15, 24, 26)
	e.sli32(15, 26, 6)
	e.and(15, 15, 30)
	e.shr32(16, 26, 20)
	e.sli32(16, 25, 12)
	e.and(16, 16, 30)
	e.shr32(17, 25, 14)
	e.sli32(17, 27, 18)
	e.and(17, 17, 30)
	e.shr32(18, 27, 8)
	e.orr(18, 18, 31)
	for i := 0; i < 5; i++ {
		e.add32(i, i, 14+i)
	}
	// Column k: h_i × r_(k-i), or h_i × 5r_(k-i+5) past the top.
	for k := 0; k < 5; k++ {
		p("// column %d", k)
		for i := 0; i < 5; i++ {
			m := 5 + k - i // r_(k-i)
			if k < i {
				m = 10 + (k - i + 5 - 1) // 5×r_(k-i+5)
			}
			if i == 0 {
				e.mull(14+2*k, i, m)
			} else {
				e.mlal(14+2*k, i, m)
			}
		}
	}
	p("// carry: each column's bits past 26 into the next")
	for k := 0; k < 4; k++ {
		e.sra(16+2*k, 14+2*k, 26)
		e.movn(k, 14+2*k)
		e.and(k, k, 30)
	}
	p("// the top's carry × 5 into limb 0, limb 0's into limb 1")
	e.shrn(14, 22, 26) // below 2^30: the top column has no 5× operand
	e.movn(4, 22)
	e.and(4, 4, 30)
	e.shl32(15, 14, 2)
	e.add32(14, 14, 15)
	e.add32(0, 0, 14)
	e.shr32(14, 0, 26)
	e.add32(1, 1, 14)
	e.and(0, 0, 30)
	p("B\tloop")
	fmt.Fprintln(w, "done:")
	e.st32(0, 4, 0)
	p("ADD\t$32, R0, R12")
	e.st32(4, 1, 12)
	p("RET")
	fmt.Fprintln(w)
}
