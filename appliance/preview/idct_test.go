package preview

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refIDCT is the transform as its formula reads, in floating point:
// f(x,y) = ¼ Σu Σv C(u)C(v) F(v,u) cos((2x+1)uπ/2nx) cos((2y+1)vπ/2ny)
// + 128, rounded to the nearest sample and clamped. Halves round up, as a
// shift rounds them (a DC term alone often lands on one), and within 10⁻⁶
// of a half counts as one: cos(π/4)/√2 is not quite ½ in floating point.
func refIDCT(coef *[64]int32, nx, ny int, dst []byte, stride int) {
	c := func(u int) float64 {
		if u == 0 {
			return 1 / math.Sqrt2
		}
		return 1
	}
	for y := range ny {
		for x := range nx {
			sum := 0.0
			for v := range ny {
				for u := range nx {
					sum += c(u) * c(v) * float64(coef[v*8+u]) *
						math.Cos(float64(2*x+1)*float64(u)*math.Pi/float64(2*nx)) *
						math.Cos(float64(2*y+1)*float64(v)*math.Pi/float64(2*ny))
				}
			}
			dst[y*stride+x] = byte(min(max(math.Floor(sum/4+128+0.5+1e-6), 0), 255))
		}
	}
}

// acOf is idct's ac for coef, as the entropy decoder finds it.
func acOf(coef *[64]int32, nx, ny int) uint32 {
	ac := uint32(0)
	for v := range ny {
		for u := range nx {
			if coef[v*8+u] != 0 && v+u > 0 {
				ac |= 1 << u
			}
		}
	}
	return ac
}

// forwardDCT is the forward DCT (T.81 A.3.3) of an 8×8 block of samples less
// 128, in floating point.
func forwardDCT(s *[64]float64) (f [64]float64) {
	c := func(u int) float64 {
		if u == 0 {
			return 1 / math.Sqrt2
		}
		return 1
	}
	for v := range 8 {
		for u := range 8 {
			sum := 0.0
			for y := range 8 {
				for x := range 8 {
					sum += s[y*8+x] * math.Cos(float64(2*x+1)*float64(u)*math.Pi/16) * math.Cos(float64(2*y+1)*float64(v)*math.Pi/16)
				}
			}
			f[v*8+u] = c(u) * c(v) * sum / 4
		}
	}
	return f
}

// randomBlock is the coefficients a JPEG holds for a random block: flat,
// smooth, noisy or both, of samples in [-128, 127] (or of lo..hi, IEEE
// 1180's ranges), through the forward DCT and a quantizer of steps 1 to
// 64 (all 1 half the time: the finest there is).
func randomBlock(rng *rand.Rand, lo, hi float64) [64]int32 {
	var s [64]float64
	base, gx, gy := lo+rng.Float64()*(hi-lo), rng.NormFloat64()*8, rng.NormFloat64()*8
	noise := []float64{0, 2, 12, hi - lo}[rng.IntN(4)]
	for y := range 8 {
		for x := range 8 {
			v := base + gx*float64(x-4) + gy*float64(y-4) + rng.NormFloat64()*noise
			if noise == hi-lo {
				v = lo + rng.Float64()*(hi-lo) // IEEE 1180's uniform samples
			}
			s[y*8+x] = min(max(math.Round(v), lo), hi)
		}
	}
	f := forwardDCT(&s)
	var coef [64]int32
	for k := range 64 {
		q := 1.0
		if rng.IntN(2) == 0 {
			q = float64(1 + rng.IntN(64))
		}
		coef[k] = clampCoef(int32(math.Round(f[k]/q) * q))
	}
	return coef
}

// TestIDCTAccuracy checks every shape against the formula, on blocks as
// JPEGs hold them: every sample within 1 (the peak error IEEE 1180 allows
// an 8×8 inverse DCT, which libjpeg's "islow" meets), and the errors'
// mean square and mean within IEEE 1180's bounds for a whole test.
func TestIDCTAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	blocks := make([][64]int32, 4000)
	for i := range blocks {
		lo, hi := -128.0, 127.0
		if i%4 == 3 { // IEEE 1180's widest range: samples of 9 bits
			lo, hi = -256, 255
		}
		blocks[i] = randomBlock(rng, lo, hi)
		if i%3 == 1 { // F0..F3 down and across alone, as most chroma blocks
			for k := range blocks[i] {
				if k/8 >= 4 || k%8 >= 4 {
					blocks[i][k] = 0
				}
			}
		}
	}
	for _, nx := range []int{1, 2, 4, 8} {
		for _, ny := range []int{1, 2, 4, 8} {
			var sq, sum float64
			n := 0
			for _, coef := range blocks {
				var got, want [64]byte
				in := coef // idct clears what it reads
				idct(&in, nx, ny, acOf(&coef, nx, ny), got[:], 8)
				refIDCT(&coef, nx, ny, want[:], 8)
				for k, f := range in {
					if f != 0 && k != 0 && k/8 < ny && k%8 < nx {
						t.Fatalf("%d×%d block %v: left %v", nx, ny, coef, in)
					}
				}
				for y := range ny {
					for x := range nx {
						d := float64(got[y*8+x]) - float64(want[y*8+x])
						if math.Abs(d) > 1 {
							t.Fatalf("%d×%d block %v:\n got %v\nwant %v", nx, ny, coef, got, want)
						}
						sq += d * d
						sum += d
						n++
					}
				}
			}
			if mse, me := sq/float64(n), sum/float64(n); mse > 0.02 || math.Abs(me) > 0.0015 {
				t.Errorf("%d×%d: mean square error %.4f (want at most 0.02), mean error %.5f (at most ±0.0015)", nx, ny, mse, me)
			}
		}
	}
}

// A bit of ac set for a column of zeros costs time, and may round a
// sample the other way (what skips the work also skips the first pass's
// rounding), but never more than the transform's error: every way through
// idct stays within 1 of the formula on the sparse blocks photos have.
func TestIDCTSkips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		var coef [64]int32
		coef[0] = int32(rng.IntN(2049)) - 1024
		for range rng.IntN(4) {
			coef[rng.IntN(64)] = int32(rng.IntN(401)) - 200
		}
		for _, n := range []int{1, 2, 4, 8} {
			nx, ny := n, []int{n, max(1, n/2), min(8, 2*n)}[i%3]
			var want [64]byte
			refIDCT(&coef, nx, ny, want[:], 8)
			for _, ac := range []uint32{acOf(&coef, nx, ny), 0xFF, 0x01} {
				if ac == 0x01 && acOf(&coef, nx, ny)&^1 != 0 {
					continue // only for blocks whose rows are flat
				}
				var got [64]byte
				in := coef
				idct(&in, nx, ny, ac, got[:], 8)
				for k := range got {
					if d := int(got[k]) - int(want[k]); d < -1 || d > 1 {
						t.Fatalf("%d×%d block %v with ac %08b:\n got %v\nwant %v", nx, ny, coef, ac, got, want)
					}
				}
			}
		}
	}
}

// TestIDCTConstants checks the fixed-point constants against the cosines
// they stand for.
func TestIDCTConstants(t *testing.T) {
	c := func(k float64) float64 { return math.Sqrt2 * math.Cos(k*math.Pi/16) }
	for _, k := range []struct {
		name  string
		got   int32
		value float64
	}{
		{"c1", c1, c(1)}, {"c2", c2, c(2)}, {"c5", c5, c(5)}, {"c7", c7, c(7)},
		{"c6", c6, c(6)}, {"c2m6", c2m6, c(2) - c(6)}, {"c2p6", c2p6, c(2) + c(6)},
		{"c3", c3, c(3)}, {"c3m5", c3m5, c(3) - c(5)}, {"c3m7", c3m7, c(3) - c(7)},
		{"c3p5", c3p5, c(3) + c(5)}, {"c1p3", c1p3, c(1) + c(3)},
		{"odd1", odd1, c(1) + c(3) - c(5) - c(7)}, {"odd3", odd3, c(1) + c(3) + c(5) - c(7)},
		{"odd5", odd5, c(1) + c(3) - c(5) + c(7)}, {"odd7", odd7, -c(1) + c(3) + c(5) - c(7)},
	} {
		if want := int32(math.Round(k.value * (1 << constBits))); k.got != want {
			t.Errorf("%s = %d, want %d (%.9f)", k.name, k.got, want, k.value)
		}
	}
}
