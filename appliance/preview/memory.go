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
// baseline one a row of blocks.
func jpegBytes(info photoInfo) int64 {
	w, h := int64(info.width), int64(info.height)
	if info.progressive {
		return min(maxCoefBytes, w*h*3/4) + w*64
	}
	return w * 64
}

// pngRowBytes is what decoding a PNG row by row takes: two rows at up to
// 8 bytes a pixel and the inflater's window.
func pngRowBytes(width int) int64 { return int64(width)*16 + 64<<10 }

// wholeBytes is what decoding a picture whole takes, from its header: the
// standard decoders' pixel formats (a 16-bit PNG is 8 bytes a pixel, not
// 4), half again for an interlaced PNG's passes, twice for a GIF's frames
// (the last and the one being read) and for a lossless WebP (its ARGB
// words, then the picture).
func wholeBytes(c image.Config, interlaced bool) int64 {
	px := int64(c.Width) * int64(c.Height)
	per := int64(8) // bytes a pixel, times two
	m := c.ColorModel
	switch {
	case m == color.GrayModel:
		per = 2
	case m == color.Gray16Model:
		per = 4
	case m == color.RGBAModel, m == color.NRGBAModel:
		per = 8
	case m == color.RGBA64Model, m == color.NRGBA64Model:
		per = 16
	case m == color.YCbCrModel:
		per = 3 // a lossy WebP: 4:2:0, 1.5 bytes a pixel
	case m == color.NYCbCrAModel:
		per = 5
	default:
		if _, ok := m.(color.Palette); ok {
			per = 2
		}
	}
	n := px * per / 2
	switch {
	case interlaced:
		n += n / 2
	case m == color.NRGBAModel:
		n *= 2 // a lossless WebP: its ARGB words, then the picture
	}
	if _, ok := m.(color.Palette); ok {
		n *= 2 // a GIF: the frame before and the one being read
	}
	return n + int64(c.Width)*4
}
