// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod for GOARCH=amd64 when armcrypto's tests
// run it (armcrypto/main.go). Not compiled on its own.

//go:build amd64 && !purego

package bigmod

import "testing"

// The assembly runs where the CPU has ADX and BMI2, and the generic code
// where it has not: with supportADX off, the differential tests again.
func TestMontAsmADX(t *testing.T) {
	for _, n := range []int{1024 / 64, 1536 / 64, 2048 / 64} {
		if montAsm(n) != supportADX {
			t.Errorf("montAsm(%d) = %v, want supportADX (%v)", n, montAsm(n), supportADX)
		}
	}
	if !supportADX {
		t.Skip("this CPU has no ADX or BMI2: the generic code ran")
	}
	supportADX = false
	defer func() { supportADX = true }()
	if montAsm(1024 / 64) {
		t.Fatal("montAsm(16) with supportADX off")
	}
	TestMontgomeryMulAsm(t)
	TestModAsm(t)
	TestExpAsm(t)
}
