// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/edwards25519/field (see armcrypto/main.go).
// Not compiled on its own.

// (armcrypto/main.go puts the constraint of the file this one replaces
// here, with what it leaves to the ARM assembly.)
//go:build (!amd64 && !arm) || purego

package field

func feMul(v, x, y *Element) { feMul32(v, x, y) }

func feSquare(v, x *Element) { feSquare32(v, x) }
