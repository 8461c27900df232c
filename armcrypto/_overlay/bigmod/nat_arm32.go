// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod (see armcrypto/main.go). Not compiled
// on its own.

package bigmod

import "math/bits"

// RSA's big-number core on the board. Go's montgomeryMul (nat.go, which
// the overlay takes with that function renamed montgomeryMulGeneric)
// makes each row of a Montgomery multiplication two passes of
// addMulVVW over the running sum T, each word a MULLU and two carry
// chains (nat_arm.s: nine instructions a word). For the RSA sizes (1024,
// 1536 and 2048-bit moduli, one half of a 2048, 3072 or 4096-bit key's
// CRT) the rows here are one pass: each word of T is loaded once, takes
// a[j]×b[i] and m[j]×Y with two UMAALs (which add a carry and the word
// without a chain) and is stored once: six instructions a word, in
// montMulFused (nat_arm32_arm.s, written by armcrypto/gen, one fully
// unrolled copy per size).
//
// The algorithm is the generic code's (word-by-word Montgomery, the
// final subtraction of m in constant time, by maybeSubtractModulus);
// other sizes, and builds without the assembly, take the generic code.

func (x *Nat) montgomeryMul(a *Nat, b *Nat, m *Modulus) *Nat {
	n := len(m.nat.limbs)
	var T [2 * 2048 / 32]uint
	c, ok := montMulRows(&T, a.limbs[:n], b.limbs[:n], m.nat.limbs[:n], m.m0inv)
	if !ok {
		return x.montgomeryMulGeneric(a, b, m)
	}
	copy(x.reset(n).limbs, T[n:2*n])
	x.maybeSubtractModulus(choice(c), m)
	return x
}

// montMulRowsGo is the Go form of montMulFused's rows, which the tests
// compare it with: for each word b[i], T[i:i+n+1] += a×b[i] + m×Y with Y
// chosen so that the bottom word becomes zero (it is not stored).
func montMulRowsGo(T *[2 * 2048 / 32]uint, a, b, m []uint, m0inv uint) (c uint) {
	n := len(m)
	for i := 0; i < n; i++ {
		d := b[i]
		t, c1 := umaal(T[i], 0, a[0], d)
		Y := t * m0inv
		_, c2 := umaal(t, 0, m[0], Y)
		for j := 1; j < n; j++ {
			t, c1 = umaal(T[i+j], c1, a[j], d)
			T[i+j], c2 = umaal(t, c2, m[j], Y)
		}
		T[i+n], c = bits.Add(c1, c2, c)
	}
	return c
}

// umaal is the instruction: n×m + hi + lo, which cannot overflow two
// words; it returns the low and the high word.
func umaal(lo, hi, n, m uint) (uint, uint) {
	h, l := bits.Mul(n, m)
	l, c := bits.Add(l, lo, 0)
	h += c
	l, c = bits.Add(l, hi, 0)
	return l, h + c
}
