// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/sha512 for GOARCH=arm (see armcrypto/main.go).
// Not compiled on its own.

//go:build arm && !purego

package sha512

import "crypto/internal/fips140deps/cpu"

// On a 32-bit core Go's blockGeneric emulates every 64-bit addition,
// rotation and logical operation with pairs of 32-bit ones. NEON has
// 64-bit lanes: blockNEON (sha512block_arm32_arm.s, written by
// armcrypto/gen) keeps the working variables and the schedule in D
// registers. ECDSA's nonce (an HMAC-DRBG over SHA-512) and Ed25519 use it.

// useNEON is whether the kernel reports NEON.
var useNEON = cpu.ARMHasNEON

func block(dig *Digest, p []byte) {
	if useNEON {
		blockNEON(dig, p)
		return
	}
	blockGeneric(dig, p)
}

//go:noescape
func blockNEON(dig *Digest, p []byte)
