// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/nistec/fiat when armcrypto's tests run it
// (armcrypto/main.go). Not compiled on its own.

package fiat

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

var bigP, _ = new(big.Int).SetString("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16)

func toBig(x *[4]uint64) *big.Int {
	n := new(big.Int)
	for i := 3; i >= 0; i-- {
		n.Lsh(n, 64)
		n.Add(n, new(big.Int).SetUint64(x[i]))
	}
	return n
}

func fromBig(n *big.Int) (x [4]uint64) {
	m := new(big.Int).Set(n)
	mask := new(big.Int).SetUint64(^uint64(0))
	for i := range x {
		x[i] = new(big.Int).And(m, mask).Uint64()
		m.Rsh(m, 64)
	}
	return x
}

// fieldSamples: random values below p and the edges (0, 1, p-1, p-2,
// 2^224, words all ones where p allows).
func fieldSamples(n int) [][4]uint64 {
	rng := rand.New(rand.NewPCG(5, 6))
	edges := []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Sub(bigP, big.NewInt(1)), new(big.Int).Sub(bigP, big.NewInt(2)),
		new(big.Int).Lsh(big.NewInt(1), 224), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 224), big.NewInt(1))}
	var s [][4]uint64
	for _, e := range edges {
		s = append(s, fromBig(e))
	}
	for len(s) < n {
		x := [4]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
		s = append(s, fromBig(new(big.Int).Mod(toBig(&x), bigP)))
	}
	return s
}

// The build's multiplication (the assembly on arm) and the Go one against
// math/big, and the other field functions likewise.
func TestP256Fiat32AgainstBig(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 600
	}
	s := fieldSamples(n)
	rInv := new(big.Int).ModInverse(new(big.Int).Lsh(big.NewInt(1), 256), bigP)
	for i := range s {
		a, b := s[i], s[(i*7+3)%len(s)]
		want := new(big.Int).Mul(toBig(&a), toBig(&b))
		want.Mul(want, rInv).Mod(want, bigP)
		var got, goGot [4]uint64
		p256MontMul(&got, &a, &b)
		p256MontMulGo(&goGot, &a, &b)
		if toBig(&got).Cmp(want) != 0 || goGot != got {
			t.Fatalf("MontMul(%x, %x) = %x (Go %x), want %x", a, b, got, goGot, fromBig(want))
		}
		var sum, diff, goSum, goDiff p256MontgomeryDomainFieldElement
		ma, mb := (*p256MontgomeryDomainFieldElement)(&a), (*p256MontgomeryDomainFieldElement)(&b)
		p256Add(&sum, ma, mb)
		p256Sub(&diff, ma, mb)
		p256AddGo(&goSum, ma, mb)
		p256SubGo(&goDiff, ma, mb)
		if sum != goSum || diff != goDiff {
			t.Fatalf("Add/Sub(%x, %x) = %x, %x; in Go %x, %x", a, b, sum, diff, goSum, goDiff)
		}
		ws := new(big.Int).Add(toBig(&a), toBig(&b))
		wd := new(big.Int).Sub(toBig(&a), toBig(&b))
		if toBig((*[4]uint64)(&sum)).Cmp(ws.Mod(ws, bigP)) != 0 || toBig((*[4]uint64)(&diff)).Cmp(wd.Mod(wd, bigP)) != 0 {
			t.Fatalf("Add/Sub(%x, %x) = %x, %x", a, b, sum, diff)
		}
		var m p256MontgomeryDomainFieldElement
		var back p256NonMontgomeryDomainFieldElement
		p256ToMontgomery(&m, (*p256NonMontgomeryDomainFieldElement)(&a))
		p256FromMontgomery(&back, &m)
		if [4]uint64(back) != a {
			t.Fatalf("to and from the Montgomery domain: %x became %x", a, back)
		}
		var bs [32]uint8
		var rt [4]uint64
		p256ToBytes(&bs, &a)
		p256FromBytes(&rt, &bs)
		if rt != a {
			t.Fatalf("bytes: %x became %x", a, rt)
		}
	}
	var one p256MontgomeryDomainFieldElement
	p256SetOne(&one)
	if toBig((*[4]uint64)(&one)).Cmp(new(big.Int).Mod(new(big.Int).Lsh(big.NewInt(1), 256), bigP)) != 0 {
		t.Errorf("SetOne = %x, want R mod p", one)
	}
	var sel [4]uint64
	x, y := [4]uint64{1, 2, 3, 4}, [4]uint64{5, 6, 7, 8}
	if p256Selectznz(&sel, 0, &x, &y); sel != x {
		t.Errorf("Selectznz(0) = %x", sel)
	}
	if p256Selectznz(&sel, 1, &x, &y); sel != y {
		t.Errorf("Selectznz(1) = %x", sel)
	}
}
