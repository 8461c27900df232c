package preview

import (
	"math"
	"math/rand/v2"
	"testing"
)

// plainIDCT is the transform as its formula reads, one product per
// frequency pair, with the same constants and rounding: what idct must
// equal bit for bit.
func plainIDCT(coef *[64]int32, nx, ny int, dst []byte, stride int) {
	table := func(n int) []int32 {
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
		return k
	}
	kx, ky := table(nx), table(ny)
	var tmp [64]int32
	for v := range ny {
		for x := range nx {
			var sum int32
			for u := range nx {
				sum += coef[v*8+u] * kx[x*nx+u]
			}
			tmp[v*nx+x] = (sum + 128) >> 8
		}
	}
	for y := range ny {
		for x := range nx {
			var sum int32
			for v := range ny {
				sum += tmp[v*nx+x] * ky[y*ny+v]
			}
			dst[y*stride+x] = clamp8((sum+1<<13)>>14 + 128)
		}
	}
}

func TestIDCTExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 4, 8} { // 1×1 is the DC alone, its own case
		for _, shape := range [][2]int{{n, n}, {n, n / 2}, {n / 2, n}} {
			nx, ny := shape[0], shape[1]
			if nx < 1 || ny < 1 {
				continue
			}
			for i := range 20000 {
				var coef [64]int32
				// Sparse blocks, dense ones, and the extremes.
				density := []int{2, 8, 64}[i%3]
				for k := range 64 {
					if rng.IntN(64) < density {
						coef[k] = int32(rng.IntN(8193)) - 4096
					}
				}
				if i%5 == 0 {
					coef = [64]int32{}
					coef[0] = int32(rng.IntN(8193)) - 4096
				}
				var got, want [64]byte
				idct(&coef, nx, ny, got[:], 8)
				plainIDCT(&coef, nx, ny, want[:], 8)
				if got != want {
					t.Fatalf("%d×%d block %v:\n got %v\nwant %v", nx, ny, coef, got, want)
				}
			}
		}
	}
}
