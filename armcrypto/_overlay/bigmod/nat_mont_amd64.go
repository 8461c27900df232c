// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod for GOARCH=amd64 (see armcrypto/main.go).
// Not compiled on its own.

//go:build amd64 && !purego

package bigmod

// montAsm reports whether montMul and montSqr take moduli of n words:
// the RSA sizes, on a CPU with ADX and BMI2 (supportADX, nat_asm.go's,
// which the standard library's own tests turn off to test the other
// path). Without them every size takes the generic code.
func montAsm(n int) bool {
	return supportADX && (n == 1024/64 || n == 1536/64 || n == 2048/64)
}

// montMul is montMulGo for the sizes montAsm takes. x may be a or b.
func montMul(x, a, b, m []uint, m0inv uint) {
	switch len(m) {
	case 1024 / 64:
		montMul1024(&x[0], &a[0], &b[0], &m[0], m0inv)
	case 1536 / 64:
		montMul1536(&x[0], &a[0], &b[0], &m[0], m0inv)
	case 2048 / 64:
		montMul2048(&x[0], &a[0], &b[0], &m[0], m0inv)
	default:
		panic("bigmod: internal error: no montMul for this size")
	}
}

// montSqr is montSqrGo for the sizes montAsm takes. x may be a.
func montSqr(x, a, m []uint, m0inv uint) {
	switch len(m) {
	case 1024 / 64:
		montSqr1024(&x[0], &a[0], &m[0], m0inv)
	case 1536 / 64:
		montSqr1536(&x[0], &a[0], &m[0], m0inv)
	case 2048 / 64:
		montSqr2048(&x[0], &a[0], &m[0], m0inv)
	default:
		panic("bigmod: internal error: no montSqr for this size")
	}
}

// montSelect is montSelectGo for the sizes montAsm takes.
func montSelect(x, table []uint, k uint) {
	switch n := len(x); {
	case len(table) != 16*n:
		panic("bigmod: internal error: montSelect's table is not 16 entries")
	case n == 1024/64:
		montSelect1024(&x[0], &table[0], k)
	case n == 1536/64:
		montSelect1536(&x[0], &table[0], k)
	case n == 2048/64:
		montSelect2048(&x[0], &table[0], k)
	default:
		panic("bigmod: internal error: no montSelect for this size")
	}
}

// In nat_mont_amd64.s, written by armcrypto/gen: montMulGo and montSqrGo
// for one size each with MULX, ADCX and ADOX (BMI2 and ADX), and
// montSelectGo in SSE2.

//go:noescape
func montMul1024(x, a, b, m *uint, m0inv uint)

//go:noescape
func montSqr1024(x, a, m *uint, m0inv uint)

//go:noescape
func montMul1536(x, a, b, m *uint, m0inv uint)

//go:noescape
func montSqr1536(x, a, m *uint, m0inv uint)

//go:noescape
func montMul2048(x, a, b, m *uint, m0inv uint)

//go:noescape
func montSqr2048(x, a, m *uint, m0inv uint)

//go:noescape
func montSelect1024(x, table *uint, k uint)

//go:noescape
func montSelect1536(x, table *uint, k uint)

//go:noescape
func montSelect2048(x, table *uint, k uint)
