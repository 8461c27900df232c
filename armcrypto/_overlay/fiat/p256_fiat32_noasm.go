// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/nistec/fiat (see armcrypto/main.go). Not
// compiled on its own.

// UMAAL is an ARMv6 instruction: GOARM=5 takes the Go code.
//go:build !arm || !arm.6 || purego

package fiat

func p256MontMul(out, a, b *[4]uint64) { p256MontMulGo(out, a, b) }

func p256Add(out1, arg1, arg2 *p256MontgomeryDomainFieldElement) { p256AddGo(out1, arg1, arg2) }

func p256Sub(out1, arg1, arg2 *p256MontgomeryDomainFieldElement) { p256SubGo(out1, arg1, arg2) }
