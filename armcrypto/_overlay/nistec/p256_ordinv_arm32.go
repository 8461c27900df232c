// bonesync's armcrypto overlay: this file takes the place of the standard
// library's crypto/internal/fips140/nistec/p256_ordinv_noasm.go (see
// armcrypto/main.go). It is not compiled on its own.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here.)
//go:build (!amd64 && !arm64) || purego

package nistec

import "errors"

// P256OrdInverse returns k⁻¹ mod n, the inverse ECDSA needs for every
// signature (and verification). Go has it in assembly on amd64 and arm64
// only; elsewhere ECDSA falls back to bigmod's generic exponentiation,
// about 1.5 million instructions on the Cortex-A8. Here: Fermat's
// k^(n-2) by a fixed 4-bit window (the exponent is public, the window's
// entries are read by position in the exponent, not by k) with
// Montgomery multiplication mod n in eight 32-bit words
// (p256OrdMontMul: the assembly on arm, p256OrdMontMulGo elsewhere).
func P256OrdInverse(k []byte) ([]byte, error) {
	if len(k) != 32 {
		return nil, errors.New("invalid scalar length")
	}
	var x [8]uint32
	for i := range x {
		j := 28 - 4*i
		x[i] = uint32(k[j])<<24 | uint32(k[j+1])<<16 | uint32(k[j+2])<<8 | uint32(k[j+3])
	}
	x = ordReduceOnce(&x, 0) // below 2^256 < 2n

	// Into the Montgomery domain; the window x^0..x^15 there.
	var win [16][8]uint32
	win[0] = p256OrdR
	p256OrdMontMul(&win[1], &x, &p256OrdRR)
	for i := 2; i < 16; i++ {
		p256OrdMontMul(&win[i], &win[i-1], &win[1])
	}
	// n - 2, most significant nibble first.
	e := p256OrdN
	e[0] -= 2
	r := win[0]
	for i := 63; i >= 0; i-- {
		for s := 0; s < 4; s++ {
			p256OrdMontMul(&r, &r, &r)
		}
		if d := e[i/8] >> (4 * (i % 8)) & 15; d != 0 {
			p256OrdMontMul(&r, &r, &win[d])
		}
	}
	one := [8]uint32{1}
	p256OrdMontMul(&r, &r, &one)
	out := make([]byte, 32)
	for i, v := range r {
		j := 28 - 4*i
		out[j], out[j+1], out[j+2], out[j+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	return out, nil
}

// n, -n⁻¹ mod 2^32, R mod n and R² mod n (R = 2^256), words least
// significant first.
var (
	p256OrdN  = [8]uint32{0xfc632551, 0xf3b9cac2, 0xa7179e84, 0xbce6faad, 0xffffffff, 0xffffffff, 0, 0xffffffff}
	p256OrdN0 = uint32(0xee00bc4f)
	p256OrdR  = [8]uint32{0x039cdaaf, 0x0c46353d, 0x58e8617b, 0x43190552, 0, 0, 0xffffffff, 0}
	p256OrdRR = [8]uint32{0xbe79eea2, 0x83244c95, 0x49bd6fa6, 0x4699799c, 0x2b6bec59, 0x2845b239, 0xf3d95620, 0x66e12d94}
)

// ordReduceOnce returns t - n if t (with top, its 257th bit) is at least
// n, else t, without a branch.
func ordReduceOnce(t *[8]uint32, top uint32) [8]uint32 {
	var d [8]uint32
	var borrow uint64
	for i := range d {
		v := uint64(t[i]) - uint64(p256OrdN[i]) - borrow
		d[i], borrow = uint32(v), (v>>32)&1
	}
	keep := -uint32((uint64(top) - borrow) >> 63)
	for i := range d {
		d[i] = t[i]&keep | d[i]&^keep
	}
	return d
}

// p256OrdMontMulGo sets out = a × b × 2^-256 mod n, for a and b below n.
func p256OrdMontMulGo(out, a, b *[8]uint32) {
	var t [9]uint32
	for i := 0; i < 8; i++ {
		var c uint64
		for j := 0; j < 8; j++ {
			v := uint64(t[j]) + uint64(a[j])*uint64(b[i]) + c
			t[j], c = uint32(v), v>>32
		}
		v := uint64(t[8]) + c
		t[8] = uint32(v)
		top := uint32(v >> 32)
		m := uint64(t[0] * p256OrdN0)
		c = 0
		for j := 0; j < 8; j++ {
			v := uint64(t[j]) + m*uint64(p256OrdN[j]) + c
			t[j], c = uint32(v), v>>32
		}
		v = uint64(t[8]) + c
		copy(t[:], t[1:8])
		t[7], t[8] = uint32(v), top+uint32(v>>32)
	}
	var low [8]uint32
	copy(low[:], t[:8])
	*out = ordReduceOnce(&low, t[8])
}
