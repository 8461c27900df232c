// bonesync's armcrypto overlay: this file takes the place of the
// standard library's crypto/internal/fips140/sha512/sha512block_noasm.go
// (see armcrypto/main.go). It is not compiled on its own.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here, with what sha512block_arm32_arm.go takes.)
//go:build !arm || purego

package sha512

func block(dig *Digest, p []byte) { blockGeneric(dig, p) }
