// bonesync's armcrypto overlay: added to golang.org/x/crypto/internal/poly1305
// for GOARCH=arm (see armcrypto/main.go). Not compiled on its own.

//go:build arm && gc && !purego

package poly1305

import "golang.org/x/sys/cpu"

// loop26 is loop26Go in assembly (mac_arm32_arm.s, written by
// armcrypto/gen): the accumulator in registers, one UMLAL per partial
// product, the carry merged into the next column.
//
//go:noescape
func loop26(p *poly26, msg []byte, hibit uint32)

// useNEON is whether the kernel reports NEON: blocks26 then takes the
// full blocks two at a time (pairs26).
var useNEON = cpu.ARM.HasNEON

// pairsInGo: loop26x2 is the NEON assembly.
const pairsInGo = false

// loop26x2 is loop26x2Go in NEON (mac_arm32_arm.s): each limb of the two
// lanes in one D register, the 25 products of a pair of blocks as 25
// VMULL/VMLAL, the carries in 64-bit lanes.
//
//go:noescape
func loop26x2(x *poly26x2, msg []byte, hibit uint32)
