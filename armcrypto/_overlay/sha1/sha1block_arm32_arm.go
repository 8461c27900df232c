// bonesync's armcrypto overlay: added to crypto/sha1 for GOARCH=arm (see
// armcrypto/main.go). Not compiled on its own.

//go:build !purego

package sha1

import "internal/cpu"

// hwcapNEON is Linux's HWCAP_NEON.
const hwcapNEON = 1 << 12

// useNEON is whether the kernel reports NEON: block (sha1block_arm.s,
// written by armcrypto/gen) then computes the message schedule in NEON.
var useNEON = cpu.HWCap&hwcapNEON != 0

// blockNEON and blockARM are block's two paths, each on whole 64-byte
// blocks of p.
//
//go:noescape
func blockNEON(dig *digest, p []byte)

//go:noescape
func blockARM(dig *digest, p []byte)
