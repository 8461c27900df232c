package preview

import (
	"image"
)

// shrink is a rowSink that averages the rows it is given down to the size
// fit picks (each output pixel the mean of the area of the picture it
// covers), holding one output row of sums: the memory of the preview,
// not of the picture.
//
// Sizes are in eighths of an input sample: a JPEG decoded at 1/8 has a
// last column of blocks that covers only part of a block, and the output
// must not stretch it to a whole one.
//
// The sums are of 32 bits, as the board's core adds and multiplies them
// in one instruction each (64-bit ones take two to four, and a 64-bit
// division a loop in the runtime): the share of an output pixel each
// input column and row has is a fraction ×2^16, rounded so that each
// output pixel's shares add up to exactly 2^16 (a flat picture stays
// flat); a row shrunk along x keeps 8 bits below its samples' units.
// Along x, the input columns are walked in order with the output column's
// sums in registers, stored once it is whole.
//
// Samples of Y, Cb and Cr (a JPEG's) are averaged as they are and the
// preview is made of them (an image.YCbCr, which the JPEG encoder takes
// as it is): the conversion to RGB is linear, so the mean of converted
// pixels is the converted mean, but where a pixel's colour is clamped;
// and a JPEG made from the RGB would convert it back.
type shrink struct {
	fit func(w8, h8 int) (int, int) // the output size for a picture of w8×h8 eighths

	fw, fh, sw, sh, dw, dh, ch int
	ycc                        bool
	cols, rows                 []share  // per input column and row
	tmp                        []uint32 // the input row shrunk along x: ×2^16
	acc, nxt                   []uint32 // the output row being made and the next: ×2^24
	y, oy                      int
	rgba                       *image.RGBA  // the output, or
	yc                         *image.YCbCr // with ycc, the output (4:4:4)
}

// share says where an input column (or row) goes: w/2^16 of output column
// o, and w2/2^16 of o+1; end says o is whole with it.
type share struct {
	o     int
	w, w2 uint32
	end   bool
}

// shares divides n input samples, the last of them ending at full (in
// eighths: a last one may cover less than 8), among out output ones.
func shares(n, full, out int) []share {
	// Input sample i covers [8i, min(8i+8, full)) eighths, output sample o
	// [o·full/out, (o+1)·full/out): input sample i starts at
	// (8i·out·2^16 + full/2) / full, in output samples ×2^16, stepped to
	// with 32-bit sums (one 64-bit division, not one a sample: the board's
	// core has no divide instruction).
	step := uint64(8*out) << 16
	q, r, f := uint32(step/uint64(full)), uint32(step%uint64(full)), uint32(full)
	pos, rem := uint32(0), f/2
	s := make([]share, n)
	for i := range s {
		start := pos
		if pos, rem = pos+q, rem+r; rem >= f {
			pos, rem = pos+1, rem-f
		}
		end := pos
		if i == n-1 {
			end = uint32(out) << 16 // ends at full
		}
		o := int(start >> 16)
		edge := uint32(o+1) << 16
		s[i] = share{o: o, w: min(end, edge) - start, w2: end - min(end, edge), end: end >= edge}
	}
	return s
}

// begin takes the picture's size and samples: ch a pixel (1: grey, 3, 4:
// RGBA premultiplied), and with ycc, 3 of Y, Cb and Cr (JFIF's).
func (s *shrink) begin(w8, h8, ch int, ycc bool) error {
	s.fw, s.fh, s.ch, s.ycc = w8, h8, ch, ycc
	s.sw, s.sh = (w8+7)/8, (h8+7)/8
	s.dw, s.dh = s.fit(w8, h8)
	s.dw, s.dh = max(1, min(s.dw, w8/8)), max(1, min(s.dh, h8/8)) // never larger
	s.cols, s.rows = shares(s.sw, w8, s.dw), shares(s.sh, h8, s.dh)
	s.tmp = make([]uint32, (s.dw+1)*ch) // +1: the last column's w2 (0) is stored past the end
	s.acc = make([]uint32, s.dw*ch)
	s.nxt = make([]uint32, s.dw*ch)
	s.rgba, s.yc = nil, nil
	if ycc {
		s.yc = image.NewYCbCr(image.Rect(0, 0, s.dw, s.dh), image.YCbCrSubsampleRatio444)
	} else {
		s.rgba = image.NewRGBA(image.Rect(0, 0, s.dw, s.dh))
	}
	s.y, s.oy = 0, 0
	return nil
}

// row takes a row of ch samples a pixel.
func (s *shrink) row(b []byte) {
	if s.y >= s.sh {
		return
	}
	ch := s.ch
	b = b[:len(s.cols)*ch]
	var sum [4]uint32
	for x, c := range s.cols {
		p := b[x*ch : x*ch+ch]
		for i, v := range p {
			sum[i&3] += c.w * uint32(v)
		}
		if c.end {
			t := s.tmp[c.o*ch : c.o*ch+ch]
			for i, v := range p {
				t[i], sum[i&3] = sum[i&3], c.w2*uint32(v)
			}
		}
	}
	s.down()
}

// planes takes a row of a 3-sample picture (ycc's, say) as its three
// planes' rows: the same as row of the samples interleaved, with no
// interleaving (the decoder's planes are at hand).
func (s *shrink) planes(a, b, c []byte) {
	if s.y >= s.sh {
		return
	}
	walk3(s.cols, a, b, c, s.tmp)
	s.down()
}

// walk3 is planes' loop, on its own with few values, so that the compiler
// keeps them in registers: the output columns are whole one after the
// other, so where the sums go is a count, not a look-up.
func walk3(cols []share, a, b, c []byte, tmp []uint32) {
	a, b, c = a[:len(cols)], b[:len(cols)], c[:len(cols)]
	var s0, s1, s2 uint32
	j := 0
	for x, sh := range cols {
		v0, v1, v2 := uint32(a[x]), uint32(b[x]), uint32(c[x])
		s0 += sh.w * v0
		s1 += sh.w * v1
		s2 += sh.w * v2
		if sh.end {
			tmp[j], tmp[j+1], tmp[j+2] = s0, s1, s2
			s0, s1, s2 = sh.w2*v0, sh.w2*v1, sh.w2*v2
			j += 3
		}
	}
}

// down adds the row shrunk along x (tmp) to the output rows it covers:
// its share of this one and of the next, with 8 of its 16 bits below the
// units kept (a sum of shares ≤ 2^16 of values below 255·2^8 stays below
// 2^32), and emits the output row when it is whole.
func (s *shrink) down() {
	r := s.rows[s.y]
	tmp, acc := s.tmp[:len(s.acc)], s.acc[:len(s.acc)]
	if r.w2 == 0 {
		for i, v := range tmp {
			acc[i] += r.w * ((v + 1<<7) >> 8)
		}
	} else {
		nxt := s.nxt[:len(s.acc)]
		for i, v := range tmp {
			v = (v + 1<<7) >> 8
			acc[i] += r.w * v
			nxt[i] += r.w2 * v
		}
	}
	s.y++
	if r.end {
		s.emit()
	}
}

// emit writes the finished output row and starts the next.
func (s *shrink) emit() {
	if s.oy >= s.dh {
		return
	}
	if s.ycc {
		m, o := s.yc, s.oy
		y, cb, cr := m.Y[o*m.YStride:][:s.dw], m.Cb[o*m.CStride:][:s.dw], m.Cr[o*m.CStride:][:s.dw]
		for x := range y {
			a := s.acc[3*x : 3*x+3 : 3*x+3]
			y[x], cb[x], cr[x] = byte((a[0]+1<<23)>>24), byte((a[1]+1<<23)>>24), byte((a[2]+1<<23)>>24)
		}
	} else {
		line := s.rgba.Pix[s.oy*s.rgba.Stride:][:4*s.dw]
		for x := range s.dw {
			a, o := s.acc[x*s.ch:x*s.ch+s.ch], line[4*x:4*x+4]
			o[3] = 255
			for c, v := range a {
				o[c] = byte((v + 1<<23) >> 24)
			}
			if s.ch == 1 {
				o[1], o[2] = o[0], o[0]
			}
		}
	}
	s.acc, s.nxt = s.nxt, s.acc
	clear(s.nxt)
	s.oy++
}

// result is the output, once every row came: an *image.RGBA, or with ycc
// an *image.YCbCr.
func (s *shrink) result() (image.Image, bool) {
	whole := s.y == s.sh && s.oy == s.dh
	if s.yc != nil {
		return s.yc, whole
	}
	return s.rgba, s.rgba != nil && whole
}

// fitWithin is the size of a picture of w8×h8 eighths of a pixel shrunk to
// at most side pixels on its longer side.
func fitWithin(side int) func(w8, h8 int) (int, int) {
	return func(w8, h8 int) (int, int) {
		if w8 <= 8*side && h8 <= 8*side {
			return w8 / 8, h8 / 8
		}
		if w8 >= h8 {
			return side, max(1, (h8*side+w8/2)/w8)
		}
		return max(1, (w8*side+h8/2)/h8), side
	}
}

// cover is the size of a picture of w8×h8 eighths shrunk until its
// shorter side is side pixels (for a square crop of side×side).
func cover(side int) func(w8, h8 int) (int, int) {
	return func(w8, h8 int) (int, int) {
		if w8 <= 8*side || h8 <= 8*side {
			return w8 / 8, h8 / 8
		}
		if w8 <= h8 {
			return side, max(1, (h8*side+w8/2)/w8)
		}
		return max(1, (w8*side+h8/2)/h8), side
	}
}

// cropSquare is the middle square of m (a shrink's result).
func cropSquare(m image.Image) image.Image {
	b := m.Bounds()
	side := min(b.Dx(), b.Dy())
	x0, y0 := (b.Dx()-side)/2, (b.Dy()-side)/2
	return m.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(x0, y0, x0+side, y0+side))
}

// orient turns m (a shrink's result, maybe cropped) upright as the EXIF
// orientation o (1-8) says the camera held it.
func orient(m image.Image, o int) image.Image {
	if o < 2 || o > 8 {
		return m
	}
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	r := image.Rect(0, 0, w, h)
	if o >= 5 {
		r = image.Rect(0, 0, h, w)
	}
	switch m := m.(type) {
	case *image.RGBA:
		out := image.NewRGBA(r)
		turn(out.Pix, out.Stride, m.Pix[m.PixOffset(b.Min.X, b.Min.Y):], m.Stride, w, h, 4, o)
		return out
	case *image.YCbCr: // 4:4:4
		out := image.NewYCbCr(r, image.YCbCrSubsampleRatio444)
		yi, ci := m.YOffset(b.Min.X, b.Min.Y), m.COffset(b.Min.X, b.Min.Y)
		turn(out.Y, out.YStride, m.Y[yi:], m.YStride, w, h, 1, o)
		turn(out.Cb, out.CStride, m.Cb[ci:], m.CStride, w, h, 1, o)
		turn(out.Cr, out.CStride, m.Cr[ci:], m.CStride, w, h, 1, o)
		return out
	}
	return m
}

// turn copies a w×h picture of bpp (1 or 4) bytes a pixel from src to dst as EXIF
// orientation o (2-8) says: pixel (x, y) lands at (x', y'), which is
// linear in x and y, a step across and a step down in dst.
func turn(dst []byte, dstStride int, src []byte, srcStride, w, h, bpp, o int) {
	var at, across, down int // (0, 0)'s place in dst, then x's and y's steps
	switch o {
	case 2: // mirrored: (w-1-x, y)
		at, across, down = (w-1)*bpp, -bpp, dstStride
	case 3: // upside down: (w-1-x, h-1-y)
		at, across, down = (w-1)*bpp+(h-1)*dstStride, -bpp, -dstStride
	case 4: // upside down, mirrored: (x, h-1-y)
		at, across, down = (h-1)*dstStride, bpp, -dstStride
	case 5: // transposed: (y, x)
		at, across, down = 0, dstStride, bpp
	case 6: // turned right: (h-1-y, x)
		at, across, down = (h-1)*bpp, dstStride, -bpp
	case 7: // transversed: (h-1-y, w-1-x)
		at, across, down = (h-1)*bpp+(w-1)*dstStride, -dstStride, -bpp
	case 8: // turned left: (y, w-1-x)
		at, across, down = (w-1)*dstStride, -dstStride, bpp
	}
	for y := range h {
		row, d := src[y*srcStride:y*srcStride+w*bpp], at+y*down
		if bpp == 1 {
			for x, v := range row {
				dst[d+x*across] = v
			}
			continue
		}
		for x := range w { // 4
			*(*[4]byte)(dst[d+x*across:]) = *(*[4]byte)(row[4*x:])
		}
	}
}
