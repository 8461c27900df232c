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
type shrink struct {
	fit func(w8, h8 int) (int, int) // the output size for a picture of w8×h8 eighths

	fw, fh, sw, sh, dw, dh, ch int
	col                        []colWeight // per input column
	tmp                        []uint32    // the input row, shrunk along x
	acc, nxt                   []uint64    // sums of the output row being made and of the next
	y, oy                      int
	out                        *image.RGBA
}

// colWeight says where an input column goes: w of it to output column ox,
// and w2 to ox+1.
type colWeight struct {
	ox    int
	w, w2 uint32
}

func (s *shrink) begin(w8, h8, ch int) error {
	s.fw, s.fh, s.ch = w8, h8, ch
	s.sw, s.sh = (w8+7)/8, (h8+7)/8
	s.dw, s.dh = s.fit(w8, h8)
	s.dw, s.dh = max(1, min(s.dw, w8/8)), max(1, min(s.dh, h8/8)) // never larger
	// Input column x covers [8x, min(8x+8, fw)) eighths, output column ox
	// [ox·fw/dw, (ox+1)·fw/dw): in units of 1/dw eighth, integers.
	s.col = make([]colWeight, s.sw)
	for x := range s.sw {
		start, end := 8*x*s.dw, min(8*x+8, w8)*s.dw
		ox := start / w8
		edge := (ox + 1) * w8
		cw := colWeight{ox: ox, w: uint32(min(end, edge) - start)}
		if end > edge {
			cw.w2 = uint32(end - edge)
		}
		s.col[x] = cw
	}
	s.tmp = make([]uint32, (s.dw+1)*ch)
	s.acc = make([]uint64, s.dw*ch)
	s.nxt = make([]uint64, s.dw*ch)
	s.out = image.NewRGBA(image.Rect(0, 0, s.dw, s.dh))
	s.y, s.oy = 0, 0
	return nil
}

func (s *shrink) row(b []byte) {
	if s.y >= s.sh {
		return
	}
	ch := s.ch
	clear(s.tmp)
	for x, cw := range s.col {
		p := b[x*ch : x*ch+ch]
		t := s.tmp[cw.ox*ch:]
		for c, v := range p {
			t[c] += cw.w * uint32(v)
			if cw.w2 != 0 {
				t[ch+c] += cw.w2 * uint32(v)
			}
		}
	}
	start, end := 8*s.y*s.dh, min(8*s.y+8, s.fh)*s.dh
	edge := (s.oy + 1) * s.fh
	w1 := uint64(min(end, edge) - start)
	w2 := uint64(end - min(end, edge))
	for i := range s.acc {
		v := uint64(s.tmp[i])
		s.acc[i] += w1 * v
		s.nxt[i] += w2 * v
	}
	s.y++
	if end >= edge {
		s.emit()
	}
}

// emit writes the finished output row and starts the next.
func (s *shrink) emit() {
	if s.oy >= s.dh {
		return
	}
	div := uint64(s.fw) * uint64(s.fh)
	line := s.out.Pix[s.oy*s.out.Stride:]
	for x := range s.dw {
		a := s.acc[x*s.ch:]
		o := line[4*x : 4*x+4]
		o[3] = 255
		for c := range s.ch {
			o[c] = byte(min(255, (a[c]+div/2)/div))
		}
	}
	s.acc, s.nxt = s.nxt, s.acc
	clear(s.nxt)
	s.oy++
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
