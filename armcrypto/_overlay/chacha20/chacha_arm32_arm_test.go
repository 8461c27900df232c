// bonesync's armcrypto overlay: added to golang.org/x/crypto/chacha20 when
// armcrypto's tests run it under qemu-arm (armcrypto/main.go). Not
// compiled on its own.

//go:build arm && gc && !purego

package chacha20

import "testing"

// The differential test must have run the NEON code: qemu-arm's CPU
// reports NEON as the board's Cortex-A8 does.
func TestNEONTested(t *testing.T) {
	if !useNEON {
		t.Fatal("no NEON reported (HWCAP): the NEON code went untested")
	}
}
