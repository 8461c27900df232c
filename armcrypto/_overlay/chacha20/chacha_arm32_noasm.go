// bonesync's armcrypto overlay: this file takes the place of
// chacha_noasm.go in golang.org/x/crypto/chacha20, the standard library's
// vendored copy (crypto/tls) and the module's (x/crypto/ssh), in the
// board's build (see armcrypto/main.go); on arm, chacha_arm32_arm.go
// takes its part. Not compiled on its own. The overlay is made for
// GOARCH=arm builds (and the host's purego test builds): on the other
// architectures with assembly of their own, this tag is not theirs.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here, with what it leaves to the ARM assembly.)
//go:build (!arm64 && !loong64 && !s390x && !ppc64 && !ppc64le && !arm) || !gc || purego

package chacha20

const bufSize = blockSize

func (s *Cipher) xorKeyStreamBlocks(dst, src []byte) {
	s.xorKeyStreamBlocksGeneric(dst, src)
}
