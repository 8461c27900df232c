// bonesync's armcrypto overlay: added to the standard library's
// crypto/ecdh for GOARCH=arm (see armcrypto/main.go). Not compiled on its
// own.

//go:build arm && arm.6 && !purego

package ecdh

// The field operations are in x25519_arm32_arm.s, written by
// armcrypto/gen: x25519_arm32.go's Go forms with one UMAAL per partial
// product (ARMv6 and later).

//go:noescape
func fe8Mul(v, a, b *fe8)

//go:noescape
func fe8Square(v, a *fe8)

//go:noescape
func fe8Add(v, a, b *fe8)

//go:noescape
func fe8Sub(v, a, b *fe8)

//go:noescape
func fe8MulA24(v, a *fe8)

// x25519ScalarMult takes the place of the standard library's, which is
// x25519ScalarMultGeneric in this build (armcrypto renames it).
func x25519ScalarMult(dst, scalar, point []byte) { x25519Ladder(dst, scalar, point) }
