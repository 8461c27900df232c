// bonesync's armcrypto overlay: this file takes the place of the standard
// library's crypto/internal/fips140/edwards25519/field/fe_amd64_noasm.go
// in the board's build (see armcrypto/main.go). It is not compiled on
// its own.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here.)
//go:build !amd64 || purego

package field

// On a 32-bit core every bits.Mul64 of feMulGeneric (five 51-bit limbs)
// is four 32-bit multiplications and a carry chain, and X25519 spends
// most of a TLS handshake there. Here the five limbs are split into ten
// of 26 and 25 bits (radix 2^25.5), so that each partial product is one
// 32×32→64-bit multiplication (UMULL), summed in uint64 columns, carried
// and packed back into the standard library's Element. The splitting and
// packing are a few shifts; Add, Subtract, Swap and the rest of the
// package keep working on Element unchanged.
//
// This is the Go form, the reference for the assembly (fe_arm32_arm.s,
// written by armcrypto/gen: the same columns with one UMLAL per product,
// where Go's compiler spills the 64-bit sums) and what a purego build
// uses (fe_arm32_noasm.go).
//
// Constant time: no branch and no memory index depends on the values;
// every step is a multiplication, addition, shift or mask of fixed count.
//
// Bounds. Element's limbs are below 2^52, so after splitting every limb
// is below 2^26 (an odd limb may reach 2^26-1 rather than 2^25). The
// largest operand of a product is 38×(2^26) < 2^31.3, which fits a
// uint32; the largest column is at most ten products of 2^27 × 2^30.3
// (or 2^31.3 × 2^26), below 2^61, which fits a uint64. The carry out of
// the top column is below 2^36, times 19 below 2^41. The packed limbs are
// below 2^51 + 2^42, within Element's invariant.

const (
	mask25 = 1<<25 - 1
	mask26 = 1<<26 - 1
)

// limbs32 splits a into ten limbs, even ones 26 bits wide and odd ones
// the rest of the 51-bit limb.
func limbs32(a *Element) (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 uint32) {
	return uint32(a.l0) & mask26, uint32(a.l0 >> 26),
		uint32(a.l1) & mask26, uint32(a.l1 >> 26),
		uint32(a.l2) & mask26, uint32(a.l2 >> 26),
		uint32(a.l3) & mask26, uint32(a.l3 >> 26),
		uint32(a.l4) & mask26, uint32(a.l4 >> 26)
}

// m is one UMULL.
func m(a, b uint32) uint64 { return uint64(a) * uint64(b) }

// pack carries the ten columns down to 26/25 bits, folds the top carry
// back into the bottom times 19 (2^255 = 19 mod p) and packs pairs of
// limbs into Element's 51-bit limbs.
func pack(v *Element, h0, h1, h2, h3, h4, h5, h6, h7, h8, h9 uint64) {
	h1 += h0 >> 26
	h0 &= mask26
	h2 += h1 >> 25
	h1 &= mask25
	h3 += h2 >> 26
	h2 &= mask26
	h4 += h3 >> 25
	h3 &= mask25
	h5 += h4 >> 26
	h4 &= mask26
	h6 += h5 >> 25
	h5 &= mask25
	h7 += h6 >> 26
	h6 &= mask26
	h8 += h7 >> 25
	h7 &= mask25
	h9 += h8 >> 26
	h8 &= mask26
	h0 += (h9 >> 25) * 19
	h9 &= mask25
	h1 += h0 >> 26
	h0 &= mask26

	v.l0 = h0 | h1<<26
	v.l1 = h2 | h3<<26
	v.l2 = h4 | h5<<26
	v.l3 = h6 | h7<<26
	v.l4 = h8 | h9<<26
}

// feMul32 sets v = x × y. Column k gathers the products f_i×g_j with
// i+j = k, and 19×f_i×g_j with i+j = k+10; a product of two odd limbs
// counts twice, because two half bits of radix make one.
func feMul32(v, x, y *Element) {
	f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 := limbs32(x)
	g0, g1, g2, g3, g4, g5, g6, g7, g8, g9 := limbs32(y)

	g1_19, g2_19, g3_19, g4_19, g5_19 := 19*g1, 19*g2, 19*g3, 19*g4, 19*g5
	g6_19, g7_19, g8_19, g9_19 := 19*g6, 19*g7, 19*g8, 19*g9
	f1_2, f3_2, f5_2, f7_2, f9_2 := 2*f1, 2*f3, 2*f5, 2*f7, 2*f9

	h0 := m(f0, g0) + m(f1_2, g9_19) + m(f2, g8_19) + m(f3_2, g7_19) + m(f4, g6_19) +
		m(f5_2, g5_19) + m(f6, g4_19) + m(f7_2, g3_19) + m(f8, g2_19) + m(f9_2, g1_19)
	h1 := m(f0, g1) + m(f1, g0) + m(f2, g9_19) + m(f3, g8_19) + m(f4, g7_19) +
		m(f5, g6_19) + m(f6, g5_19) + m(f7, g4_19) + m(f8, g3_19) + m(f9, g2_19)
	h2 := m(f0, g2) + m(f1_2, g1) + m(f2, g0) + m(f3_2, g9_19) + m(f4, g8_19) +
		m(f5_2, g7_19) + m(f6, g6_19) + m(f7_2, g5_19) + m(f8, g4_19) + m(f9_2, g3_19)
	h3 := m(f0, g3) + m(f1, g2) + m(f2, g1) + m(f3, g0) + m(f4, g9_19) +
		m(f5, g8_19) + m(f6, g7_19) + m(f7, g6_19) + m(f8, g5_19) + m(f9, g4_19)
	h4 := m(f0, g4) + m(f1_2, g3) + m(f2, g2) + m(f3_2, g1) + m(f4, g0) +
		m(f5_2, g9_19) + m(f6, g8_19) + m(f7_2, g7_19) + m(f8, g6_19) + m(f9_2, g5_19)
	h5 := m(f0, g5) + m(f1, g4) + m(f2, g3) + m(f3, g2) + m(f4, g1) +
		m(f5, g0) + m(f6, g9_19) + m(f7, g8_19) + m(f8, g7_19) + m(f9, g6_19)
	h6 := m(f0, g6) + m(f1_2, g5) + m(f2, g4) + m(f3_2, g3) + m(f4, g2) +
		m(f5_2, g1) + m(f6, g0) + m(f7_2, g9_19) + m(f8, g8_19) + m(f9_2, g7_19)
	h7 := m(f0, g7) + m(f1, g6) + m(f2, g5) + m(f3, g4) + m(f4, g3) +
		m(f5, g2) + m(f6, g1) + m(f7, g0) + m(f8, g9_19) + m(f9, g8_19)
	h8 := m(f0, g8) + m(f1_2, g7) + m(f2, g6) + m(f3_2, g5) + m(f4, g4) +
		m(f5_2, g3) + m(f6, g2) + m(f7_2, g1) + m(f8, g0) + m(f9_2, g9_19)
	h9 := m(f0, g9) + m(f1, g8) + m(f2, g7) + m(f3, g6) + m(f4, g5) +
		m(f5, g4) + m(f6, g3) + m(f7, g2) + m(f8, g1) + m(f9, g0)

	pack(v, h0, h1, h2, h3, h4, h5, h6, h7, h8, h9)
}

// feSquare32 sets v = x². It is feMul32 with x for y, each pair of
// distinct limbs multiplied once and doubled.
func feSquare32(v, x *Element) {
	f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 := limbs32(x)

	f0_2, f1_2, f2_2, f3_2, f4_2 := 2*f0, 2*f1, 2*f2, 2*f3, 2*f4
	f5_2, f6_2, f7_2 := 2*f5, 2*f6, 2*f7
	f5_38, f6_19, f7_38, f8_19, f9_38 := 38*f5, 19*f6, 38*f7, 19*f8, 38*f9

	h0 := m(f0, f0) + m(f1_2, f9_38) + m(f2_2, f8_19) + m(f3_2, f7_38) + m(f4_2, f6_19) + m(f5, f5_38)
	h1 := m(f0_2, f1) + m(f2, f9_38) + m(f3_2, f8_19) + m(f4, f7_38) + m(f5_2, f6_19)
	h2 := m(f0_2, f2) + m(f1_2, f1) + m(f3_2, f9_38) + m(f4_2, f8_19) + m(f5_2, f7_38) + m(f6, f6_19)
	h3 := m(f0_2, f3) + m(f1_2, f2) + m(f4, f9_38) + m(f5_2, f8_19) + m(f6, f7_38)
	h4 := m(f0_2, f4) + m(f1_2, f3_2) + m(f2, f2) + m(f5_2, f9_38) + m(f6_2, f8_19) + m(f7, f7_38)
	h5 := m(f0_2, f5) + m(f1_2, f4) + m(f2_2, f3) + m(f6, f9_38) + m(f7_2, f8_19)
	h6 := m(f0_2, f6) + m(f1_2, f5_2) + m(f2_2, f4) + m(f3_2, f3) + m(f7_2, f9_38) + m(f8, f8_19)
	h7 := m(f0_2, f7) + m(f1_2, f6) + m(f2_2, f5) + m(f3_2, f4) + m(f8, f9_38)
	h8 := m(f0_2, f8) + m(f1_2, f7_2) + m(f2_2, f6) + m(f3_2, f5_2) + m(f4, f4) + m(f9, f9_38)
	h9 := m(f0_2, f9) + m(f1_2, f8) + m(f2_2, f7) + m(f3_2, f6) + m(f4_2, f5)

	pack(v, h0, h1, h2, h3, h4, h5, h6, h7, h8, h9)
}
