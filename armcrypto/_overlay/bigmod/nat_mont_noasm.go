// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod (see armcrypto/main.go). Not compiled
// on its own.

//go:build ((!arm || !arm.6) && !amd64) || purego

package bigmod

// Without the assembly every size takes the generic montgomeryMul.
func montAsm(n int) bool { return false }

func montMul(x, a, b, m []uint, m0inv uint) {
	panic("bigmod: internal error: no montMul in this build")
}

func montSqr(x, a, m []uint, m0inv uint) {
	panic("bigmod: internal error: no montSqr in this build")
}

func montSelect(x, table []uint, k uint) {
	panic("bigmod: internal error: no montSelect in this build")
}
