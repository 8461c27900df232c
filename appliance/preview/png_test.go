package preview

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"testing"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

func pngOf(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// decoded is what a sink got, at full size.
func decodedPNG(t *testing.T, data []byte) *image.RGBA {
	t.Helper()
	s := &shrink{fit: same}
	if err := decodePNG(bytes.NewReader(data), s); err != nil {
		t.Fatal(err)
	}
	m, ok := s.result()
	if !ok {
		t.Fatal("rows missing")
	}
	return m.(*image.RGBA)
}

func TestDecodePNGKinds(t *testing.T) {
	src := previewtest.Picture(97, 61)
	alpha := image.NewNRGBA(src.Bounds())
	draw.Draw(alpha, alpha.Bounds(), src, image.Point{}, draw.Src)
	for i := 3; i < len(alpha.Pix); i += 4 {
		alpha.Pix[i] = byte(i / 4 % 256) // every alpha
	}
	grey := image.NewGray(src.Bounds())
	draw.Draw(grey, grey.Bounds(), src, image.Point{}, draw.Src)
	grey16 := image.NewGray16(src.Bounds())
	draw.Draw(grey16, grey16.Bounds(), src, image.Point{}, draw.Src)
	rgb16 := image.NewNRGBA64(src.Bounds())
	draw.Draw(rgb16, rgb16.Bounds(), alpha, image.Point{}, draw.Src)
	pal := image.NewPaletted(src.Bounds(), color.Palette{color.RGBA{0, 0, 0, 0}, color.RGBA{200, 10, 10, 255}, color.RGBA{10, 200, 10, 255}, color.RGBA{40, 40, 200, 255}})
	draw.Draw(pal, pal.Bounds(), src, image.Point{}, draw.Src)
	bw := image.NewPaletted(src.Bounds(), color.Palette{color.Black, color.White}) // 1 bit a pixel
	draw.Draw(bw, bw.Bounds(), src, image.Point{}, draw.Src)
	for name, m := range map[string]image.Image{"rgb": src, "rgba": alpha, "grey": grey, "grey16": grey16,
		"rgba64": rgb16, "palette with a clear colour": pal, "1-bit": bw} {
		data := pngOf(t, m)
		got := decodedPNG(t, data)
		ref, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		want := image.NewRGBA(ref.Bounds())
		draw.Draw(want, want.Bounds(), ref, image.Point{}, draw.Src)
		if p := psnr(t, got, want); p < 45 {
			t.Errorf("%s: PSNR %.1f dB against image/png", name, p)
		}
		// And alpha itself.
		for i := 3; i < len(got.Pix); i += 4 {
			if d := int(got.Pix[i]) - int(want.Pix[i]); d > 1 || d < -1 {
				t.Errorf("%s: alpha %d at %d, want %d", name, got.Pix[i], i/4, want.Pix[i])
				break
			}
		}
	}
}

func TestDecodePNGBroken(t *testing.T) {
	data := pngOf(t, previewtest.Picture(40, 30))
	for cut := 0; cut < len(data); cut += 5 {
		decodePNG(bytes.NewReader(data[:cut]), &shrink{fit: same})
	}
	for i := 8; i < len(data); i += 3 {
		bad := bytes.Clone(data)
		bad[i] ^= 0x33
		decodePNG(bytes.NewReader(bad), &shrink{fit: same})
	}
}

func pngBytes(m image.Image) []byte {
	var b bytes.Buffer
	png.Encode(&b, m)
	return b.Bytes()
}
