// bonesync's armcrypto overlay: added to the standard library's
// crypto/ecdh when armcrypto's tests run it (armcrypto/main.go). Not
// compiled on its own.

package ecdh

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"
)

var p25519, _ = new(big.Int).SetString("57896044618658097711785492504343953926634992332820282019728792003956564819949", 10)

func fe8Int(a *fe8) *big.Int {
	n := new(big.Int)
	for k := 7; k >= 0; k-- {
		n.Lsh(n, 32)
		n.Add(n, big.NewInt(int64(a[k])))
	}
	return n
}

// fe8Cases are random elements and the edges: 0, 1, p-1, p, p+1, 2^255-1,
// 2^256-1, 2^256-38 and words of all ones or zeros.
func fe8Cases(r *rand.Rand, n int) []fe8 {
	var cs []fe8
	set := func(x *big.Int) {
		var a fe8
		for k := range a {
			a[k] = uint32(new(big.Int).Rsh(x, uint(32*k)).Uint64())
		}
		cs = append(cs, a)
	}
	one := big.NewInt(1)
	top := new(big.Int).Lsh(one, 256)
	for _, x := range []*big.Int{big.NewInt(0), one, new(big.Int).Sub(p25519, one), p25519, new(big.Int).Add(p25519, one),
		new(big.Int).Sub(new(big.Int).Lsh(one, 255), one), new(big.Int).Sub(top, one), new(big.Int).Sub(top, big.NewInt(38)),
		new(big.Int).Sub(top, big.NewInt(39)), big.NewInt(37), big.NewInt(38)} {
		set(x)
	}
	for range n {
		var a fe8
		for k := range a {
			switch r.IntN(4) {
			case 0:
				a[k] = 0xffffffff
			case 1:
				a[k] = 0
			default:
				a[k] = r.Uint32()
			}
		}
		cs = append(cs, a)
	}
	return cs
}

// The implementations under test: the Go forms, and the operations as
// this build has them (the assembly on arm).
var fe8Impls = []struct {
	name          string
	mul, add, sub func(v, a, b *fe8)
	sq, a24       func(v, a *fe8)
}{
	{"go", fe8MulGo, fe8AddGo, fe8SubGo, fe8SquareGo, fe8MulA24Go},
	{"build", fe8Mul, fe8Add, fe8Sub, fe8Square, fe8MulA24},
}

// Every operation against math/big modulo p, over the edges and random
// words, with the output aliasing an input too.
func TestFe8Differential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	cs := fe8Cases(r, n)
	mod := func(x *big.Int) *big.Int { return x.Mod(x, p25519) }
	for _, im := range fe8Impls {
		for i, a := range cs {
			b := cs[(i*7+3)%len(cs)]
			ai, bi := fe8Int(&a), fe8Int(&b)
			check := func(op string, got fe8, want *big.Int) {
				if g := mod(fe8Int(&got)); g.Cmp(mod(want)) != 0 {
					t.Fatalf("%s %s(%x, %x) = %x, want %x mod p", im.name, op, a, b, got, want)
				}
			}
			var v fe8
			im.mul(&v, &a, &b)
			check("mul", v, new(big.Int).Mul(ai, bi))
			v = a
			im.mul(&v, &v, &b)
			check("mul aliased", v, new(big.Int).Mul(ai, bi))
			v = b
			im.mul(&v, &a, &v)
			check("mul aliased b", v, new(big.Int).Mul(ai, bi))
			im.sq(&v, &a)
			check("square", v, new(big.Int).Mul(ai, ai))
			v = a
			im.sq(&v, &v)
			check("square aliased", v, new(big.Int).Mul(ai, ai))
			im.add(&v, &a, &b)
			check("add", v, new(big.Int).Add(ai, bi))
			v = b
			im.add(&v, &a, &v)
			check("add aliased", v, new(big.Int).Add(ai, bi))
			im.sub(&v, &a, &b)
			check("sub", v, new(big.Int).Sub(ai, bi))
			v = b
			im.sub(&v, &a, &v)
			check("sub aliased", v, new(big.Int).Sub(ai, bi))
			im.a24(&v, &a)
			check("a24", v, new(big.Int).Mul(ai, big.NewInt(a24)))
		}
	}
}

func TestFe8Bytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, a := range fe8Cases(r, 1000) {
		var got [32]byte
		fe8Bytes(got[:], &a)
		want := new(big.Int).Mod(fe8Int(&a), p25519).FillBytes(make([]byte, 32))
		for i, j := 0, 31; i < j; i, j = i+1, j-1 {
			want[i], want[j] = want[j], want[i]
		}
		if !bytes.Equal(got[:], want) {
			t.Fatalf("fe8Bytes(%x) = %x, want %x", a, got, want)
		}
	}
}

// The fe8 ladder against the standard library's, over random scalars and
// points, points from p to 2^256-1 (the top bit ignored, the rest taken
// unreduced) among them.
func TestX25519LadderDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 300
	if testing.Short() {
		n = 30
	}
	for i := range n {
		var s, p [32]byte
		for k := range s {
			s[k], p[k] = byte(r.Uint32()), byte(r.Uint32())
		}
		if i%3 == 0 { // near p, or above it
			for k := 1; k < 32; k++ {
				p[k] = 0xff
			}
			p[0] = 0xed + byte(r.IntN(19))
		}
		var got, want [32]byte
		x25519Ladder(got[:], s[:], p[:])
		x25519ScalarMultGeneric(want[:], s[:], p[:])
		if got != want {
			t.Fatalf("X25519(%x, %x) = %x, want %x", s, p, got, want)
		}
	}
}
