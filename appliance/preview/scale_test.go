package preview

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// boxMean is the shrink's definition in floating point: output pixel
// (ox, oy) of a picture of fw×fh eighths of a pixel (sw×sh samples, ch
// each) shrunk to dw×dh is the mean of the area it covers, sample c.
func boxMean(pix []byte, sw, sh, ch, fw, fh, dw, dh, ox, oy, c int) float64 {
	overlap := func(i, full, n, o int) float64 {
		a, b := float64(8*i), float64(min(8*i+8, full))
		lo, hi := float64(o)*float64(full)/float64(n), float64(o+1)*float64(full)/float64(n)
		return max(0, min(b, hi)-max(a, lo))
	}
	var sum, area float64
	for y := range sh {
		wy := overlap(y, fh, dh, oy)
		if wy == 0 {
			continue
		}
		for x := range sw {
			w := wy * overlap(x, fw, dw, ox)
			sum += w * float64(pix[(y*sw+x)*ch+c])
			area += w
		}
	}
	return sum / area
}

// TestShrinkMeans checks the shrink against the mean it stands for, at
// sizes with a last part-pixel, with 1, 3 and 4 samples a pixel, from
// rows and from planes, and that a flat picture stays flat.
func TestShrinkMeans(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		sw, sh := 1+rng.IntN(90), 1+rng.IntN(60)
		fw, fh := 8*sw-rng.IntN(8), 8*sh-rng.IntN(8) // the last sample may be part of one
		dw, dh := 1+rng.IntN(sw), 1+rng.IntN(sh)
		ch := []int{1, 3, 4}[i%3]
		flat := i%10 == 0
		pix := make([]byte, sw*sh*ch)
		for k := range pix {
			pix[k] = byte(rng.IntN(256))
			if flat {
				pix[k] = pix[k%ch]
			}
		}
		s := &shrink{fit: fixed(dw, dh)}
		s.begin(fw, fh, ch, false)
		dw, dh = s.dw, s.dh // (never larger than the picture)
		p := &shrink{fit: fixed(dw, dh)}
		p.begin(fw, fh, ch, false)
		for y := range sh {
			row := pix[y*sw*ch : (y+1)*sw*ch]
			s.row(row)
			if ch == 3 {
				a, b, c := make([]byte, sw), make([]byte, sw), make([]byte, sw)
				for x := range sw {
					a[x], b[x], c[x] = row[3*x], row[3*x+1], row[3*x+2]
				}
				p.planes(a, b, c)
			}
		}
		r, ok := s.result()
		if !ok {
			t.Fatalf("%d×%d (%d×%d eighths) to %d×%d: rows missing", sw, sh, fw, fh, dw, dh)
		}
		m := r.(*image.RGBA)
		if pm, _ := p.result(); ch == 3 && string(pm.(*image.RGBA).Pix) != string(m.Pix) {
			t.Fatalf("%d×%d to %d×%d: from planes, not the same picture as from rows", sw, sh, dw, dh)
		}
		for oy := range dh {
			for ox := range dw {
				for c := range min(ch, 3) {
					got := m.Pix[oy*m.Stride+4*ox+c]
					want := boxMean(pix, sw, sh, ch, fw, fh, dw, dh, ox, oy, c)
					if flat && float64(got) != math.Round(want) || math.Abs(float64(got)-want) > 0.51 {
						t.Fatalf("%d×%d (%d×%d eighths, %d a pixel) to %d×%d: (%d,%d) sample %d = %d, want %.2f",
							sw, sh, fw, fh, ch, dw, dh, ox, oy, c, got, want)
					}
				}
			}
		}
	}
}

// TestShrinkYCC checks that Y, Cb and Cr are shrunk as any samples are,
// into an image.YCbCr.
func TestShrinkYCC(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sw, sh, dw, dh := 61, 47, 23, 17
	pix := make([]byte, sw*sh*3)
	for k := range pix {
		pix[k] = byte(rng.IntN(256))
	}
	s := &shrink{fit: fixed(dw, dh)}
	s.begin(8*sw, 8*sh, 3, true)
	for y := range sh {
		s.row(pix[y*sw*3 : (y+1)*sw*3])
	}
	r, _ := s.result()
	m := r.(*image.YCbCr)
	for oy := range dh {
		for ox := range dw {
			for c, p := range [][]byte{m.Y, m.Cb, m.Cr} {
				got := p[m.YOffset(ox, oy)]
				want := boxMean(pix, sw, sh, 3, 8*sw, 8*sh, dw, dh, ox, oy, c)
				if math.Abs(float64(got)-want) > 0.51 {
					t.Fatalf("(%d,%d) sample %d = %d, want %.2f", ox, oy, c, got, want)
				}
			}
		}
	}
}

// TestOrient turns a picture every way EXIF says, as RGBA and as YCbCr.
func TestOrient(t *testing.T) {
	const w, h = 5, 3
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	for y := range h {
		for x := range w {
			v := byte(10*y + x)
			rgba.Pix[rgba.PixOffset(x, y)] = v
			ycc.Y[ycc.YOffset(x, y)], ycc.Cr[ycc.COffset(x, y)] = v, v
		}
	}
	// Where (x, y) lands for each orientation, as EXIF defines them.
	at := map[int]func(x, y int) (int, int){
		2: func(x, y int) (int, int) { return w - 1 - x, y },
		3: func(x, y int) (int, int) { return w - 1 - x, h - 1 - y },
		4: func(x, y int) (int, int) { return x, h - 1 - y },
		5: func(x, y int) (int, int) { return y, x },
		6: func(x, y int) (int, int) { return h - 1 - y, x },
		7: func(x, y int) (int, int) { return h - 1 - y, w - 1 - x },
		8: func(x, y int) (int, int) { return y, w - 1 - x },
	}
	for o, f := range at {
		r := orient(rgba, o).(*image.RGBA)
		c := orient(ycc, o).(*image.YCbCr)
		for y := range h {
			for x := range w {
				nx, ny := f(x, y)
				if got := r.Pix[r.PixOffset(nx, ny)]; got != byte(10*y+x) {
					t.Errorf("orientation %d, RGBA: (%d,%d) at (%d,%d) is %d", o, x, y, nx, ny, got)
				}
				if got := c.Cr[c.COffset(nx, ny)]; got != byte(10*y+x) {
					t.Errorf("orientation %d, YCbCr: (%d,%d) at (%d,%d) is %d", o, x, y, nx, ny, got)
				}
			}
		}
	}
}

// BenchmarkShrink shrinks what the 1024-pixel preview of a 12-megapixel
// photo decodes to (2000×1500, at 1/2) to 1024×768, from planes as the
// JPEG decoder hands them on.
func BenchmarkShrink(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	const w, h = 2000, 1500
	var planes [3][]byte
	for i := range planes {
		planes[i] = make([]byte, w)
		for x := range planes[i] {
			planes[i][x] = byte(rng.IntN(256))
		}
	}
	for b.Loop() {
		s := &shrink{fit: fitWithin(1024)}
		s.begin(8*w, 8*h, 3, true)
		for range h {
			s.planes(planes[0], planes[1], planes[2])
		}
	}
}
