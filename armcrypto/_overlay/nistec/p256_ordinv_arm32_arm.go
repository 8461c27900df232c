// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/nistec for GOARCH=arm (see armcrypto/main.go).
// Not compiled on its own.

//go:build arm && arm.6 && !purego

package nistec

// p256OrdMontMul is p256OrdMontMulGo in assembly (p256_ordinv_arm32_arm.s,
// written by armcrypto/gen): one UMAAL per partial product, m = t[0]×-n⁻¹
// and one UMAAL chain for m×n per word of b.
//
//go:noescape
func p256OrdMontMul(out, a, b *[8]uint32)
