// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod (see armcrypto/main.go). Not compiled
// on its own.

package bigmod

import "math/bits"

// RSA's big-number core. Go's montgomeryMul (nat.go, which
// the overlay takes with that function renamed montgomeryMulGeneric)
// makes each row of a Montgomery multiplication two passes of
// addMulVVW over the running sum T, each word a MULLU and two carry
// chains (nat_arm.s: nine instructions a word), then copies T out and
// subtracts m in Go. For the RSA sizes (1024, 1536 and 2048-bit moduli,
// one half of a 2048, 3072 or 4096-bit key's CRT) montMul<bits> and
// montSqr<bits> (nat_arm32_arm.s, written by armcrypto/gen) do the whole
// of it, the final subtraction included: four words of T at a time with
// LDM, UMAAL and STM, seven instructions for four word products; and a
// square, which is most of an exponentiation, takes each cross product
// a[i]×a[j] once and doubles them (montSqrGo): 1.5n² word products
// instead of 2n².
//
// On amd64 (nat_mont_amd64.s, from the same generator) the standard
// library's rows already run at about a MULX a cycle; there the gain is
// the rest of it: one call a multiplication instead of two a row, the
// final subtraction inside, the squaring, montSelect and Mod below,
// which together make an RSA-2048 signature 1.65 times as fast. They run
// where the CPU has ADX and BMI2, as the standard library's do.
//
// The result is the generic code's exactly: word-by-word Montgomery
// reduction chooses the same Y (each word of a×b + Y×m zero from the
// bottom), in whatever order the products are added, and the final
// subtraction of m is made in constant time by a mask (a CMOV on
// amd64). Other sizes, and builds without the assembly, take the
// generic code.

func (x *Nat) montgomeryMul(a *Nat, b *Nat, m *Modulus) *Nat {
	n := len(m.nat.limbs)
	if !montAsm(n) {
		return x.montgomeryMulGeneric(a, b, m)
	}
	aLimbs, bLimbs := a.limbs[:n], b.limbs[:n]
	// x takes n limbs without clearing them first: it may be a or b,
	// which the assembly reads before it writes x.
	if cap(x.limbs) < n {
		x.limbs = make([]uint, n)
	}
	if len(x.limbs) > n {
		clear(x.limbs[n:])
	}
	x.limbs = x.limbs[:n]
	if &aLimbs[0] == &bLimbs[0] { // a square, as Exp's: x.montgomeryMul(x, x, m)
		montSqr(x.limbs, aLimbs, m.nat.limbs, m.m0inv)
	} else {
		montMul(x.limbs, aLimbs, bLimbs, m.nat.limbs, m.m0inv)
	}
	return x
}

// Mod calculates out = x mod m. For an odd m whose top bit is set and x
// of n to 2n limbs (n = m's), as RSA reduces a ciphertext modulo p and
// q, it is (xL mod m) + xH×R mod m with x = xH×R + xL, R = 2^(_W×n):
// xL < R <= 2m needs one subtraction, and xH×R mod m is one Montgomery
// multiplication of xH by m's R² (montgomeryMul takes a below R, not
// only below m). The generic code (nat.go's Mod, renamed modGeneric by
// the overlay) shifts x in a bit at a time: 32 passes over m a word of
// x. Both leak only the sizes of x and m.
func (out *Nat) Mod(x *Nat, m *Modulus) *Nat {
	n := len(m.nat.limbs)
	if !m.odd || len(x.limbs) < n || len(x.limbs) > 2*n || m.nat.limbs[n-1]>>(_W-1) == 0 {
		return out.modGeneric(x, m)
	}
	hi := NewNat().reset(n)
	copy(hi.limbs, x.limbs[n:])
	hi.montgomeryMul(hi, m.rr, m) // xH×R² / R
	out.resetFor(m)
	copy(out.limbs, x.limbs[:n])
	out.maybeSubtractModulus(no, m)
	return out.Add(hi, m)
}

// Exp calculates out = x^e mod m as the generic code (nat.go's Exp,
// renamed expGeneric by the overlay) does, in 4-bit windows of e, four
// squarings and a multiplication each. For the sizes of the assembly
// the table is one array of 16 entries, 1 (in Montgomery form, R mod m)
// then x to x¹⁵, from which montSelect takes each window's entry in
// constant time, reading every entry (the generic code's selection is a
// Go loop of 15 masked copies, a fifth of an RSA signature on the board);
// and the multiplication by the entry for a window of 0, which is one,
// is kept where the generic code discards it. Both leak only the sizes
// of e and m.
func (out *Nat) Exp(x *Nat, e []byte, m *Modulus) *Nat {
	n := len(m.nat.limbs)
	if !m.odd || !montAsm(n) {
		return out.expGeneric(x, e, m)
	}
	var buf [16 * 2048 / 32]uint
	var table [16]Nat
	for i := range table {
		table[i].limbs = buf[i*n : (i+1)*n : (i+1)*n]
	}
	table[0].limbs[0] = 1
	table[0].montgomeryRepresentation(m)
	copy(table[1].limbs, x.limbs[:n])
	table[1].montgomeryRepresentation(m)
	for i := 2; i < len(table); i++ {
		table[i].montgomeryMul(&table[i-1], &table[1], m)
	}
	out.resetFor(m)
	copy(out.limbs, table[0].limbs)
	entry := NewNat().ExpandFor(m)
	for _, b := range e {
		for _, j := range []int{4, 0} {
			out.montgomeryMul(out, out, m)
			out.montgomeryMul(out, out, m)
			out.montgomeryMul(out, out, m)
			out.montgomeryMul(out, out, m)
			montSelect(entry.limbs, buf[:16*n], uint(b>>j)&0b1111)
			out.montgomeryMul(out, entry, m)
		}
	}
	return out.montgomeryReduction(m)
}

// montSelectGo is the Go form of montSelect: x = the entry k of table's
// 16, each len(x) words, reading all of them.
func montSelectGo(x, table []uint, k uint) {
	n := len(x)
	clear(x)
	for i := range 16 {
		mask := ctMask(ctEq(k, uint(i)))
		for j := range x {
			x[j] |= table[i*n+j] & mask
		}
	}
}

// montMulGo is the Go form of montMul<bits>, which the tests compare
// with the generic code: x = a×b/R mod m.
func montMulGo(x, a, b, m []uint, m0inv uint) {
	n := len(m)
	T := make([]uint, 2*n)
	for i := 0; i < n; i++ {
		var c uint
		for j := 0; j < n; j++ {
			T[i+j], c = umaal(T[i+j], c, a[j], b[i])
		}
		T[i+n] = c
	}
	montReduceGo(x, T, m, m0inv)
}

// montSqrGo is the Go form of montSqr<bits>: x = a×a/R mod m, each
// cross product once, doubled, and the squares added.
func montSqrGo(x, a, m []uint, m0inv uint) {
	n := len(m)
	T := make([]uint, 2*n)
	for i := 0; i < n-1; i++ {
		var c uint
		for j := i + 1; j < n; j++ {
			T[i+j], c = umaal(T[i+j], c, a[i], a[j])
		}
		T[i+n] = c
	}
	var c uint
	for k := range T {
		T[k], c = bits.Add(T[k], T[k], c)
	}
	c = 0
	for i := 0; i < n; i++ {
		hi, lo := bits.Mul(a[i], a[i])
		T[2*i], c = bits.Add(T[2*i], lo, c)
		T[2*i+1], c = bits.Add(T[2*i+1], hi, c)
	}
	montReduceGo(x, T, m, m0inv)
}

// montReduceGo writes x = T/R mod m for T < R×m: a row a word of T from
// the bottom, adding m×Y with Y making that word zero, the carries into
// the row's top word chained from row to row; then T[n:2n] (below 2m)
// less m where that is not negative or the top carried, in constant time.
func montReduceGo(x, T, m []uint, m0inv uint) {
	n := len(m)
	var cc uint
	for i := 0; i < n; i++ {
		Y := T[i] * m0inv
		var c uint
		for j := 0; j < n; j++ {
			T[i+j], c = umaal(T[i+j], c, m[j], Y)
		}
		T[i+n], cc = bits.Add(T[i+n], c, cc)
	}
	var borrow uint
	for j := 0; j < n; j++ {
		_, borrow = bits.Sub(T[n+j], m[j], borrow)
	}
	mask := -(cc | (borrow ^ 1))
	borrow = 0
	for j := 0; j < n; j++ {
		x[j], borrow = bits.Sub(T[n+j], m[j]&mask, borrow)
	}
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
