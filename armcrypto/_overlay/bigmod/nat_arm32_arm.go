// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod for GOARCH=arm (see armcrypto/main.go).
// Not compiled on its own.

//go:build arm && arm.6 && !purego

package bigmod

// montCPU says the core has what nat_arm32_arm.s uses: UMAAL, in every
// ARMv6 and later.
func montCPU() bool { return true }
