// bonesync's armcrypto overlay: added to golang.org/x/crypto/internal/poly1305
// for GOARCH=arm (see armcrypto/main.go). Not compiled on its own.

//go:build arm && gc && !purego

package poly1305

// loop26 is loop26Go in assembly (mac_arm32_arm.s, written by
// armcrypto/gen): the accumulator in registers, one UMLAL per partial
// product, the carry merged into the next column.
//
//go:noescape
func loop26(p *poly26, msg []byte, hibit uint32)
