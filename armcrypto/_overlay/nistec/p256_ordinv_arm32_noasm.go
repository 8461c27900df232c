// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/nistec (see armcrypto/main.go). Not compiled
// on its own.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here, with what it leaves to the ARM assembly.)
//go:build (!amd64 && !arm64 && !arm) || purego

package nistec

func p256OrdMontMul(out, a, b *[8]uint32) { p256OrdMontMulGo(out, a, b) }
