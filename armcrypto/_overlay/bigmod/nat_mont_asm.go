// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140/bigmod for GOARCH=arm and GOARCH=amd64 (see
// armcrypto/main.go). Not compiled on its own.

//go:build ((arm && arm.6) || amd64) && !purego

package bigmod

// montAsm reports whether montMul and montSqr take moduli of n words:
// the RSA sizes (the CRT halves of 2048, 3072 and 4096-bit keys), where
// the core can run them (montCPU).
func montAsm(n int) bool {
	return montCPU() && (n == 1024/_W || n == 1536/_W || n == 2048/_W)
}

// montMul is montMulGo for the sizes montAsm takes. x may be a or b.
func montMul(x, a, b, m []uint, m0inv uint) {
	switch len(m) {
	case 1024 / _W:
		montMul1024(&x[0], &a[0], &b[0], &m[0], m0inv)
	case 1536 / _W:
		montMul1536(&x[0], &a[0], &b[0], &m[0], m0inv)
	case 2048 / _W:
		montMul2048(&x[0], &a[0], &b[0], &m[0], m0inv)
	default:
		panic("bigmod: internal error: no montMul for this size")
	}
}

// montSqr is montSqrGo for the sizes montAsm takes. x may be a.
func montSqr(x, a, m []uint, m0inv uint) {
	switch len(m) {
	case 1024 / _W:
		montSqr1024(&x[0], &a[0], &m[0], m0inv)
	case 1536 / _W:
		montSqr1536(&x[0], &a[0], &m[0], m0inv)
	case 2048 / _W:
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
	case n == 1024/_W:
		montSelect1024(&x[0], &table[0], k)
	case n == 1536/_W:
		montSelect1536(&x[0], &table[0], k)
	case n == 2048/_W:
		montSelect2048(&x[0], &table[0], k)
	default:
		panic("bigmod: internal error: no montSelect for this size")
	}
}

// In nat_arm32_arm.s and nat_mont_amd64.s, written by armcrypto/gen:
// montMulGo, montSqrGo and montSelectGo for one size each, with UMAAL
// (ARMv6 and later) or with MULX, ADCX and ADOX (and SSE2 for the
// selection).

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
