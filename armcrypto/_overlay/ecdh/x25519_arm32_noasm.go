// bonesync's armcrypto overlay: added to the standard library's
// crypto/ecdh (see armcrypto/main.go). Not compiled on its own.

//go:build !arm || !arm.6 || purego

package ecdh

// Without the assembly the standard library's ladder stays (armcrypto
// renames it x25519ScalarMultGeneric); the Go forms of the fe8
// operations serve the tests.

func fe8Mul(v, a, b *fe8) { fe8MulGo(v, a, b) }
func fe8Square(v, a *fe8) { fe8SquareGo(v, a) }
func fe8Add(v, a, b *fe8) { fe8AddGo(v, a, b) }
func fe8Sub(v, a, b *fe8) { fe8SubGo(v, a, b) }
func fe8MulA24(v, a *fe8) { fe8MulA24Go(v, a) }

func x25519ScalarMult(dst, scalar, point []byte) { x25519ScalarMultGeneric(dst, scalar, point) }
