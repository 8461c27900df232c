package preview

import "math"

// idctTables[n] holds, for n outputs from the n lowest frequencies,
// K[x][u] = C(u)·cos((2x+1)uπ/2n) scaled by 2^10, with C(0) = 1/√2 and
// C(u) = 1 otherwise.
var idctTables = func() [9][]int32 {
	var t [9][]int32
	for _, n := range []int{1, 2, 4, 8} {
		k := make([]int32, n*n)
		for x := range n {
			for u := range n {
				c := 1.0
				if u == 0 {
					c = 1 / math.Sqrt2
				}
				k[x*n+u] = int32(math.Round(c * math.Cos(float64(2*x+1)*float64(u)*math.Pi/float64(2*n)) * 1024))
			}
		}
		t[n] = k
	}
	return t
}()

// idct turns a block's dequantized coefficients (natural order; only the
// ny×nx lowest frequencies are read) into ny rows of nx samples at dst,
// rows stride apart: f(x,y) = ¼ Σu Σv C(u)C(v) F(v,u) cos((2x+1)uπ/2nx)
// cos((2y+1)vπ/2ny), plus the level shift of 128. With nx = ny = 8 it is
// the full inverse DCT; with less, the block shrunk by 8/n (T.81's reduced
// inverse DCT), which for a subsampled component can differ across and
// down.
func idct(coef *[64]int32, nx, ny int, dst []byte, stride int) {
	if nx == 1 && ny == 1 {
		dst[0] = clamp8((clampCoef(coef[0])+4)>>3 + 128)
		return
	}
	kx, ky := idctTables[nx], idctTables[ny]
	var tmp [64]int32 // tmp[v*nx+x]: each frequency row along x, ×4
	for v := range ny {
		row := coef[v*8 : v*8+nx]
		for x := range nx {
			k := kx[x*nx : x*nx+nx]
			var sum int32
			for u, f := range row {
				sum += clampCoef(f) * k[u]
			}
			tmp[v*nx+x] = (sum + 128) >> 8
		}
	}
	for y := range ny {
		k := ky[y*ny : y*ny+ny]
		out := dst[y*stride : y*stride+nx]
		for x := range nx {
			var sum int32
			for v := range ny {
				sum += tmp[v*nx+x] * k[v]
			}
			out[x] = clamp8((sum+1<<13)>>14 + 128)
		}
	}
}

// clampCoef bounds a dequantized coefficient to what 8-bit samples give
// (±1024, with room): a corrupt file cannot overflow the sums.
func clampCoef(f int32) int32 {
	return min(max(f, -4096), 4096)
}
