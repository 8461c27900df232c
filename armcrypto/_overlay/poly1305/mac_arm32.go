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
// Constant time: the loop runs once per 16-byte block whatever the
// values; every step is a multiplication, addition, shift or mask.
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

		d0 := mul(a0, r0) + mul(a1, s4) + mul(a2, s3) + mul(a3, s2) + mul(a4, s1)
		d1 := mul(a0, r1) + mul(a1, r0) + mul(a2, s4) + mul(a3, s3) + mul(a4, s2)
		d2 := mul(a0, r2) + mul(a1, r1) + mul(a2, r0) + mul(a3, s4) + mul(a4, s3)
		d3 := mul(a0, r3) + mul(a1, r2) + mul(a2, r1) + mul(a3, r0) + mul(a4, s4)
		d4 := mul(a0, r4) + mul(a1, r3) + mul(a2, r2) + mul(a3, r1) + mul(a4, r0)

		d1 += d0 >> 26
		a0 = uint32(d0) & m26
		d2 += d1 >> 26
		a1 = uint32(d1) & m26
		d3 += d2 >> 26
		a2 = uint32(d2) & m26
		d4 += d3 >> 26
		a3 = uint32(d3) & m26
		t := uint64(a0) + (d4>>26)*5
		a4 = uint32(d4) & m26
		a0 = uint32(t) & m26
		a1 += uint32(t >> 26)
	}
	p.h = [5]uint32{a0, a1, a2, a3, a4}
}

// mul is one UMULL.
func mul(a, b uint32) uint64 { return uint64(a) * uint64(b) }
