// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/edwards25519/field package when armcrypto's
// tests run it (armcrypto/main.go). Not compiled on its own.

// (armcrypto/main.go puts the constraint of the file the code under
// test replaces here.)
//go:build !amd64 || purego

package field

import (
	"math/big"
	"testing"
	"testing/quick"
)

// feInt is the integer an Element stands for, not reduced.
func feInt(v *Element) *big.Int {
	n := new(big.Int)
	for _, l := range []uint64{v.l4, v.l3, v.l2, v.l1, v.l0} {
		n.Lsh(n, 51)
		n.Add(n, new(big.Int).SetUint64(l))
	}
	return n
}

var p25519, _ = new(big.Int).SetString("57896044618658097711785492504343953926634992332820282019728792003956564819949", 10)

// The implementations under test: the Go form, and feMul and feSquare as
// this build has them (the assembly on arm).
var impls = []struct {
	name string
	mul  func(v, x, y *Element)
	sqr  func(v, x *Element)
}{{"go", feMul32, feSquare32}, {"build", feMul, feSquare}}

// The 32-bit multiplication against the untouched 64-bit one (equal mod
// p; the limbs differ) and against math/big, over quick's random
// elements, which include limbs up to 2^52.
func TestFeMul32Differential(t *testing.T) {
	for _, im := range impls {
		check := func(a, b Element) bool {
			var got, want Element
			im.mul(&got, &a, &b)
			feMulGeneric(&want, &a, &b)
			prod := new(big.Int).Mul(feInt(&a), feInt(&b))
			prod.Mod(prod, p25519)
			g := new(big.Int).Mod(feInt(&got), p25519)
			return got.Equal(&want) == 1 && g.Cmp(prod) == 0 && isInBounds(&got)
		}
		if err := quick.Check(check, quickCheckConfig(4096)); err != nil {
			t.Errorf("%s: %v", im.name, err)
		}
		sq := func(a Element) bool {
			var got, want Element
			im.sqr(&got, &a)
			feSquareGeneric(&want, &a)
			return got.Equal(&want) == 1 && isInBounds(&got)
		}
		if err := quick.Check(sq, quickCheckConfig(4096)); err != nil {
			t.Errorf("%s: %v", im.name, err)
		}
	}
}

// The extremes quick rarely draws: every limb at its largest, and at 2^51-1.
func TestFeMul32Extremes(t *testing.T) {
	for _, im := range impls {
		for _, l := range []uint64{1<<52 - 1, 1<<51 - 1, 1 << 51, 0, 1, 19} {
			for _, k := range []uint64{1<<52 - 1, 1<<51 - 1, 0, 1} {
				a := Element{l, l, l, l, l}
				b := Element{k, l, k, l, k}
				var got, want Element
				im.mul(&got, &a, &b)
				feMulGeneric(&want, &a, &b)
				if got.Equal(&want) != 1 || !isInBounds(&got) {
					t.Errorf("%s: %#x × %#x: got %v, want %v", im.name, l, k, got, want)
				}
				im.sqr(&got, &a)
				feSquareGeneric(&want, &a)
				if got.Equal(&want) != 1 || !isInBounds(&got) {
					t.Errorf("%s: %#x²: got %v, want %v", im.name, l, got, want)
				}
			}
		}
	}
}

// Outputs fed back as inputs stay within bounds: a long chain of
// squarings and multiplications, checked against the generic chain.
func TestFeMul32Chain(t *testing.T) {
	for _, im := range impls {
		a := Element{1<<52 - 1, 1<<52 - 1, 1<<52 - 1, 1<<52 - 1, 1<<52 - 1}
		b := a
		for i := 0; i < 10000; i++ {
			im.sqr(&a, &a)
			im.mul(&a, &a, &a)
			feSquareGeneric(&b, &b)
			feMulGeneric(&b, &b, &b)
			if a.Equal(&b) != 1 || !isInBounds(&a) {
				t.Fatalf("%s: step %d: %v, want %v", im.name, i, a, b)
			}
		}
	}
}
