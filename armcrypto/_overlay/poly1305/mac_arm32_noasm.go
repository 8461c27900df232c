// bonesync's armcrypto overlay: added to golang.org/x/crypto/internal/poly1305
// (see armcrypto/main.go). Not compiled on its own.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here, with what it leaves to the ARM assembly.)
//go:build purego || !gc

package poly1305

func loop26(p *poly26, msg []byte, hibit uint32) { loop26Go(p, msg, hibit) }

// useNEON is false without the assembly; the tests set it to run
// pairs26 with loop26x2Go.
var useNEON = false

// pairsInGo: loop26x2 is loop26x2Go, which runs on any core.
const pairsInGo = true

func loop26x2(x *poly26x2, msg []byte, hibit uint32) { loop26x2Go(x, msg, hibit) }
