// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/edwards25519/field for GOARCH=arm (see
// armcrypto/main.go). Not compiled on its own.

//go:build arm && !purego

package field

// feMul and feSquare are in fe_arm32_arm.s, written by armcrypto/gen:
// feMul32 and feSquare32 (fe_arm32.go) with one UMLAL per partial
// product, the operands and the carry in the frame and in registers
// where Go's compiler spills the 64-bit column sums.

//go:noescape
func feMul(v, x, y *Element)

//go:noescape
func feSquare(v, x *Element)
