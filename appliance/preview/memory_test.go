package preview

import (
	"image"
	"image/color"
	"testing"
)

// The estimates follow the decoders' pixel formats.
func TestWholeBytes(t *testing.T) {
	for _, c := range []struct {
		model      color.Model
		interlaced bool
		perPixel   float64
	}{
		{color.NRGBA64Model, true, 12}, // 8 bytes, half again for the passes
		{color.NRGBAModel, true, 6},
		{color.GrayModel, false, 1},
		{color.YCbCrModel, false, 1.5},
		{color.Palette{color.Black, color.White}, false, 2},
		{color.NRGBAModel, false, 8}, // a lossless WebP
	} {
		got := float64(wholeBytes(image.Config{ColorModel: c.model, Width: 1000, Height: 1000}, c.interlaced)-4000) / 1e6
		if got != c.perPixel {
			t.Errorf("wholeBytes(%T, interlaced %v) = %v bytes a pixel, want %v", c.model, c.interlaced, got, c.perPixel)
		}
	}
}
