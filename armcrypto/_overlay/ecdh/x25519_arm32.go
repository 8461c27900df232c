// bonesync's armcrypto overlay: added to the standard library's
// crypto/ecdh (see armcrypto/main.go). Not compiled on its own.

package ecdh

import "math/bits"

// X25519 kept in one limb form through the whole Montgomery ladder.
//
// Go's ladder works on field.Element (five 51-bit limbs in uint64s):
// on a 32-bit core every addition, subtraction and swap handles 64-bit
// words, and the overlay's 32-bit multiplication (field/fe_arm32.go)
// converts the limbs on every call. Here an element is eight 32-bit
// words, any value below 2^256 congruent to it modulo p = 2^255-19
// ("loosely reduced"): a product of two is 64 UMAAL instructions and a
// fold of the top half times 38 (2^256 = 38 mod p), a sum or difference
// one carry chain and a fold of its carry. Only the result is reduced
// fully, once.
//
// This file is the Go form: the reference the assembly
// (x25519_arm32_arm.s, written by armcrypto/gen) is tested against,
// and what a build without it (purego, GOARM=5) would use. The ladder
// itself is RFC 7748's, section 5.
//
// Constant time: no branch and no memory index depends on a value; the
// ladder's swap is a mask.

// fe8 is an element of GF(2^255-19), least significant word first.
type fe8 [8]uint32

// fold38 adds 38×c (c below 2^26) to the eight words of w, and 38 once
// more if that carries out: the second fold cannot carry, since a sum
// that wrapped is below 38×c.
func fold38(w *fe8, c uint32) {
	var carry uint32
	w[0], carry = bits.Add32(w[0], 38*c, 0)
	for k := 1; k < 8; k++ {
		w[k], carry = bits.Add32(w[k], 0, carry)
	}
	w[0] += 38 * carry
}

// fe8MulGo sets v = a×b: the 512-bit product row by row (each step what
// one UMAAL does), then its top eight words times 38 onto the bottom.
func fe8MulGo(v, a, b *fe8) {
	var t [16]uint32
	for i := 0; i < 8; i++ {
		var c uint32
		for j := 0; j < 8; j++ {
			t[i+j], c = umaal(t[i+j], c, a[j], b[i])
		}
		t[i+8] = c
	}
	var w fe8
	var c uint32
	for k := 0; k < 8; k++ {
		w[k], c = umaal(t[k], c, t[8+k], 38)
	}
	fold38(&w, c)
	*v = w
}

// umaal is the instruction: n×m + hi + lo, which cannot overflow 64 bits;
// it returns the low and the high word.
func umaal(lo, hi, n, m uint32) (uint32, uint32) {
	h, l := bits.Mul32(n, m)
	l, c := bits.Add32(l, lo, 0)
	h += c
	l, c = bits.Add32(l, hi, 0)
	return l, h + c
}

func fe8SquareGo(v, a *fe8) { fe8MulGo(v, a, a) }

// fe8AddGo sets v = a+b.
func fe8AddGo(v, a, b *fe8) {
	var w fe8
	var c uint32
	for k := 0; k < 8; k++ {
		w[k], c = bits.Add32(a[k], b[k], c)
	}
	fold38(&w, c)
	*v = w
}

// fe8SubGo sets v = a-b. A borrow out of the top word means 2^256 was
// added, so 38 is taken away; that may borrow once more, after which
// the bottom word is at least 2^32-38 and the last 38 cannot.
func fe8SubGo(v, a, b *fe8) {
	var w fe8
	var c uint32
	for k := 0; k < 8; k++ {
		w[k], c = bits.Sub32(a[k], b[k], c)
	}
	w[0], c = bits.Sub32(w[0], 38*c, 0)
	for k := 1; k < 8; k++ {
		w[k], c = bits.Sub32(w[k], 0, c)
	}
	w[0] -= 38 * c
	*v = w
}

// a24 is (486662-2)/4, the ladder's constant (RFC 7748).
const a24 = 121665

// fe8MulA24Go sets v = a×121665.
func fe8MulA24Go(v, a *fe8) {
	var w fe8
	var c uint32
	for k := 0; k < 8; k++ {
		w[k], c = umaal(0, c, a[k], a24)
	}
	fold38(&w, c)
	*v = w
}

// fe8Swap swaps a and b if bit is 1, leaves them if 0.
func fe8Swap(a, b *fe8, bit uint32) {
	mask := -bit
	for k := range a {
		t := mask & (a[k] ^ b[k])
		a[k] ^= t
		b[k] ^= t
	}
}

// fe8Invert sets v = z^(p-2) = 1/z (0 for 0): 254 squarings and 11
// multiplications, the chain of z^(2^k - 1) every X25519 code uses.
func fe8Invert(v, z *fe8) {
	var z2, z9, z11, z2_5_0, z2_10_0, z2_20_0, z2_50_0, z2_100_0, t fe8
	fe8Square(&z2, z)          // 2
	fe8SquareN(&t, &z2, 2)     // 8
	fe8Mul(&z9, &t, z)         // 9
	fe8Mul(&z11, &z9, &z2)     // 11
	fe8Square(&t, &z11)        // 22
	fe8Mul(&z2_5_0, &t, &z9)   // 2^5 - 1
	fe8SquareN(&t, &z2_5_0, 5) // 2^10 - 2^5
	fe8Mul(&z2_10_0, &t, &z2_5_0)
	fe8SquareN(&t, &z2_10_0, 10)
	fe8Mul(&z2_20_0, &t, &z2_10_0)
	fe8SquareN(&t, &z2_20_0, 20)
	fe8Mul(&t, &t, &z2_20_0) // 2^40 - 1
	fe8SquareN(&t, &t, 10)
	fe8Mul(&z2_50_0, &t, &z2_10_0)
	fe8SquareN(&t, &z2_50_0, 50)
	fe8Mul(&z2_100_0, &t, &z2_50_0)
	fe8SquareN(&t, &z2_100_0, 100)
	fe8Mul(&t, &t, &z2_100_0) // 2^200 - 1
	fe8SquareN(&t, &t, 50)
	fe8Mul(&t, &t, &z2_50_0) // 2^250 - 1
	fe8SquareN(&t, &t, 5)    // 2^255 - 2^5
	fe8Mul(v, &t, &z11)      // 2^255 - 21 = p - 2
}

// fe8SquareN sets v = a^(2^n), n at least 1.
func fe8SquareN(v, a *fe8, n int) {
	fe8Square(v, a)
	for i := 1; i < n; i++ {
		fe8Square(v, v)
	}
}

// fe8Bytes writes a's value reduced modulo p, little-endian. The top
// bit's weight, 2^255 = 19, goes down first (below 2^255 + 19 then), and
// p is subtracted if a + 19 reaches 2^255, in constant time.
func fe8Bytes(dst []byte, a *fe8) {
	w := *a
	top := w[7] >> 31
	w[7] &^= 1 << 31
	var c uint32
	w[0], c = bits.Add32(w[0], 19*top, 0)
	for k := 1; k < 8; k++ {
		w[k], c = bits.Add32(w[k], 0, c)
	}
	var s fe8 // w + 19
	s[0], c = bits.Add32(w[0], 19, 0)
	for k := 1; k < 8; k++ {
		s[k], c = bits.Add32(w[k], 0, c)
	}
	ge := -(s[7] >> 31) // all ones where w >= p
	s[7] &^= 1 << 31
	for k := range w {
		w[k] = w[k]&^ge | s[k]&ge
		dst[4*k], dst[4*k+1], dst[4*k+2], dst[4*k+3] = byte(w[k]), byte(w[k]>>8), byte(w[k]>>16), byte(w[k]>>24)
	}
}

// fe8SetBytes reads a little-endian u-coordinate, its top bit masked as
// RFC 7748 says (a value from p to 2^255-1 is taken as it is: it is
// congruent to its reduction, and the ladder accepts any value below 2^256).
func fe8SetBytes(v *fe8, b []byte) {
	_ = b[31]
	for k := range v {
		v[k] = uint32(b[4*k]) | uint32(b[4*k+1])<<8 | uint32(b[4*k+2])<<16 | uint32(b[4*k+3])<<24
	}
	v[7] &^= 1 << 31
}

// x25519Ladder sets dst to scalar × point (RFC 7748's X25519 function:
// the scalar clamped, the ladder in fe8 throughout).
func x25519Ladder(dst, scalar, point []byte) {
	var e [32]byte
	copy(e[:], scalar)
	e[0] &= 248
	e[31] &= 127
	e[31] |= 64

	var x1, x2, z2, x3, z3, a, aa, b, bb, ee, c, d, da, cb fe8
	fe8SetBytes(&x1, point)
	x2[0], z3[0] = 1, 1
	x3 = x1
	var swap uint32
	for pos := 254; pos >= 0; pos-- {
		bit := uint32(e[pos/8]>>(pos&7)) & 1
		swap ^= bit
		fe8Swap(&x2, &x3, swap)
		fe8Swap(&z2, &z3, swap)
		swap = bit

		fe8Add(&a, &x2, &z2)
		fe8Square(&aa, &a)
		fe8Sub(&b, &x2, &z2)
		fe8Square(&bb, &b)
		fe8Sub(&ee, &aa, &bb)
		fe8Add(&c, &x3, &z3)
		fe8Sub(&d, &x3, &z3)
		fe8Mul(&da, &d, &a)
		fe8Mul(&cb, &c, &b)
		fe8Add(&x3, &da, &cb)
		fe8Square(&x3, &x3)
		fe8Sub(&z3, &da, &cb)
		fe8Square(&z3, &z3)
		fe8Mul(&z3, &z3, &x1)
		fe8Mul(&x2, &aa, &bb)
		fe8MulA24(&z2, &ee)
		fe8Add(&z2, &z2, &aa)
		fe8Mul(&z2, &z2, &ee)
	}
	fe8Swap(&x2, &x3, swap)
	fe8Swap(&z2, &z3, swap)

	fe8Invert(&z2, &z2)
	fe8Mul(&x2, &x2, &z2)
	fe8Bytes(dst, &x2)
}
