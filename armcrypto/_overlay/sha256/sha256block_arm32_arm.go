// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/sha256 for GOARCH=arm (see armcrypto/main.go).
// Not compiled on its own.

//go:build arm && arm.6 && !purego

package sha256

// block is in sha256block_arm32_arm.s, written by armcrypto/gen: Go's
// blockGeneric (sha256block.go) with the rotations in the barrel shifter
// and the working variables in registers, where Go's compiler moves them
// every round.
//
//go:noescape
func block(dig *Digest, p []byte)
