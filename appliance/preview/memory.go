package preview

// What a preview takes in memory, estimated before it is made so that it
// can draw that much from the box's budget (package budget) first: a
// preview the budget cannot hold is refused before its decode starts,
// never cut off in the middle. The estimates are upper bounds of what
// the decoders allocate, from what a picture's header says: its size,
// its pixel format, whether it is interlaced or progressive.

import (
	"image"
	"image/color"
)

// outputBytes is the preview itself: the shrunk picture (4 bytes a pixel,
// at most side×side) and its encoding.
func outputBytes(sp spec) int64 {
	s := int64(sp.side)
	return s*s*4 + s*s
}

// jpegBytes is what decoding a JPEG row by row takes: a progressive one
// keeps its coefficients at the chosen scale (at most maxCoefBytes, and
// about 16 bytes a block a component at the scales previews use), a
// baseline one a row of blocks; either, the decoder's tables (45 KB, most
// of them the one-look-up Huffman tables) and its reader's buffer (32 KB).
func jpegBytes(info photoInfo) int64 {
	const tables = 96 << 10
	w, h := int64(info.width), int64(info.height)
	if info.progressive {
		return min(maxCoefBytes, w*h*3/4) + w*64 + tables
	}
	return w*64 + tables
}

// pngRowBytes is what decoding a PNG row by row takes: two rows at up to
// 8 bytes a pixel and the inflater's window.
func pngRowBytes(width int) int64 { return int64(width)*16 + 64<<10 }

// wholeBytes is what decoding a picture whole takes, from its header: its
// pixels in the standard decoder's format (a 16-bit PNG is 8 bytes a
// pixel, not 4), half again for an interlaced PNG's passes, twice for a
// lossless WebP (its ARGB words, then the picture) and for a GIF (the
// frame before and the one being read), and a row to shrink from.
func wholeBytes(c image.Config, interlaced bool) int64 {
	m := c.ColorModel
	n := pixelBytes(m, int64(c.Width)*int64(c.Height))
	_, paletted := m.(color.Palette)
	switch {
	case interlaced:
		n += n / 2
	case m == color.NRGBAModel, paletted:
		n *= 2
	}
	return n + int64(c.Width)*4
}

// pixelBytes is what px pixels of model m take.
func pixelBytes(m color.Model, px int64) int64 {
	if _, ok := m.(color.Palette); ok {
		return px
	}
	switch m {
	case color.GrayModel:
		return px
	case color.Gray16Model:
		return 2 * px
	case color.RGBAModel, color.NRGBAModel:
		return 4 * px
	case color.YCbCrModel: // a lossy WebP: 4:2:0
		return px * 3 / 2
	case color.NYCbCrAModel:
		return px * 5 / 2
	}
	return 8 * px // 16 bits a sample, or a format not known: the most
}
