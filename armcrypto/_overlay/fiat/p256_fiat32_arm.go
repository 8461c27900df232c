// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/nistec/fiat for GOARCH=arm (see
// armcrypto/main.go). Not compiled on its own.

//go:build arm && arm.6 && !purego

package fiat

// p256MontMul is p256MontMulGo in assembly (p256_fiat32_arm.s, written by
// armcrypto/gen): the nine words of the running sum in registers, one
// UMAAL per partial product, p's words folded in with one add chain per
// word of b.
//
//go:noescape
func p256MontMul(out, a, b *[4]uint64)

// p256Add and p256Sub are p256AddGo and p256SubGo in assembly: one add
// or subtract chain over the eight words and a masked correction by p.
//
//go:noescape
func p256Add(out1, arg1, arg2 *p256MontgomeryDomainFieldElement)

//go:noescape
func p256Sub(out1, arg1, arg2 *p256MontgomeryDomainFieldElement)
