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
// Samples of Y, Cb and Cr (a JPEG's) are averaged as they are and turned
// into RGB once shrunk: the conversion is linear, so the mean of the
// converted pixels is the converted mean but where a pixel's colour is
// clamped, for a fraction of the work.
type shrink struct {
	fit func(w8, h8 int) (int, int) // the output size for a picture of w8×h8 eighths

	fw, fh, sw, sh, dw, dh, ch int
	ycc                        bool
	cols, rows                 []share  // per input column and row
	tmp                        []uint32 // the input row shrunk along x: ×2^16
	acc, nxt                   []uint32 // the output row being made and the next: ×2^24
	y, oy                      int
	out                        *image.RGBA
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
	s.out = image.NewRGBA(image.Rect(0, 0, s.dw, s.dh))
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
	line := s.out.Pix[s.oy*s.out.Stride:][:4*s.dw]
	switch {
	case s.ycc:
		emitYCC(s.acc, line)
	case s.ch == 1:
		for x, a := range s.acc {
			v := byte((a + 1<<23) >> 24)
			line[4*x], line[4*x+1], line[4*x+2], line[4*x+3] = v, v, v, 255
		}
	default:
		for x := range s.dw {
			a, o := s.acc[x*s.ch:x*s.ch+s.ch], line[4*x:4*x+4]
			o[3] = 255
			for c, v := range a {
				o[c] = byte((v + 1<<23) >> 24)
			}
		}
	}
	s.acc, s.nxt = s.nxt, s.acc
	clear(s.nxt)
	s.oy++
}

// emitYCC converts a row of means of Y, Cb and Cr (×2^24) to RGB (JFIF's
// conversion, 14-bit constants, from the means with 8 bits below their
// units).
func emitYCC(acc []uint32, line []byte) {
	const (
		crR = 22970 // 1.402 ×2^14
		cbG = 5638  // 0.344136
		crG = 11700 // 0.714136
		cbB = 29032 // 1.772
		s   = 14 + 8
	)
	for x := range len(acc) / 3 {
		a, o := acc[3*x:3*x+3:3*x+3], line[4*x:4*x+4:4*x+4]
		y := int32(a[0]>>16)<<14 + 1<<(s-1)
		cb, cr := int32(a[1]>>16)-128<<8, int32(a[2]>>16)-128<<8
		o[0] = clamp8((y + crR*cr) >> s)
		o[1] = clamp8((y - cbG*cb - crG*cr) >> s)
		o[2] = clamp8((y + cbB*cb) >> s)
		o[3] = 255
	}
}

// result is the output, once every row came.
func (s *shrink) result() (*image.RGBA, bool) {
	return s.out, s.out != nil && s.y == s.sh && s.oy == s.dh
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

// cropSquare is the middle square of m.
func cropSquare(m *image.RGBA) *image.RGBA {
	b := m.Bounds()
	side := min(b.Dx(), b.Dy())
	x0, y0 := (b.Dx()-side)/2, (b.Dy()-side)/2
	return m.SubImage(image.Rect(x0, y0, x0+side, y0+side)).(*image.RGBA)
}

// orient turns m upright as the EXIF orientation o (1-8) says the camera
// held it.
func orient(m *image.RGBA, o int) *image.RGBA {
	if o < 2 || o > 8 {
		return m
	}
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := range h {
		for x := range w {
			var nx, ny int
			switch o {
			case 2: // mirrored
				nx, ny = w-1-x, y
			case 3: // upside down
				nx, ny = w-1-x, h-1-y
			case 4: // upside down, mirrored
				nx, ny = x, h-1-y
			case 5: // transposed
				nx, ny = y, x
			case 6: // turned right
				nx, ny = h-1-y, x
			case 7: // transversed
				nx, ny = h-1-y, w-1-x
			case 8: // turned left
				nx, ny = y, w-1-x
			}
			src, dst := m.PixOffset(b.Min.X+x, b.Min.Y+y), out.PixOffset(nx, ny)
			copy(out.Pix[dst:dst+4], m.Pix[src:src+4])
		}
	}
	return out
}
