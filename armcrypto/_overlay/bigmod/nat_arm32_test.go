// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod when armcrypto's tests run it
// (armcrypto/main.go). Not compiled on its own.

package bigmod

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// montgomeryMul (fused rows on arm for the RSA sizes) against the
// generic one, and the Go form of the rows against the generic rows'
// result, over random odd moduli of the RSA sizes and others, with
// operands at random and at the edges (0, 1, m-1), the output aliasing
// an operand too.
func TestMontgomeryMulFused(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 40
	if testing.Short() {
		n = 8
	}
	for _, bits := range []int{1024, 1536, 2048, 512, 1056, 2080} {
		for range n {
			mb := make([]byte, bits/8)
			for i := range mb {
				mb[i] = byte(r.Uint32())
			}
			mb[0] |= 0x80
			mb[len(mb)-1] |= 1
			m, err := NewModulus(mb)
			if err != nil {
				t.Fatal(err)
			}
			operand := func() *Nat {
				b := make([]byte, bits/8)
				switch r.IntN(5) {
				case 0: // zero
				case 1:
					b[len(b)-1] = 1
				case 2: // m - 1
					copy(b, mb)
					b[len(b)-1]--
				default:
					for i := range b {
						b[i] = byte(r.Uint32())
					}
					b[0] &= mb[0] >> 1
				}
				x, err := NewNat().SetBytes(b, m)
				if err != nil {
					t.Fatal(err)
				}
				return x
			}
			a, b := operand(), operand()
			got := NewNat().montgomeryMul(a, b, m)
			want := NewNat().montgomeryMulGeneric(a, b, m)
			if got.Equal(want) != 1 {
				t.Fatalf("%d bits: montgomeryMul differs from the generic code\nm %x\na %x\nb %x", bits, mb, a.Bytes(m), b.Bytes(m))
			}
			alias := NewNat().set(a)
			alias.montgomeryMul(alias, b, m)
			if alias.Equal(want) != 1 {
				t.Fatalf("%d bits: montgomeryMul with x = a differs", bits)
			}
			// The rows' Go form, checked through the same final step.
			var T [2 * 2048 / 32]uint
			k := len(m.nat.limbs)
			if k <= len(T)/2 {
				c := montMulRowsGo(&T, a.limbs[:k], b.limbs[:k], m.nat.limbs[:k], m.m0inv)
				g := NewNat()
				copy(g.reset(k).limbs, T[k:2*k])
				g.maybeSubtractModulus(choice(c), m)
				if !bytes.Equal(g.Bytes(m), want.Bytes(m)) {
					t.Fatalf("%d bits: montMulRowsGo differs from the generic code", bits)
				}
			}
		}
	}
}
