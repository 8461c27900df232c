// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod for GOARCH=amd64 (see armcrypto/main.go).
// Not compiled on its own.

//go:build amd64 && !purego

package bigmod

// montCPU says the core has what nat_mont_amd64.s uses: ADX and BMI2
// (supportADX, nat_asm.go's, which the standard library's own tests turn
// off to test the other path). Without them every size takes the generic
// code.
func montCPU() bool { return supportADX }
