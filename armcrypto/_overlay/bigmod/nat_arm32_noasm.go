// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod (see armcrypto/main.go). Not compiled
// on its own.

//go:build !arm || !arm.6 || purego

package bigmod

// Without the assembly every size takes the generic montgomeryMul.
func montMulRows(T *[2 * 2048 / 32]uint, a, b, m []uint, m0inv uint) (c uint, ok bool) {
	return 0, false
}
