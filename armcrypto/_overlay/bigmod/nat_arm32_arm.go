// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod for GOARCH=arm (see armcrypto/main.go).
// Not compiled on its own.

//go:build arm && arm.6 && !purego

package bigmod

// montMulRows is T[n:2n] and the carry out of a Montgomery
// multiplication's rows (montMulRowsGo), or ok false where this build has
// no fused rows for n words. T's first n words must be zero.
func montMulRows(T *[2 * 2048 / 32]uint, a, b, m []uint, m0inv uint) (c uint, ok bool) {
	switch len(m) {
	case 1024 / 32:
		return montMulFused1024(&T[0], &a[0], &b[0], &m[0], m0inv), true
	case 1536 / 32:
		return montMulFused1536(&T[0], &a[0], &b[0], &m[0], m0inv), true
	case 2048 / 32:
		return montMulFused2048(&T[0], &a[0], &b[0], &m[0], m0inv), true
	}
	return 0, false
}

// In nat_arm32_arm.s, written by armcrypto/gen: montMulRowsGo's rows
// for one size each, with UMAAL (ARMv6 and later).

//go:noescape
func montMulFused1024(T, a, b, m *uint, m0inv uint) (c uint)

//go:noescape
func montMulFused1536(T, a, b, m *uint, m0inv uint) (c uint)

//go:noescape
func montMulFused2048(T, a, b, m *uint, m0inv uint) (c uint)
