// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/nistec when armcrypto's tests run it
// (armcrypto/main.go). Not compiled on its own.

// (armcrypto/main.go puts the constraint of the file the code under
// test replaces here.)
//go:build (!amd64 && !arm64) || purego

package nistec

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"
)

// P256OrdInverse and the multiplication under it against math/big.
func TestP256OrdInverseArm32(t *testing.T) {
	n, _ := new(big.Int).SetString("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16)
	rng := rand.New(rand.NewPCG(7, 8))
	count := 300
	if testing.Short() {
		count = 60
	}
	ks := []*big.Int{big.NewInt(1), big.NewInt(2), new(big.Int).Sub(n, big.NewInt(1)), new(big.Int).Sub(n, big.NewInt(2))}
	for len(ks) < count {
		b := make([]byte, 32)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		k := new(big.Int).SetBytes(b)
		if k.Sign() != 0 {
			ks = append(ks, k) // some above n: reduced first
		}
	}
	for _, k := range ks {
		kb := k.FillBytes(make([]byte, 32))
		got, err := P256OrdInverse(kb)
		want := new(big.Int).ModInverse(new(big.Int).Mod(k, n), n)
		if err != nil || want == nil || !bytes.Equal(got, want.FillBytes(make([]byte, 32))) {
			t.Fatalf("P256OrdInverse(%x) = %x, %v; want %x", kb, got, err, want)
		}
	}
	// The multiplication itself, the build's (assembly on arm) and Go's,
	// against math/big on inputs anywhere below n (up to n-1, where the
	// running sum comes closest to 2n).
	words := func(x *big.Int) (w [8]uint32) {
		b := x.FillBytes(make([]byte, 32))
		for i := range w {
			j := 28 - 4*i
			w[i] = uint32(b[j])<<24 | uint32(b[j+1])<<16 | uint32(b[j+2])<<8 | uint32(b[j+3])
		}
		return w
	}
	rInv := new(big.Int).ModInverse(new(big.Int).Lsh(big.NewInt(1), 256), n)
	for i := 0; i < count; i++ {
		x, y := ks[i%len(ks)], ks[(i*5+1)%len(ks)]
		if i%3 == 0 {
			y = new(big.Int).Sub(n, big.NewInt(int64(1+i)))
		}
		x, y = new(big.Int).Mod(x, n), new(big.Int).Mod(y, n)
		a, b := words(x), words(y)
		want := new(big.Int).Mul(x, y)
		want.Mul(want, rInv).Mod(want, n)
		var got, goGot [8]uint32
		p256OrdMontMul(&got, &a, &b)
		p256OrdMontMulGo(&goGot, &a, &b)
		if got != words(want) || goGot != got {
			t.Fatalf("p256OrdMontMul(%x, %x) = %x (Go %x), want %x", a, b, got, goGot, words(want))
		}
	}
	if _, err := P256OrdInverse(make([]byte, 31)); err == nil {
		t.Error("a 31-byte scalar was taken")
	}
}
