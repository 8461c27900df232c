// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod when armcrypto's tests run it
// (armcrypto/main.go). Not compiled on its own.

package bigmod

import (
	"math/rand/v2"
	"testing"
)

// The moduli of the tests: random odd ones of the assembly's sizes and of
// others, with the top bit set and (for Mod's generic path) clear, all
// ones, and the top and bottom bits only.
func testModuli(t *testing.T, r *rand.Rand, n int) []*Modulus {
	var ms []*Modulus
	for _, bits := range []int{1024, 1536, 2048, 512, 1056, 2080, 1023, 2047} {
		for k := range n {
			mb := make([]byte, (bits+7)/8)
			for i := range mb {
				switch k {
				case 0:
					mb[i] = 0xff
				case 1:
					mb[i] = 0
				default:
					mb[i] = byte(r.Uint32())
				}
			}
			if bits%8 != 0 {
				mb[0] &= 1<<(bits%8) - 1
			}
			mb[0] |= 1 << ((bits - 1) % 8)
			mb[len(mb)-1] |= 1
			m, err := NewModulus(mb)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
	}
	return ms
}

// testOperand is a Nat of m's size: 0, 1, m-1, all ones (at or above m:
// only for what takes operands below R) or random below m.
func testOperand(r *rand.Rand, m *Modulus, belowM bool) *Nat {
	n := len(m.nat.limbs)
	x := NewNat().reset(n)
	kinds := 5
	if belowM {
		kinds = 4
	}
	switch r.IntN(kinds) {
	case 0: // zero
	case 1:
		x.limbs[0] = 1
	case 2:
		x.set(m.nat).SubOne(m)
	case 4:
		for i := range x.limbs {
			x.limbs[i] = ^uint(0)
		}
	default:
		for i := range x.limbs {
			x.limbs[i] = uint(r.Uint64())
		}
		x.limbs[n-1] &= m.nat.limbs[n-1] >> 1
	}
	return x
}

// montgomeryMul (the assembly for the RSA sizes on arm and amd64: a
// multiplication, or a squaring when both operands are one Nat) and the
// Go forms of the assembly against the generic code, x aliasing an
// operand and longer than m too.
func TestMontgomeryMulAsm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 12
	if testing.Short() {
		n = 4
	}
	for _, m := range testModuli(t, r, n) {
		k := len(m.nat.limbs)
		for range 8 {
			a, b := testOperand(r, m, false), testOperand(r, m, true)
			want := NewNat().montgomeryMulGeneric(a, b, m)
			if got := NewNat().montgomeryMul(a, b, m); got.Equal(want) != 1 {
				t.Fatalf("%d bits: montgomeryMul differs from the generic code\nm %x\na %x\nb %x", m.BitLen(), m.nat.Bits(), a.Bits(), b.Bits())
			}
			if got := NewNat().set(a); got.montgomeryMul(got, b, m).Equal(want) != 1 {
				t.Fatalf("%d bits: montgomeryMul with x = a differs", m.BitLen())
			}
			if got := NewNat().set(b); got.montgomeryMul(a, got, m).Equal(want) != 1 {
				t.Fatalf("%d bits: montgomeryMul with x = b differs", m.BitLen())
			}
			got := NewNat().reset(2 * k)
			got.limbs[2*k-1] = 1
			if got.montgomeryMul(a, b, m); len(got.limbs) != k || got.Equal(want) != 1 || got.limbs[:2*k][2*k-1] != 0 {
				t.Fatalf("%d bits: montgomeryMul into a longer x: %d limbs, want %d", m.BitLen(), len(got.limbs), k)
			}
			x := make([]uint, k)
			if montMulGo(x, a.limbs, b.limbs, m.nat.limbs, m.m0inv); (&Nat{x}).Equal(want) != 1 {
				t.Fatalf("%d bits: montMulGo differs from the generic code", m.BitLen())
			}

			want = NewNat().montgomeryMulGeneric(b, b, m)
			if got := NewNat().montgomeryMul(b, b, m); got.Equal(want) != 1 {
				t.Fatalf("%d bits: montgomeryMul squaring differs from the generic code\nm %x\nb %x", m.BitLen(), m.nat.Bits(), b.Bits())
			}
			if got := NewNat().set(b); got.montgomeryMul(got, got, m).Equal(want) != 1 {
				t.Fatalf("%d bits: montgomeryMul squaring with x = a differs", m.BitLen())
			}
			if montSqrGo(x, b.limbs, m.nat.limbs, m.m0inv); (&Nat{x}).Equal(want) != 1 {
				t.Fatalf("%d bits: montSqrGo differs from the generic code", m.BitLen())
			}
		}
	}
}

// Mod against the generic code for x of every length up to 2n+1 limbs
// (n = m's): zero, all ones, m, m+1, and random.
func TestModAsm(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	n := 12
	if testing.Short() {
		n = 4
	}
	for _, m := range testModuli(t, r, n) {
		k := len(m.nat.limbs)
		for l := 1; l <= 2*k+1; l++ {
			if l < k-1 && l%7 != 0 {
				continue
			}
			x := NewNat().reset(l)
			switch r.IntN(5) {
			case 0: // zero
			case 1:
				for i := range x.limbs {
					x.limbs[i] = ^uint(0)
				}
			case 2, 3:
				if l >= k {
					copy(x.limbs, m.nat.limbs)
					x.limbs[0] += uint(r.IntN(2)) // m or m+1 (m is odd)
					break
				}
				fallthrough
			default:
				for i := range x.limbs {
					x.limbs[i] = uint(r.Uint64())
				}
			}
			want := NewNat().modGeneric(x, m)
			if got := NewNat().Mod(x, m); got.Equal(want) != 1 {
				t.Fatalf("%d bits, x of %d limbs: Mod differs from the generic code\nm %x\nx %x", m.BitLen(), l, m.nat.Bits(), x.Bits())
			}
		}
	}
}

// Exp against the generic code: exponents of several lengths, random and
// all zeros or all ones, bases at the edges too; and montSelect, where the
// build has it, against its Go form for every entry.
func TestExpAsm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n := 6
	if testing.Short() {
		n = 2
	}
	for _, m := range testModuli(t, r, n) {
		for _, l := range []int{0, 1, 3, 4, 32} {
			e := make([]byte, l)
			for i := range e {
				switch l {
				case 3:
					e[i] = 0xff
				case 4: // zeros
				default:
					e[i] = byte(r.Uint32())
				}
			}
			x := testOperand(r, m, true)
			want := NewNat().expGeneric(x, e, m)
			if got := NewNat().Exp(x, e, m); got.Equal(want) != 1 {
				t.Fatalf("%d bits: Exp differs from the generic code\nm %x\nx %x\ne %x", m.BitLen(), m.nat.Bits(), x.Bits(), e)
			}
		}
		k := len(m.nat.limbs)
		if !montAsm(k) {
			continue
		}
		table := make([]uint, 16*k)
		for i := range table {
			table[i] = uint(r.Uint64())
		}
		for i := range uint(18) {
			got, want := make([]uint, k), make([]uint, k)
			for j := range got {
				got[j] = uint(r.Uint64()) // overwritten
			}
			montSelect(got, table, i)
			montSelectGo(want, table, i)
			if (&Nat{got}).Equal(&Nat{want}) != 1 {
				t.Fatalf("%d words: montSelect(%d) differs from montSelectGo", k, i)
			}
		}
	}
}
