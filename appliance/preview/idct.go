package preview

// The inverse DCT, at 1, 2, 4 or 8 samples per block side.
//
// Along one side, n samples come from the n lowest of the block's 8
// frequencies: g(x) = ½ Σ_{u<n} C(u)·F(u)·cos((2x+1)uπ/2n), with C(0) =
// 1/√2 and C(u) = 1 otherwise (T.81's inverse DCT at n = 8; at less, each
// sample is near the mean of the 8/n it stands for: libjpeg's reduced
// sizes). Written g = G/(2√2), with
//
//	G(x) = F(0) + Σ_{u≥1} √2·cos((2x+1)uπ/2n)·F(u),
//
// the two sides' factors make 1/8, a shift at the end, and G is a sum of
// integers times constants of the form c_k = √2·cos(kπ/16). Each size has
// its own G, from its factorisation:
//
//   - 8 points: the even frequencies are the 4-point transform (below);
//     the odd ones are the 4×4 matrix of ±c1, ±c3, ±c5, ±c7, which sums of
//     pairs of inputs turn into 9 multiplications (Loeffler, Ligtenberg
//     and Moschytz's, as T.81's decoders use it): 12 in all, where the
//     plain sum takes 64; 10 where F4..F7 are zero, as in most chroma
//     blocks (evenHalf, oddHalf).
//   - 4 points: G(x) = F0 ± F2 ± (a rotation of F1 and F3 by 3π/8), the
//     rotation in 3 multiplications.
//   - 2 points: F0 ± F1, as √2·cos(π/4) = 1. No multiplication.
//   - 1 point: F0 (the DC term), and a block with nothing else is one
//     value however many samples it has.
//
// In fixed point with the constants ×2^13, the first pass (down the
// columns) keeps 2 bits below its results' units and the second (along
// the rows) rounds once, at the end: libjpeg's "islow" precision, within 1
// of the exact transform (idct_test.go checks it against the formula in
// floating point). Sums of int32 stay in range for the coefficients an
// 8-bit picture gives; what a damaged file gives may wrap, which Go
// defines, and only makes its samples wrong: each is clamped to a byte.
const (
	constBits = 13
	pass1Bits = 2

	// c_k = √2·cos(kπ/16) and the sums the factorisations use, ×2^13.
	c1   = 11363 // c1, c2, c5, c7: for the blocks of F0..F3 alone
	c2   = 10703 //
	c5   = 6436  //
	c7   = 2260  //
	c6   = 4433  // and c2 - c6, c2 + c6: the 3π/8 rotation
	c2m6 = 6270  //
	c2p6 = 15137 //
	c3   = 9633  // the odd part: c3 on the sum of all four inputs,
	c3m5 = 3196  // then on the pairs (1,5), (1,7), (3,7), (3,5),
	c3m7 = 7373  //
	c3p5 = 16069 //
	c1p3 = 20995 //
	odd1 = 12299 // and on each input: c1+c3-c5-c7 for F1,
	odd3 = 25172 // c1+c3+c5-c7 for F3,
	odd5 = 16819 // c1+c3-c5+c7 for F5,
	odd7 = 2446  // -c1+c3+c5-c7 for F7

	// bias is added to the DC term in the second pass, in its units:
	// half of the final shift's step, and the level shift of 128.
	bias = 1<<(pass1Bits+2) + 128<<(pass1Bits+3)
)

// idct turns a block's dequantized coefficients (natural order; only the
// ny×nx lowest frequencies are read)
// into ny rows of nx samples at dst, rows stride apart: f(x,y) = g_y(g_x),
// plus the level shift of 128. With nx = ny = 8 it is the full inverse
// DCT; with less, the block shrunk by 8/n (T.81's reduced inverse DCT),
// which for a subsampled component can differ across and down.
//
// ac has bit u set where column u of the ny×nx coefficients read holds a
// coefficient that is not zero, the DC term not counted (the entropy
// decoder knows it for nothing): with none, the block is its DC term; a
// column without is skipped, and with none past column 0 the rows are
// flat (see narrow). A bit set for a zero costs time and may round a sample
// the other way, never more.
//
// The columns of ac are left zero (the DC term aside, which the next
// block's replaces): where the coefficients were, so the decoder need not
// clear every block before the next (3% of the board's decode at 1/2).
func idct(coef *[64]int32, nx, ny int, ac uint32, dst []byte, stride int) {
	if ac == 0 {
		v := clamp8((coef[0] + 4 + 128<<3) >> 3)
		for y := range ny {
			row := dst[y*stride : y*stride+nx]
			for x := range row {
				row[x] = v
			}
		}
		return
	}
	if nx == 2 && ny == 2 { // (a 4:2:0 picture's chroma at 1/8): sums alone
		a0, a1, a8, a9 := coef[0]+4+128<<3, coef[1], coef[8], coef[9]
		coef[1], coef[8], coef[9] = 0, 0, 0
		r0, r1 := dst[0:2:2], dst[stride:stride+2:stride+2]
		r0[0], r0[1] = clamp8((a0+a1+a8+a9)>>3), clamp8((a0-a1+a8-a9)>>3)
		r1[0], r1[1] = clamp8((a0+a1-a8-a9)>>3), clamp8((a0-a1-a8+a9)>>3)
		return
	}
	if ac&^1 == 0 || nx <= 2 {
		narrow(coef, nx, ny, dst, stride)
		return
	}
	// ws: the first pass's results, row y of column u at ws[8y+u].
	var ws [64]int32
	switch ny {
	case 8:
		down8(coef, &ws, nx, ac)
	case 4:
		down4(coef, &ws, nx, ac)
	case 2:
		for u := range nx {
			u &= 7
			a0, a1 := coef[u], coef[8+u]
			coef[u], coef[8+u] = 0, 0
			ws[u], ws[8+u] = (a0+a1)<<pass1Bits, (a0-a1)<<pass1Bits
		}
	default:
		for u := range nx {
			u &= 7
			ws[u], coef[u] = coef[u]<<pass1Bits, 0
		}
	}
	if nx == 8 {
		along8(&ws, ny, ac, dst, stride)
	} else {
		along4(&ws, ny, dst, stride)
	}
}

// narrow is idct for the blocks whose rows are flat (nothing past column
// 0) and those of 1 or 2 columns, where the pass along the rows
// multiplies nothing: each row is column 0's value, or, of 2 columns,
// F(v,0) ± F(v,1) (as √2·cos(π/4) = 1). So only the columns' transforms
// are computed, each rounded once, to samples.
func narrow(coef *[64]int32, nx, ny int, dst []byte, stride int) {
	var col [2][8]int32
	for v := range ny {
		v &= 7
		a0, a1 := coef[8*v], int32(0)
		if nx > 1 {
			a1 = coef[8*v+1]
		}
		col[0][v], col[1][v] = a0+a1, a0-a1
		for u := range nx {
			coef[(8*v+u)&63] = 0
		}
	}
	var out [2][8]byte
	for i := range min(nx, 2) {
		samples(&col[i], ny, &out[i])
	}
	for y := range ny {
		row := dst[y*stride : y*stride+nx]
		if nx == 2 {
			row[0], row[1] = out[0][y], out[1][y]
			continue
		}
		for x := range row {
			row[x] = out[0][y]
		}
	}
}

// samples is the ny-point G of a column of coefficients, as samples of a
// block with flat rows: G/8, plus the level shift, rounded once.
func samples(a *[8]int32, ny int, out *[8]byte) {
	const s = constBits + 3
	dc := a[0] + 4 + 128<<3 // rounding, and the level shift
	switch ny {
	case 8:
		e0, e1, e2, e3 := even8(dc, a[2], a[4], a[6], 0)
		a1, a3, a5, a7 := a[1], a[3], a[5], a[7]
		z := (a1 + a3 + a5 + a7) * c3
		z17, z35 := (a1+a7)*-c3m7, (a3+a5)*-c1p3
		z15, z37 := z-(a1+a5)*c3m5, z-(a3+a7)*c3p5
		o0, o1 := a1*odd1+z17+z15, a3*odd3+z35+z37
		o2, o3 := a5*odd5+z35+z15, a7*odd7+z17+z37
		out[0], out[7] = clamp8((e0+o0)>>s), clamp8((e0-o0)>>s)
		out[1], out[6] = clamp8((e1+o1)>>s), clamp8((e1-o1)>>s)
		out[2], out[5] = clamp8((e2+o2)>>s), clamp8((e2-o2)>>s)
		out[3], out[4] = clamp8((e3+o3)>>s), clamp8((e3-o3)>>s)
	case 4:
		g0, g1, g2, g3 := g4(dc, a[1], a[2], a[3], 0)
		out[0], out[1], out[2], out[3] = clamp8(g0>>s), clamp8(g1>>s), clamp8(g2>>s), clamp8(g3>>s)
	case 2:
		out[0], out[1] = clamp8((dc+a[1])>>3), clamp8((dc-a[1])>>3)
	default:
		out[0] = clamp8(dc >> 3)
	}
}

// down8 is the first pass for 8 rows: the 8-point G of each column u <
// nx, into ws, ×2^pass1Bits. A column whose AC terms are all zero is its
// DC term 8 times; one with nothing, zeros (ws starts so).
func down8(coef, ws *[64]int32, nx int, ac uint32) {
	const s, p = constBits - pass1Bits, pass1Bits
	const r = 1 << (s - 1) // rounds to the results' units
	for u := range nx {
		u &= 7 // (for the compiler: u < 8, no bounds checks below)
		if ac&(1<<u) == 0 {
			if u == 0 {
				dc := coef[0] << p
				for y := range 8 {
					ws[8*y] = dc
				}
			}
			continue
		}
		a0, a1, a2, a3 := coef[u], coef[8+u], coef[16+u], coef[24+u]
		a4, a5, a6, a7 := coef[32+u], coef[40+u], coef[48+u], coef[56+u]
		coef[u], coef[8+u], coef[16+u], coef[24+u] = 0, 0, 0, 0
		coef[32+u], coef[40+u], coef[48+u], coef[56+u] = 0, 0, 0, 0
		if a1|a2|a3|a4|a5|a6|a7 == 0 {
			dc := a0 << p
			for y := range 8 {
				ws[8*y+u] = dc
			}
			continue
		}
		var e0, e1, e2, e3, o0, o1, o2, o3 int32
		if a4|a5|a6|a7 == 0 {
			e0, e1, e2, e3 = evenHalf(a0, a2, r)
			o0, o1, o2, o3 = oddHalf(a1, a3)
		} else {
			e0, e1, e2, e3 = even8(a0, a2, a4, a6, r)
			z := (a1 + a3 + a5 + a7) * c3 // the odd half
			z17, z35 := (a1+a7)*-c3m7, (a3+a5)*-c1p3
			z15, z37 := z-(a1+a5)*c3m5, z-(a3+a7)*c3p5
			o0, o1 = a1*odd1+z17+z15, a3*odd3+z35+z37
			o2, o3 = a5*odd5+z35+z15, a7*odd7+z17+z37
		}
		ws[u], ws[56+u] = (e0+o0)>>s, (e0-o0)>>s
		ws[8+u], ws[48+u] = (e1+o1)>>s, (e1-o1)>>s
		ws[16+u], ws[40+u] = (e2+o2)>>s, (e2-o2)>>s
		ws[24+u], ws[32+u] = (e3+o3)>>s, (e3-o3)>>s
	}
}

// even8 is the even half of the 8-point G (the 4-point G of F0, F2, F4,
// F6), ×2^constBits, with r added to each: G(x) and G(7-x) are
// e_x ± the odd half's o_x.
func even8(a0, a2, a4, a6, r int32) (e0, e1, e2, e3 int32) {
	t0 := (a0+a4)<<constBits + r
	t1 := (a0-a4)<<constBits + r
	z := (a2 + a6) * c6
	r0 := z + a2*c2m6 // c2·F2 + c6·F6
	r1 := z - a6*c2p6 // c6·F2 - c2·F6
	return t0 + r0, t1 + r1, t1 - r1, t0 - r0
}

// The odd half of the 8-point G, ×2^constBits, is
//
//	o0 = c1·F1 + c3·F3 + c5·F5 + c7·F7
//	o1 = c3·F1 - c7·F3 - c1·F5 - c5·F7
//	o2 = c5·F1 - c1·F3 + c7·F5 + c3·F7
//	o3 = c7·F1 - c5·F3 + c3·F5 - c1·F7
//
// Each output takes c3 times the sum of all four, less a constant times
// the sums of two pairs, plus a constant times its own input: o0's F5
// term, c3 - (c3-c5), is c5, its F1 term c3 - (c3-c7) - (c3-c5) +
// (c1+c3-c5-c7) is c1, and so on for the sixteen. It is written out in
// down8 and along8, as a function the compiler would not inline.

// evenHalf is even8 with F4 = F6 = 0, and oddHalf the odd half with F5 =
// F7 = 0: the 8-point G of F0..F3 alone, as most of the 8×8 blocks a
// preview decodes have (a subsampled chroma's, decoded at 1/2 or 1/4):
// 10 multiplications, not 12, and half the sums.
func evenHalf(a0, a2, r int32) (e0, e1, e2, e3 int32) {
	t := a0<<constBits + r
	r0, r1 := a2*c2, a2*c6
	return t + r0, t + r1, t - r1, t - r0
}

func oddHalf(a1, a3 int32) (o0, o1, o2, o3 int32) {
	return a1*c1 + a3*c3, a1*c3 - a3*c7, a1*c5 - a3*c1, a1*c7 - a3*c5
}

// down4 is the first pass for 4 rows: the 4-point G of each column u <
// nx, ×2^pass1Bits.
func down4(coef, ws *[64]int32, nx int, ac uint32) {
	const s, p = constBits - pass1Bits, pass1Bits
	const r = 1 << (s - 1)
	for u := range nx {
		u &= 7
		if ac&(1<<u) == 0 {
			if u == 0 {
				dc := coef[0] << p
				ws[0], ws[8], ws[16], ws[24] = dc, dc, dc, dc
			}
			continue
		}
		a0, a1, a2, a3 := coef[u], coef[8+u], coef[16+u], coef[24+u]
		coef[u], coef[8+u], coef[16+u], coef[24+u] = 0, 0, 0, 0
		if a1|a2|a3 == 0 {
			dc := a0 << p
			ws[u], ws[8+u], ws[16+u], ws[24+u] = dc, dc, dc, dc
			continue
		}
		g0, g1, g2, g3 := g4(a0, a1, a2, a3, r)
		ws[u], ws[8+u], ws[16+u], ws[24+u] = g0>>s, g1>>s, g2>>s, g3>>s
	}
}

// g4 is the 4-point G, ×2^constBits, with r added to each.
func g4(a0, a1, a2, a3, r int32) (g0, g1, g2, g3 int32) {
	t0 := (a0+a2)<<constBits + r
	t1 := (a0-a2)<<constBits + r
	z := (a1 + a3) * c6
	o0 := z + a1*c2m6 // c2·F1 + c6·F3
	o1 := z - a3*c2p6 // c6·F1 - c2·F3
	return t0 + o0, t1 + o1, t1 - o1, t0 - o0
}

// along8 is the second pass for 8 columns: each row's 8-point G, shifted
// to samples, clamped. With nothing in columns 4 to 7 (ac), the rows'
// F4..F7 are zero.
func along8(ws *[64]int32, ny int, ac uint32, dst []byte, stride int) {
	const s = constBits + pass1Bits + 3
	half := ac < 1<<4
	for y := range ny {
		w := (*[8]int32)(ws[(8*y)&63:])
		o := (*[8]byte)(dst[y*stride:])
		var e0, e1, e2, e3, o0, o1, o2, o3 int32
		if half {
			e0, e1, e2, e3 = evenHalf(w[0]+bias, w[2], 0)
			o0, o1, o2, o3 = oddHalf(w[1], w[3])
		} else {
			e0, e1, e2, e3 = even8(w[0]+bias, w[2], w[4], w[6], 0)
			a1, a3, a5, a7 := w[1], w[3], w[5], w[7] // the odd half
			z := (a1 + a3 + a5 + a7) * c3
			z17, z35 := (a1+a7)*-c3m7, (a3+a5)*-c1p3
			z15, z37 := z-(a1+a5)*c3m5, z-(a3+a7)*c3p5
			o0, o1 = a1*odd1+z17+z15, a3*odd3+z35+z37
			o2, o3 = a5*odd5+z35+z15, a7*odd7+z17+z37
		}
		o[0], o[7] = clamp8((e0+o0)>>s), clamp8((e0-o0)>>s)
		o[1], o[6] = clamp8((e1+o1)>>s), clamp8((e1-o1)>>s)
		o[2], o[5] = clamp8((e2+o2)>>s), clamp8((e2-o2)>>s)
		o[3], o[4] = clamp8((e3+o3)>>s), clamp8((e3-o3)>>s)
	}
}

// along4 is the second pass for 4 columns.
func along4(ws *[64]int32, ny int, dst []byte, stride int) {
	const s = constBits + pass1Bits + 3
	for y := range ny {
		w := (*[4]int32)(ws[(8*y)&63:])
		o := (*[4]byte)(dst[y*stride:])
		g0, g1, g2, g3 := g4(w[0]+bias, w[1], w[2], w[3], 0)
		o[0], o[1], o[2], o[3] = clamp8(g0>>s), clamp8(g1>>s), clamp8(g2>>s), clamp8(g3>>s)
	}
}

// clampCoef bounds a dequantized coefficient to what 8-bit samples give
// (±1024, with room).
func clampCoef(f int32) int32 {
	return min(max(f, -4096), 4096)
}
