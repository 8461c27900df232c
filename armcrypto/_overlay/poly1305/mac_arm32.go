// bonesync's armcrypto overlay: this file takes the place of mac_noasm.go
// in golang.org/x/crypto/internal/poly1305, both the standard library's
// vendored copy (crypto/tls's ChaCha20-Poly1305) and the module's (x/crypto/ssh's
// chacha20-poly1305@openssh.com), in the board's build (see
// armcrypto/main.go). It is not compiled on its own. The generic code
// in sum_generic.go stays, untouched, as the reference the tests compare
// against.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here.)
//go:build arm || purego || !gc

package poly1305

import "encoding/binary"

// On a 32-bit core sum_generic.go's updateGeneric, with 64-bit limbs and
// bits.Mul64, is half of what ChaCha20-Poly1305 costs. Here the
// accumulator and r are five limbs of 26 bits (radix 2^26), so that each
// of the 25 partial products of a block is one 32×32→64-bit
// multiplication (UMULL). The package's macState (h as three 64-bit
// limbs, r, s) is kept as the rest of the package, and its tests, expect
// it; it is converted to 26-bit limbs and back once per Write, not per
// block.
//
// Where the kernel reports NEON, full blocks go two at a time, one in
// each lane of NEON's D registers (pairs26): the 25 products of both
// blocks are 25 VMULL/VMLAL instructions.
//
// Constant time: the loops run once per 16-byte block, or pair of
// blocks, whatever the values, and which loop runs depends only on the
// length; every step is a multiplication, addition, shift or mask.
//
// Bounds. A limb is below 2^26 between blocks (the top one below 2^27
// when a caller's state reaches 2(2^130-5)-1, as the package's test
// vectors set), below 2^27.1 after a block is added; 5×r_i is below
// 2^28.4; a column of five products is below 2^58; the carry out of the
// top column, times 5, is below 2^35.

type mac struct {
	macState
	buf [TagSize]byte
	n   int // bytes waiting in buf
}

func (m *mac) Write(p []byte) (int, error) {
	nn := len(p)
	if m.n > 0 {
		k := copy(m.buf[m.n:], p)
		m.n += k
		p = p[k:]
		if m.n < TagSize {
			return nn, nil
		}
		blocks26(&m.macState, m.buf[:], 1<<24)
		m.n = 0
	}
	if full := len(p) &^ (TagSize - 1); full > 0 {
		blocks26(&m.macState, p[:full], 1<<24)
		p = p[full:]
	}
	m.n = copy(m.buf[:], p)
	return nn, nil
}

func (m *mac) Sum(out *[TagSize]byte) {
	st := m.macState
	if m.n > 0 {
		// The last, short block: a 1 byte after it, and no 2^128 bit.
		var last [TagSize]byte
		copy(last[:], m.buf[:m.n])
		last[m.n] = 1
		blocks26(&st, last[:], 0)
	}
	finalize(out, &st.h, &st.s)
}

const m26 = 1<<26 - 1

// poly26 is the state of blocks in 26-bit limbs: the accumulator h, r,
// and 5×r1..5×r4 (2^130 = 5 mod p: a product that reaches past the top
// limb comes back in at the bottom times 5).
type poly26 struct {
	h [5]uint32
	r [5]uint32
	s [4]uint32
}

// blocks26 adds each 16-byte block of msg, with hibit (2^128 in the top
// limb's place, or 0 for a padded last block), to the accumulator and
// multiplies by r, modulo 2^130-5: the loop is loop26 (the assembly on
// arm, loop26Go elsewhere), the conversions are here.
func blocks26(st *macState, msg []byte, hibit uint32) {
	var p poly26
	h0, h1, h2 := st.h[0], st.h[1], st.h[2]
	p.h[0] = uint32(h0) & m26
	p.h[1] = uint32(h0>>26) & m26
	p.h[2] = uint32(h0>>52|h1<<12) & m26
	p.h[3] = uint32(h1>>14) & m26
	p.h[4] = uint32(h1>>40 | h2<<24)
	p.r[0] = uint32(st.r[0]) & m26
	p.r[1] = uint32(st.r[0]>>26) & m26
	p.r[2] = uint32(st.r[0]>>52|st.r[1]<<12) & m26
	p.r[3] = uint32(st.r[1]>>14) & m26
	p.r[4] = uint32(st.r[1]>>40) & m26
	for i := range p.s {
		p.s[i] = 5 * p.r[i+1]
	}

	if useNEON && hibit != 0 && len(msg) >= 4*TagSize {
		msg = pairs26(&p, msg, hibit)
	}
	loop26(&p, msg, hibit)

	// Carry fully, so that the limbs do not overlap, and pack back.
	a0, a1, a2, a3, a4 := p.h[0], p.h[1], p.h[2], p.h[3], p.h[4]
	a2 += a1 >> 26
	a1 &= m26
	a3 += a2 >> 26
	a2 &= m26
	a4 += a3 >> 26
	a3 &= m26
	st.h[0] = uint64(a0) | uint64(a1)<<26 | uint64(a2)<<52
	st.h[1] = uint64(a2)>>12 | uint64(a3)<<14 | uint64(a4)<<40
	st.h[2] = uint64(a4) >> 24
}

// poly26x2 is two accumulators in the two lanes of NEON's D registers:
// h[i] is limb i of lane 0 and lane 1, r[0..4] the limbs of each lane's
// multiplier and r[5..8] those times 5.
type poly26x2 struct {
	h [5][2]uint32
	r [9][2]uint32
}

// pairs26 takes the full blocks of msg two at a time, one in each lane,
// and returns what is left (one block at most). With n blocks m1..mn (n
// even) the MAC is (h + m1)·r^n + m2·r^(n-1) + ... + mn·r: lane 0 runs
// h + m1, m3, ... and lane 1 m2, m4, ..., each multiplying by r^2 per
// pair, but for the last pair, where lane 1 multiplies by r; their sum
// is the accumulator.
func pairs26(p *poly26, msg []byte, hibit uint32) []byte {
	var x poly26x2
	r2 := mul26(p.r, p.r, p.s)
	for i := range 5 {
		x.h[i] = [2]uint32{p.h[i], 0}
		x.r[i] = [2]uint32{r2[i], r2[i]}
	}
	for i := range 4 {
		x.r[5+i] = [2]uint32{5 * r2[i+1], 5 * r2[i+1]}
	}
	n := len(msg) &^ (2*TagSize - 1)
	loop26x2(&x, msg[:n-2*TagSize], hibit)
	for i := range 5 {
		x.r[i][1] = p.r[i]
	}
	for i := range 4 {
		x.r[5+i][1] = p.s[i]
	}
	loop26x2(&x, msg[n-2*TagSize:n], hibit)
	// The lanes' sum, carried back below 2^26 a limb (2^26 + 2^6 for
	// limb 1), as loop26 leaves its accumulator.
	var h [5]uint32
	for i := range h {
		h[i] = x.h[i][0] + x.h[i][1]
	}
	for i := 0; i < 4; i++ {
		h[i+1] += h[i] >> 26
		h[i] &= m26
	}
	h[0] += 5 * (h[4] >> 26)
	h[4] &= m26
	h[1] += h[0] >> 26
	h[0] &= m26
	p.h = h
	return msg[n:]
}

// mul26 is a×r modulo 2^130-5 (s is 5×r1..5×r4), its limbs carried as
// loop26Go carries them.
func mul26(a, r [5]uint32, s [4]uint32) [5]uint32 {
	d0 := mul(a[0], r[0]) + mul(a[1], s[3]) + mul(a[2], s[2]) + mul(a[3], s[1]) + mul(a[4], s[0])
	d1 := mul(a[0], r[1]) + mul(a[1], r[0]) + mul(a[2], s[3]) + mul(a[3], s[2]) + mul(a[4], s[1])
	d2 := mul(a[0], r[2]) + mul(a[1], r[1]) + mul(a[2], r[0]) + mul(a[3], s[3]) + mul(a[4], s[2])
	d3 := mul(a[0], r[3]) + mul(a[1], r[2]) + mul(a[2], r[1]) + mul(a[3], r[0]) + mul(a[4], s[3])
	d4 := mul(a[0], r[4]) + mul(a[1], r[3]) + mul(a[2], r[2]) + mul(a[3], r[1]) + mul(a[4], r[0])
	d1 += d0 >> 26
	d2 += d1 >> 26
	d3 += d2 >> 26
	d4 += d3 >> 26
	t := d0&m26 + (d4>>26)*5
	return [5]uint32{uint32(t) & m26, uint32(d1)&m26 + uint32(t>>26), uint32(d2) & m26, uint32(d3) & m26, uint32(d4) & m26}
}

// loop26x2Go is the two-lane loop in Go: the reference for the NEON
// assembly (mac_arm32_arm.s), and what a build without it runs.
func loop26x2Go(x *poly26x2, msg []byte, hibit uint32) {
	for ; len(msg) >= 2*TagSize; msg = msg[2*TagSize:] {
		for l := range 2 {
			b := msg[TagSize*l:]
			var a, r [5]uint32
			var s [4]uint32
			for i := range a {
				a[i] = x.h[i][l]
				r[i] = x.r[i][l]
			}
			for i := range s {
				s[i] = x.r[5+i][l]
			}
			a[0] += binary.LittleEndian.Uint32(b[0:]) & m26
			a[1] += binary.LittleEndian.Uint32(b[3:]) >> 2 & m26
			a[2] += binary.LittleEndian.Uint32(b[6:]) >> 4 & m26
			a[3] += binary.LittleEndian.Uint32(b[9:]) >> 6 & m26
			a[4] += binary.LittleEndian.Uint32(b[12:])>>8 | hibit
			a = mul26(a, r, s)
			for i := range a {
				x.h[i][l] = a[i]
			}
		}
	}
}

// loop26Go is the block loop in Go: the reference for the assembly
// (mac_arm32_arm.s, written by armcrypto/gen), and what a purego build
// runs.
func loop26Go(p *poly26, msg []byte, hibit uint32) {
	a0, a1, a2, a3, a4 := p.h[0], p.h[1], p.h[2], p.h[3], p.h[4]
	r0, r1, r2, r3, r4 := p.r[0], p.r[1], p.r[2], p.r[3], p.r[4]
	s1, s2, s3, s4 := p.s[0], p.s[1], p.s[2], p.s[3]
	for ; len(msg) >= TagSize; msg = msg[TagSize:] {
		a0 += binary.LittleEndian.Uint32(msg[0:]) & m26
		a1 += binary.LittleEndian.Uint32(msg[3:]) >> 2 & m26
		a2 += binary.LittleEndian.Uint32(msg[6:]) >> 4 & m26
		a3 += binary.LittleEndian.Uint32(msg[9:]) >> 6 & m26
		a4 += binary.LittleEndian.Uint32(msg[12:])>>8 | hibit

		h := mul26([5]uint32{a0, a1, a2, a3, a4}, [5]uint32{r0, r1, r2, r3, r4}, [4]uint32{s1, s2, s3, s4})
		a0, a1, a2, a3, a4 = h[0], h[1], h[2], h[3], h[4]
	}
	p.h = [5]uint32{a0, a1, a2, a3, a4}
}

// mul is one UMULL.
func mul(a, b uint32) uint64 { return uint64(a) * uint64(b) }
