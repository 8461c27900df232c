package preview

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

func jpegOf(t testing.TB, m image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ours decodes data at n samples per block side, shrunk to fit.
func ours(t testing.TB, data []byte, n int, fit func(w8, h8 int) (int, int)) *image.RGBA {
	t.Helper()
	s := &shrink{fit: fit}
	if err := decodeJPEG(bytes.NewReader(data), func(int, int, bool) int { return n }, s); err != nil {
		t.Fatalf("decode at %d: %v", n, err)
	}
	m, ok := s.result()
	if !ok {
		t.Fatalf("decode at %d: rows missing (%d of %d in, %d of %d out)", n, s.y, s.sh, s.oy, s.dh)
	}
	return toRGBA(m)
}

// toRGBA is a shrink's result in RGB: a JPEG's is in YCbCr, converted as
// image/color does.
func toRGBA(m image.Image) *image.RGBA {
	if m, ok := m.(*image.RGBA); ok {
		return m
	}
	out := image.NewRGBA(m.Bounds())
	draw.Draw(out, out.Bounds(), m, m.Bounds().Min, draw.Src)
	return out
}

// reference decodes data with image/jpeg and shrinks it the same way.
func reference(t testing.TB, data []byte, fit func(w8, h8 int) (int, int)) *image.RGBA {
	t.Helper()
	m, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bounds()
	s := &shrink{fit: fit}
	s.begin(8*b.Dx(), 8*b.Dy(), 3, false)
	row := make([]byte, 3*b.Dx())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := m.At(x, y).RGBA()
			row[3*(x-b.Min.X)], row[3*(x-b.Min.X)+1], row[3*(x-b.Min.X)+2] = byte(r>>8), byte(g>>8), byte(bl>>8)
		}
		s.row(row)
	}
	out, _ := s.result()
	return out.(*image.RGBA)
}

// psnr compares two pictures of one size, in dB.
func psnr(t testing.TB, a, b *image.RGBA) float64 {
	t.Helper()
	if a.Bounds().Size() != b.Bounds().Size() {
		t.Fatalf("sizes differ: %v and %v", a.Bounds().Size(), b.Bounds().Size())
	}
	var se float64
	n := 0
	for y := range a.Bounds().Dy() {
		for x := range a.Bounds().Dx() {
			pa, pb := a.PixOffset(a.Bounds().Min.X+x, a.Bounds().Min.Y+y), b.PixOffset(b.Bounds().Min.X+x, b.Bounds().Min.Y+y)
			for c := range 3 {
				d := float64(a.Pix[pa+c]) - float64(b.Pix[pb+c])
				se += d * d
				n++
			}
		}
	}
	if se == 0 {
		return 99
	}
	return 10 * math.Log10(255*255/(se/float64(n)))
}

func same(w8, h8 int) (int, int) { return w8 / 8, h8 / 8 }

func fixed(w, h int) func(int, int) (int, int) {
	return func(int, int) (int, int) { return w, h }
}

func TestDecodeMatchesImageJPEG(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    image.Image
	}{
		{"colour 4:2:0", previewtest.Picture(317, 203)},
		{"grey", func() image.Image {
			g := image.NewGray(image.Rect(0, 0, 250, 130))
			draw := previewtest.Picture(250, 130)
			for i := range g.Pix {
				g.Pix[i] = draw.Pix[4*i+1]
			}
			return g
		}()},
	} {
		data := jpegOf(t, tc.m, 90)
		full := ours(t, data, 8, same)
		if p := psnr(t, full, reference(t, data, same)); p < 50 {
			t.Errorf("%s at full scale: PSNR %.1f dB against image/jpeg, want over 50", tc.name, p)
		}
		// Reduced: against image/jpeg's full decode shrunk to the same size.
		for _, n := range []int{1, 2, 4} {
			b := tc.m.Bounds()
			fit := fixed(b.Dx()*n/8-1, b.Dy()*n/8-1)
			if p := psnr(t, ours(t, data, n, fit), reference(t, data, fit)); p < 28 {
				t.Errorf("%s at %d/8: PSNR %.1f dB against image/jpeg shrunk, want over 28", tc.name, n, p)
			}
		}
	}
}

// The fixtures were made from testdata/baseline.jpg (this picture,
// 320×240) with libjpeg-turbo's jpegtran: -progressive, and -restart 1.
func TestDecodeProgressiveAndRestarts(t *testing.T) {
	base, err := os.ReadFile("testdata/baseline.jpg")
	if err != nil {
		t.Fatal(err)
	}
	want := reference(t, base, fitWithin(40))
	for _, name := range []string{"progressive.jpg", "restart.jpg"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		got := ours(t, data, 1, fitWithin(40)) // progressive: 1/8 whatever is asked
		if p := psnr(t, got, want); p < 28 {
			t.Errorf("%s: PSNR %.1f dB against the baseline decoded by image/jpeg, want over 28", name, p)
		}
		// jpegtran changes no coefficient: at the scales a progressive JPEG
		// decodes at, the same picture as the baseline one.
		for _, n := range []int{1, 2} {
			if p := psnr(t, ours(t, data, n, same), ours(t, base, n, same)); p < 99 {
				t.Errorf("%s at %d/8: PSNR %.1f dB against the baseline, want the same picture", name, n, p)
			}
		}
		if name == "restart.jpg" {
			if p := psnr(t, ours(t, data, 8, same), reference(t, data, same)); p < 50 {
				t.Errorf("%s at full scale: PSNR %.1f dB", name, p)
			}
		}
	}
}

// Broken input is an error, never a panic or a hang.
func TestDecodeBrokenInput(t *testing.T) {
	data := jpegOf(t, previewtest.Picture(64, 48), 80)
	for cut := 0; cut < len(data); cut += 7 {
		s := &shrink{fit: same}
		decodeJPEG(bytes.NewReader(data[:cut]), func(int, int, bool) int { return 8 }, s)
	}
	for i := 2; i < len(data); i += 3 {
		bad := bytes.Clone(data)
		bad[i] ^= 0x5a
		s := &shrink{fit: same}
		decodeJPEG(bytes.NewReader(bad), func(int, int, bool) int { return 4 }, s)
	}
}

// Other samplings and progressive files, made with libjpeg-turbo's cjpeg
// from this picture at 301×199 (odd sizes: partial blocks and MCUs):
// 4:4:4, 4:2:2 with a restart every 3 rows of blocks, a progressive grey
// one and a progressive 4:4:4 one. Each against image/jpeg.
func TestDecodeSamplings(t *testing.T) {
	for _, name := range []string{"s444.jpg", "s422.jpg", "grey-progressive.jpg", "s444-progressive.jpg"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		progressive := strings.Contains(name, "progressive")
		if !progressive {
			if p := psnr(t, ours(t, data, 8, same), reference(t, data, same)); p < 50 {
				t.Errorf("%s at full scale: PSNR %.1f dB against image/jpeg, want over 50", name, p)
			}
		}
		for _, n := range []int{1, 2, 4} {
			if progressive && n > 2 {
				continue
			}
			fit := fixed(301*n/8-1, 199*n/8-1)
			if p := psnr(t, ours(t, data, n, fit), reference(t, data, fit)); p < 28 {
				t.Errorf("%s at %d/8: PSNR %.1f dB against image/jpeg shrunk, want over 28", name, n, p)
			}
		}
	}
}

// BenchmarkDecodePhoto decodes a 12-megapixel photo as the grid preview
// (1/8) and the iOS app's large preview (1/2) do.
func BenchmarkDecodePhoto(b *testing.B) {
	data := jpegOf(b, previewtest.Photo(4000, 3000, 12), 90)
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("%d-8", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				s := &shrink{fit: func(w8, h8 int) (int, int) { return w8 / 8 * n / 8, h8 / 8 * n / 8 }}
				if err := decodeJPEG(bytes.NewReader(data), func(int, int, bool) int { return n }, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
