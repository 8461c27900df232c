// bonesync's armcrypto overlay: this file takes the place of the standard
// library's crypto/internal/fips140/nistec/fiat/p256_fiat64.go in the
// board's build (see armcrypto/main.go). It is not compiled on its own.

package fiat

// P-256's field for a 32-bit core. fiat-crypto's generated code works in
// four 64-bit limbs, and on the Cortex-A8 every bits.Mul64 in its
// Montgomery multiplication is emulated: about 1,600 instructions per
// multiplication. Here the same functions, on the same types (the same
// Montgomery domain, R = 2^256, the same [4]uint64 little-endian values,
// always fully reduced below p), work in eight 32-bit words: the
// multiplication is word-by-word Montgomery (CIOS) with p's words folded
// in as additions, in assembly on arm (p256_fiat32_arm.s, written by
// armcrypto/gen), in Go (p256MontMulGo) elsewhere and as its reference.
//
// Constant time: no branch and no memory index depends on the values;
// the final subtraction of p is a masked select.

type p256Uint1 uint64
type p256Int1 int64
type p256MontgomeryDomainFieldElement [4]uint64
type p256NonMontgomeryDomainFieldElement [4]uint64

// p256P is p in 32-bit words, least significant first.
var p256P = [8]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0, 0, 0, 1, 0xffffffff}

// p256RR is R² mod p, to enter the Montgomery domain.
var p256RR = [4]uint64{0x0000000000000003, 0xfffffffbffffffff, 0xfffffffffffffffe, 0x00000004fffffffd}

func words(x *[4]uint64) (w [8]uint32) {
	for i, l := range x {
		w[2*i], w[2*i+1] = uint32(l), uint32(l>>32)
	}
	return w
}

func unwords(out *[4]uint64, w *[8]uint32) {
	for i := range out {
		out[i] = uint64(w[2*i]) | uint64(w[2*i+1])<<32
	}
}

// reduceOnce returns t - p if t (with top, its 257th bit) is at least p,
// else t.
func reduceOnce(t *[8]uint32, top uint32) [8]uint32 {
	var d [8]uint32
	var borrow uint64
	for i := range d {
		v := uint64(t[i]) - uint64(p256P[i]) - borrow
		d[i], borrow = uint32(v), (v>>32)&1
	}
	// t < p exactly when the subtraction borrows past the top bit.
	keep := -uint32((uint64(top) - borrow) >> 63)
	for i := range d {
		d[i] = t[i]&keep | d[i]&^keep
	}
	return d
}

// p256MontMulGo sets out = a × b × 2^-256 mod p, for a and b below p.
func p256MontMulGo(out, a, b *[4]uint64) {
	x, y := words(a), words(b)
	var t [9]uint32
	var t9 uint32
	for i := 0; i < 8; i++ {
		var c uint64
		for j := 0; j < 8; j++ {
			v := uint64(t[j]) + uint64(x[j])*uint64(y[i]) + c
			t[j], c = uint32(v), v>>32
		}
		v := uint64(t[8]) + c
		t[8], t9 = uint32(v), uint32(v>>32)
		// m = t[0] (-p^-1 = 1 mod 2^32); t + m×p is divisible by 2^32:
		// m×p = m×2^256 - m×2^224 + m×2^192 + m×2^96 - m, so after
		// the shift m goes in at words 2 and 5, and m×(2^32-1) at 6.
		m := uint64(t[0])
		mm := m * 0xffffffff
		var n [9]uint32
		copy(n[:], t[1:])
		n[8] = t9
		add := [9]uint64{0, 0, m, 0, 0, m, mm & 0xffffffff, mm >> 32, 0}
		c = 0
		for k := 2; k < 9; k++ {
			v := uint64(n[k]) + add[k] + c
			n[k], c = uint32(v), v>>32
		}
		t = n
	}
	var low [8]uint32
	copy(low[:], t[:8])
	r := reduceOnce(&low, t[8])
	unwords(out, &r)
}

func p256Mul(out1 *p256MontgomeryDomainFieldElement, arg1 *p256MontgomeryDomainFieldElement, arg2 *p256MontgomeryDomainFieldElement) {
	p256MontMul((*[4]uint64)(out1), (*[4]uint64)(arg1), (*[4]uint64)(arg2))
}

func p256Square(out1 *p256MontgomeryDomainFieldElement, arg1 *p256MontgomeryDomainFieldElement) {
	p256MontMul((*[4]uint64)(out1), (*[4]uint64)(arg1), (*[4]uint64)(arg1))
}

// p256AddGo is p256Add in Go (the assembly's reference, and purego's).
func p256AddGo(out1 *p256MontgomeryDomainFieldElement, arg1 *p256MontgomeryDomainFieldElement, arg2 *p256MontgomeryDomainFieldElement) {
	x, y := words((*[4]uint64)(arg1)), words((*[4]uint64)(arg2))
	var s [8]uint32
	var c uint64
	for i := range s {
		v := uint64(x[i]) + uint64(y[i]) + c
		s[i], c = uint32(v), v>>32
	}
	r := reduceOnce(&s, uint32(c))
	unwords((*[4]uint64)(out1), &r)
}

// p256SubGo is p256Sub in Go.
func p256SubGo(out1 *p256MontgomeryDomainFieldElement, arg1 *p256MontgomeryDomainFieldElement, arg2 *p256MontgomeryDomainFieldElement) {
	x, y := words((*[4]uint64)(arg1)), words((*[4]uint64)(arg2))
	var d [8]uint32
	var borrow uint64
	for i := range d {
		v := uint64(x[i]) - uint64(y[i]) - borrow
		d[i], borrow = uint32(v), (v>>32)&1
	}
	// A borrow means x < y: add p back, masked.
	mask := -uint32(borrow)
	var c uint64
	for i := range d {
		v := uint64(d[i]) + uint64(p256P[i]&mask) + c
		d[i], c = uint32(v), v>>32
	}
	unwords((*[4]uint64)(out1), &d)
}

func p256SetOne(out1 *p256MontgomeryDomainFieldElement) {
	*out1 = p256MontgomeryDomainFieldElement{0x0000000000000001, 0xffffffff00000000, 0xffffffffffffffff, 0x00000000fffffffe}
}

func p256FromMontgomery(out1 *p256NonMontgomeryDomainFieldElement, arg1 *p256MontgomeryDomainFieldElement) {
	one := [4]uint64{1}
	p256MontMul((*[4]uint64)(out1), (*[4]uint64)(arg1), &one)
}

func p256ToMontgomery(out1 *p256MontgomeryDomainFieldElement, arg1 *p256NonMontgomeryDomainFieldElement) {
	p256MontMul((*[4]uint64)(out1), (*[4]uint64)(arg1), &p256RR)
}

// p256Selectznz sets out1 to arg2 if arg1 is 0, else to arg3.
func p256Selectznz(out1 *[4]uint64, arg1 p256Uint1, arg2 *[4]uint64, arg3 *[4]uint64) {
	mask := -uint64(arg1 & 1)
	out1[0] = arg2[0]&^mask | arg3[0]&mask
	out1[1] = arg2[1]&^mask | arg3[1]&mask
	out1[2] = arg2[2]&^mask | arg3[2]&mask
	out1[3] = arg2[3]&^mask | arg3[3]&mask
}

// p256ToBytes writes arg1 as 32 little-endian bytes.
func p256ToBytes(out1 *[32]uint8, arg1 *[4]uint64) {
	for i, l := range arg1 {
		for j := 0; j < 8; j++ {
			out1[8*i+j] = uint8(l >> (8 * j))
		}
	}
}

// p256FromBytes reads 32 little-endian bytes.
func p256FromBytes(out1 *[4]uint64, arg1 *[32]uint8) {
	for i := range out1 {
		var l uint64
		for j := 7; j >= 0; j-- {
			l = l<<8 | uint64(arg1[8*i+j])
		}
		out1[i] = l
	}
}
