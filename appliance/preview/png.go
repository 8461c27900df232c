package preview

// A PNG decoder that hands the picture on a row at a time (image/png
// decodes it whole: a phone's screenshot is 10 MB of RGBA). Every colour
// type and bit depth is read; interlaced (Adam7) PNGs, whose rows come in
// seven passes over the picture, are not, and go to image/png within a
// size bound (image.go).

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

var errInterlaced = errors.New("interlaced PNG")

const pngSignature = "\x89PNG\r\n\x1a\n"

type pngDecoder struct {
	r                *bufio.Reader
	width, height    int
	depth, colorType int
	palette          [256][4]byte // premultiplied RGBA
	transparent      []byte       // tRNS of a grey or RGB PNG: the colour that is clear
	alpha            bool
	idatLeft         uint32 // bytes left in the current IDAT chunk
}

// decodePNG decodes the PNG r to sink: 3 samples a pixel, or 4
// (premultiplied) if it has transparency.
func decodePNG(r io.Reader, sink rowSink) error {
	d := &pngDecoder{r: bufio.NewReaderSize(r, 32<<10)}
	var sig [8]byte
	if _, err := io.ReadFull(d.r, sig[:]); err != nil || string(sig[:]) != pngSignature {
		return errors.New("PNG: no signature")
	}
	for {
		n, typ, err := d.chunk()
		if err != nil {
			return err
		}
		switch typ {
		case "IHDR":
			err = d.header(n)
		case "PLTE":
			err = d.readPalette(n)
		case "tRNS":
			err = d.readTransparency(n)
		case "IDAT":
			if d.width == 0 {
				return errors.New("PNG: data before the header")
			}
			d.idatLeft = n
			return d.pixels(sink)
		default:
			_, err = d.r.Discard(int(n) + 4)
		}
		if err != nil {
			return err
		}
	}
}

// chunk reads a chunk's length and type.
func (d *pngDecoder) chunk() (uint32, string, error) {
	var h [8]byte
	if _, err := io.ReadFull(d.r, h[:]); err != nil {
		return 0, "", fmt.Errorf("PNG: cut short: %w", err)
	}
	n := binary.BigEndian.Uint32(h[:4])
	if n > 1<<30 {
		return 0, "", errors.New("PNG: bad chunk length")
	}
	return n, string(h[4:]), nil
}

// body reads a chunk's data and its CRC (not checked: a preview of a
// damaged PNG is the preview of what it holds).
func (d *pngDecoder) body(n uint32) ([]byte, error) {
	if n > 1024 { // a header, a palette or a transparency: small
		return nil, errors.New("PNG: bad chunk length")
	}
	b := make([]byte, n+4)
	if _, err := io.ReadFull(d.r, b); err != nil {
		return nil, fmt.Errorf("PNG: cut short: %w", err)
	}
	return b[:n], nil
}

func (d *pngDecoder) header(n uint32) error {
	b, err := d.body(n)
	if err != nil || n != 13 {
		return errors.New("PNG: bad header")
	}
	d.width, d.height = int(binary.BigEndian.Uint32(b)), int(binary.BigEndian.Uint32(b[4:]))
	d.depth, d.colorType = int(b[8]), int(b[9])
	if d.width <= 0 || d.height <= 0 || d.width > 1<<16 || d.height > 1<<16 || d.width*d.height > maxPixels {
		return fmt.Errorf("PNG: picture of %d×%d", d.width, d.height)
	}
	ok := map[int][]int{0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}[d.colorType]
	valid := false
	for _, v := range ok {
		valid = valid || v == d.depth
	}
	if !valid || b[10] != 0 || b[11] != 0 {
		return fmt.Errorf("PNG: colour type %d at depth %d", d.colorType, d.depth)
	}
	if b[12] != 0 {
		return errInterlaced
	}
	d.alpha = d.colorType == 4 || d.colorType == 6
	for i := range d.palette {
		d.palette[i][3] = 255
	}
	return nil
}

func (d *pngDecoder) readPalette(n uint32) error {
	b, err := d.body(n)
	if err != nil || n%3 != 0 || n > 768 {
		return errors.New("PNG: bad palette")
	}
	for i := 0; i < int(n)/3; i++ {
		d.palette[i] = [4]byte{b[3*i], b[3*i+1], b[3*i+2], 255}
	}
	return nil
}

func (d *pngDecoder) readTransparency(n uint32) error {
	b, err := d.body(n)
	if err != nil {
		return err
	}
	switch d.colorType {
	case 3:
		for i := 0; i < len(b) && i < 256; i++ {
			p := &d.palette[i]
			a := uint32(b[i])
			p[0], p[1], p[2], p[3] = byte(uint32(p[0])*a/255), byte(uint32(p[1])*a/255), byte(uint32(p[2])*a/255), b[i]
		}
		d.alpha = true
	case 0, 2:
		d.transparent = b
		d.alpha = true
	}
	return nil
}

// Read gives the IDAT chunks' data as one stream, for zlib.
func (d *pngDecoder) Read(p []byte) (int, error) {
	for d.idatLeft == 0 {
		if _, err := d.r.Discard(4); err != nil { // the CRC
			return 0, err
		}
		n, typ, err := d.chunk()
		if err != nil {
			return 0, err
		}
		if typ != "IDAT" {
			return 0, io.EOF
		}
		d.idatLeft = n
	}
	if uint32(len(p)) > d.idatLeft {
		p = p[:d.idatLeft]
	}
	n, err := d.r.Read(p)
	d.idatLeft -= uint32(n)
	return n, err
}

// pixels inflates the data and unfilters it row by row (RFC 2083 §6).
func (d *pngDecoder) pixels(sink rowSink) error {
	channels := map[int]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[d.colorType]
	bitsPP := channels * d.depth
	stride := (d.width*bitsPP + 7) / 8
	bpp := max(1, bitsPP/8) // the bytes a filter looks back
	out := 3
	if d.alpha {
		out = 4
	}
	if err := sink.begin(8*d.width, 8*d.height, out, false); err != nil {
		return err
	}
	z, err := zlib.NewReader(d)
	if err != nil {
		return fmt.Errorf("PNG: %w", err)
	}
	defer z.Close()
	cur, prev := make([]byte, stride+1), make([]byte, stride+1)
	row := make([]byte, out*d.width)
	for range d.height {
		if _, err := io.ReadFull(z, cur); err != nil {
			return fmt.Errorf("PNG: cut short: %w", err)
		}
		if err := unfilter(cur[0], cur[1:], prev[1:], bpp); err != nil {
			return err
		}
		d.convert(cur[1:], row)
		sink.row(row)
		cur, prev = prev, cur
	}
	return nil
}

func unfilter(filter byte, cur, prev []byte, bpp int) error {
	switch filter {
	case 0:
	case 1: // sub
		for i := bpp; i < len(cur); i++ {
			cur[i] += cur[i-bpp]
		}
	case 2: // up
		for i := range cur {
			cur[i] += prev[i]
		}
	case 3: // average
		for i := range cur {
			var left int
			if i >= bpp {
				left = int(cur[i-bpp])
			}
			cur[i] += byte((left + int(prev[i])) / 2)
		}
	case 4: // Paeth
		for i := range cur {
			var a, c int
			if i >= bpp {
				a, c = int(cur[i-bpp]), int(prev[i-bpp])
			}
			b := int(prev[i])
			p := a + b - c
			pa, pb, pc := abs(p-a), abs(p-b), abs(p-c)
			switch {
			case pa <= pb && pa <= pc:
				cur[i] += byte(a)
			case pb <= pc:
				cur[i] += byte(b)
			default:
				cur[i] += byte(c)
			}
		}
	default:
		return fmt.Errorf("PNG: bad filter %d", filter)
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// convert turns an unfiltered row into RGB, or premultiplied RGBA.
func (d *pngDecoder) convert(in, out []byte) {
	w := d.width
	wide := d.depth == 16
	sample := func(i int) byte { // the i-th sample of 8 or 16 bits, as 8
		if wide {
			return in[2*i]
		}
		return in[i]
	}
	put := func(x int, r, g, b, a byte) {
		if !d.alpha {
			out[3*x], out[3*x+1], out[3*x+2] = r, g, b
			return
		}
		out[4*x], out[4*x+1], out[4*x+2], out[4*x+3] = byte(uint32(r)*uint32(a)/255), byte(uint32(g)*uint32(a)/255), byte(uint32(b)*uint32(a)/255), a
	}
	switch d.colorType {
	case 0, 3:
		for x := range w {
			var v int
			if d.depth >= 8 {
				v = int(sample(x))
			} else { // packed, most significant bits first
				per := 8 / d.depth
				v = int(in[x/per]>>(8-d.depth*(x%per+1))) & (1<<d.depth - 1)
			}
			if d.colorType == 3 {
				p := d.palette[v]
				if d.alpha {
					out[4*x], out[4*x+1], out[4*x+2], out[4*x+3] = p[0], p[1], p[2], p[3]
				} else {
					out[3*x], out[3*x+1], out[3*x+2] = p[0], p[1], p[2]
				}
				continue
			}
			g := byte(v * 255 / (1<<min(d.depth, 8) - 1))
			a := byte(255)
			if len(d.transparent) == 2 && d.clearGrey(in, x, v) {
				a = 0
			}
			put(x, g, g, g, a)
		}
	case 2:
		for x := range w {
			a := byte(255)
			if len(d.transparent) == 6 && d.clearRGB(in, x) {
				a = 0
			}
			put(x, sample(3*x), sample(3*x+1), sample(3*x+2), a)
		}
	case 4:
		for x := range w {
			g := sample(2 * x)
			put(x, g, g, g, sample(2*x+1))
		}
	case 6:
		for x := range w {
			put(x, sample(4*x), sample(4*x+1), sample(4*x+2), sample(4*x+3))
		}
	}
}

// clearGrey is whether grey pixel x is tRNS's transparent grey.
func (d *pngDecoder) clearGrey(in []byte, x, v int) bool {
	want := int(binary.BigEndian.Uint16(d.transparent))
	if d.depth == 16 {
		return int(binary.BigEndian.Uint16(in[2*x:])) == want
	}
	return v == want
}

// clearRGB is whether RGB pixel x is tRNS's transparent colour.
func (d *pngDecoder) clearRGB(in []byte, x int) bool {
	for c := range 3 {
		want := binary.BigEndian.Uint16(d.transparent[2*c:])
		var v uint16
		if d.depth == 16 {
			v = binary.BigEndian.Uint16(in[6*x+2*c:])
		} else {
			v = uint16(in[3*x+c])
		}
		if v != want {
			return false
		}
	}
	return true
}
