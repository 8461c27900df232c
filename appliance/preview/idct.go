package preview

// The inverse DCT, at 1, 2, 4 or 8 samples per block side.
//
// Each n-point transform out[x] = Σu C(u)·in[u]·cos((2x+1)uπ/2n), with
// C(0) = 1/√2 and C(u) = 1 otherwise, is split into its even and odd
// halves (out[x] and out[n-1-x] share them, with the odd half's sign
// flipped): 2 multiplications for 2 points, 6 for 4, 22 for 8, where the
// plain sum takes 4, 16 and 64. The cosines are integers scaled by 2^10;
// because every output is still a sum of one constant times one input per
// frequency, the results are those of the plain sum, bit for bit.
const (
	kR  = 724  // cos(π/4)·1024, and C(0)
	k18 = 946  // cos(π/8)
	k38 = 392  // cos(3π/8)
	k1  = 1004 // cos(π/16)
	k3  = 851  // cos(3π/16)
	k5  = 569  // cos(5π/16)
	k7  = 200  // cos(7π/16)
)

// idct turns a block's dequantized coefficients (natural order, each
// within clampCoef's bounds; only the ny×nx lowest frequencies are read)
// into ny rows of nx samples at dst, rows stride apart: f(x,y) = ¼ Σu Σv
// C(u)C(v) F(v,u) cos((2x+1)uπ/2nx) cos((2y+1)vπ/2ny), plus the level shift
// of 128. With nx = ny = 8 it is the full inverse DCT; with less, the
// block shrunk by 8/n (T.81's reduced inverse DCT), which for a subsampled
// component can differ across and down.
func idct(coef *[64]int32, nx, ny int, dst []byte, stride int) {
	if nx == 1 && ny == 1 {
		dst[0] = clamp8((coef[0]+4)>>3 + 128)
		return
	}
	// Along x, each frequency row v into tmp[v*8+x], ×4; rows of zeros,
	// most of them in a photo, are skipped.
	var tmp [64]int32
	rows := 0 // rows [0, rows) may hold something
	for v := range ny {
		row := coef[v*8 : v*8+8]
		ac := int32(0)
		for _, f := range row[1:nx] {
			ac |= f
		}
		if ac == 0 {
			if row[0] != 0 {
				t := (row[0]*kR + 128) >> 8
				for x := range nx {
					tmp[v*8+x] = t
				}
				rows = v + 1
			}
			continue
		}
		idct1(row, tmp[v*8:v*8+8], 1, nx, 8)
		rows = v + 1
	}
	// Down y, each column.
	var col, out [8]int32
	for x := range nx {
		if rows <= 1 { // the column is its first value: one level
			s := clamp8((tmp[x]*kR+1<<13)>>14 + 128)
			for y := range ny {
				dst[y*stride+x] = s
			}
			continue
		}
		for v := range ny {
			col[v] = tmp[v*8+x]
		}
		idct1(col[:], out[:], 1, ny, 14)
		for y := range ny {
			dst[y*stride+x] = clamp8(out[y] + 128)
		}
	}
}

// idct1 is the n-point transform of in[0], in[step]... into out[0..n),
// each rounded and shifted right by shift.
func idct1(in, out []int32, step, n int, shift uint) {
	r := int32(1) << (shift - 1)
	switch n {
	case 2:
		e, o := in[0]*kR, in[step]*kR
		out[0], out[1] = (e+o+r)>>shift, (e-o+r)>>shift
	case 4:
		e0, e1, o0, o1 := even4(in[0], in[step], in[2*step], in[3*step])
		out[0], out[3] = (e0+o0+r)>>shift, (e0-o0+r)>>shift
		out[1], out[2] = (e1+o1+r)>>shift, (e1-o1+r)>>shift
	case 8:
		a1, a3, a5, a7 := in[step], in[3*step], in[5*step], in[7*step]
		// The even half is the 4-point transform of the even frequencies.
		e0, e1, o0, o1 := even4(in[0], in[2*step], in[4*step], in[6*step])
		ev := [4]int32{e0 + o0, e1 + o1, e1 - o1, e0 - o0}
		od := [4]int32{
			a1*k1 + a3*k3 + a5*k5 + a7*k7,
			a1*k3 - a3*k7 - a5*k1 - a7*k5,
			a1*k5 - a3*k1 + a5*k7 + a7*k3,
			a1*k7 - a3*k5 + a5*k3 - a7*k1,
		}
		for x := range 4 {
			out[x] = (ev[x] + od[x] + r) >> shift
			out[7-x] = (ev[x] - od[x] + r) >> shift
		}
	}
}

// even4 is the 4-point transform's halves: out[0] = e0+o0, out[3] =
// e0-o0, out[1] = e1+o1, out[2] = e1-o1.
func even4(a0, a1, a2, a3 int32) (e0, e1, o0, o1 int32) {
	e0, e1 = (a0+a2)*kR, (a0-a2)*kR
	o0 = a1*k18 + a3*k38
	o1 = a1*k38 - a3*k18
	return
}

// clampCoef bounds a dequantized coefficient to what 8-bit samples give
// (±1024, with room): a corrupt file cannot overflow the sums.
func clampCoef(f int32) int32 {
	return min(max(f, -4096), 4096)
}
