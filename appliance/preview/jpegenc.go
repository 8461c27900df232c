package preview

// A baseline JPEG encoder for the previews made in YCbCr (a JPEG's, the
// most): image/jpeg took a fifth of the 1024-pixel preview's time, most
// of it a division for each coefficient quantized (a call to the runtime
// on the board's core, which has no divide instruction) and a look-up of
// each pixel through image.YCbCr's methods. This one quantizes with a
// multiplication by a reciprocal and reads the planes directly.
//
// The output is what image/jpeg's is: 4:2:0 (chroma averaged 2×2), the
// example quantization tables of T.81 (Annex K.1) scaled for a quality as
// libjpeg scales them. Its Huffman tables are made for the picture (T.81
// K.2) from the symbols of every fourth row of blocks, with every symbol
// counted once more so that any has a code: no stored tables, and files
// a little smaller than with the example ones.

import (
	"encoding/binary"
	"image"
	"io"
	"math/bits"
)

// quantBase are T.81's example tables (K.1), luminance then chrominance,
// in natural order.
var quantBase = [2][64]int32{{
	16, 11, 10, 16, 24, 40, 51, 61,
	12, 12, 14, 19, 26, 58, 60, 55,
	14, 13, 16, 24, 40, 57, 69, 56,
	14, 17, 22, 29, 51, 87, 80, 62,
	18, 22, 37, 56, 68, 109, 103, 77,
	24, 35, 55, 64, 81, 104, 113, 92,
	49, 64, 78, 87, 103, 121, 120, 101,
	72, 92, 95, 98, 112, 100, 103, 99,
}, {
	17, 18, 24, 47, 99, 99, 99, 99,
	18, 21, 26, 66, 99, 99, 99, 99,
	24, 26, 56, 99, 99, 99, 99, 99,
	47, 66, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
}}

// recipBits is the precision of the quantizers' reciprocals: a
// coefficient ×8 (below 2^14) times 2^recipBits/(8·q) stays below 2^31.
const recipBits = 20

// jpegEncoder is one picture's encoding.
type jpegEncoder struct {
	quant [2][64]int32 // the steps, natural order
	recip [2][64]int32 // 2^recipBits / (8·step), zigzag order
	least [2][64]int32 // the least coefficient ×8 not quantized to 0, zigzag order
	codes [4]huffCode  // DC and AC of luminance, DC and AC of chrominance
	freq  *[4][256]int // counting, not writing: the symbols' counts
	pred  [3]int32     // the components' last DC terms
	acc   uint32       // bits not yet written, the last nbits of acc
	nbits uint
	out   []byte
}

// huffCode is a Huffman table for writing: each symbol's code and its
// length, and the table as DHT says it (the count of codes of each length,
// the symbols by length).
type huffCode struct {
	code   [256]uint16
	size   [256]uint8
	counts [16]byte
	vals   []byte
}

// encodeJPEG writes m, a 4:4:4 image.YCbCr (a shrink's result, maybe a
// part of it), as a baseline JPEG of quality 1-100.
func encodeJPEG(w io.Writer, m *image.YCbCr, quality int) error {
	e := &jpegEncoder{}
	e.setQuality(quality)
	// The tables first, from a sample of the symbols.
	var freq [4][256]int
	for t := range freq {
		for s := range freq[t] {
			if t%2 == 0 && s <= 11 || t%2 == 1 && (s&15 != 0 && s&15 <= 10 || s == 0 || s == 0xF0) {
				freq[t][s] = 1
			}
		}
	}
	e.freq = &freq
	e.blocks(m, 4)
	for t := range e.codes {
		e.codes[t] = huffmanFor(&freq[t])
	}
	e.freq, e.pred = nil, [3]int32{}
	b := m.Bounds()
	e.out = make([]byte, 0, b.Dx()*b.Dy()/4+1024)
	e.headers(b.Dx(), b.Dy())
	e.blocks(m, 1)
	e.flush()
	e.out = append(e.out, 0xFF, 0xD9) // EOI
	_, err := w.Write(e.out)
	return err
}

// setQuality scales the example tables as libjpeg does: by 5000/q % below
// quality 50, by 200-2q % above.
func (e *jpegEncoder) setQuality(q int) {
	q = min(max(q, 1), 100)
	scale := int32(200 - 2*q)
	if q < 50 {
		scale = int32(5000 / q)
	}
	for t := range e.quant {
		for n, v := range quantBase[t] {
			e.quant[t][n] = min(max((v*scale+50)/100, 1), 255)
		}
		for k, n := range zigzag {
			s := e.quant[t][n]
			r := (1<<recipBits + 4*s) / (8 * s)
			e.recip[t][k], e.least[t][k] = r, (1<<(recipBits-1)+r-1)/r
		}
	}
}

// blocks encodes (or counts) the picture's MCUs, 16×16 pixels, in every
// step-th row of them: four 8×8 blocks of Y, one of Cb and one of Cr,
// their samples the mean of 2×2. Past the picture's right and bottom
// edges, its last column and row are repeated.
func (e *jpegEncoder) blocks(m *image.YCbCr, step int) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	var blk [64]int32
	for my := 0; my < (h+15)/16; my += step {
		for mx := range (w + 15) / 16 {
			x0, y0 := mx*16, my*16
			inside := x0+16 <= w && y0+16 <= h // (no repeating: the rows as they are)
			for i := range 4 {
				bx, by := x0+8*(i&1), y0+8*(i>>1)
				for y := range 8 {
					row := m.Y[m.YOffset(b.Min.X, b.Min.Y+min(by+y, h-1)):]
					if inside {
						r := (*[8]byte)(row[bx:])
						for x, v := range r {
							blk[8*y+x] = int32(v) - 128
						}
						continue
					}
					for x := range 8 {
						blk[8*y+x] = int32(row[min(bx+x, w-1)]) - 128
					}
				}
				e.block(&blk, 0)
			}
			for c, plane := range [2][]byte{m.Cb, m.Cr} {
				for y := range 8 {
					r0 := plane[m.COffset(b.Min.X, b.Min.Y+min(y0+2*y, h-1)):]
					r1 := plane[m.COffset(b.Min.X, b.Min.Y+min(y0+2*y+1, h-1)):]
					if inside {
						a, b := (*[16]byte)(r0[x0:]), (*[16]byte)(r1[x0:])
						for x := range 8 {
							sum := int32(a[2*x]) + int32(a[2*x+1]) + int32(b[2*x]) + int32(b[2*x+1])
							blk[8*y+x] = (sum+2)>>2 - 128
						}
						continue
					}
					for x := range 8 {
						xa, xb := min(x0+2*x, w-1), min(x0+2*x+1, w-1)
						sum := int32(r0[xa]) + int32(r0[xb]) + int32(r1[xa]) + int32(r1[xb])
						blk[8*y+x] = (sum+2)>>2 - 128
					}
				}
				e.block(&blk, 1+c)
			}
		}
	}
}

// block transforms, quantizes and writes (or counts) one block of
// component c (0: Y).
func (e *jpegEncoder) block(blk *[64]int32, c int) {
	fdct(blk)
	t := min(c, 1)
	recip, least := &e.recip[t], &e.least[t]
	// DC: the difference from the last block's, its size, then its bits.
	q := quantize(blk[0], recip[0])
	d := q - e.pred[c]
	e.pred[c] = q
	s := magnitude(d)
	dc, ac := &e.codes[2*t], &e.codes[2*t+1]
	if e.freq != nil {
		e.freq[2*t][s]++
	} else {
		e.putValue(dc, s, d)
	}
	// AC: runs of zeros, the value after them.
	run := 0
	for k := 1; k < 64; k++ {
		v, m := blk[zigzag[k]], least[k]
		if uint32(v+m-1) < uint32(2*m-1) { // |v| < m: 0, told by one comparison
			run++
			continue
		}
		v = min(max(quantize(v, recip[k]), -1023), 1023) // (the sizes T.81 allows 8-bit samples)
		for ; run > 15; run -= 16 {
			e.symbol(ac, 2*t+1, 0xF0) // ZRL: 16 zeros
		}
		sym := byte(run)<<4 | magnitude(v)
		if e.freq != nil {
			e.freq[2*t+1][sym]++
		} else {
			e.putValue(ac, sym, v)
		}
		run = 0
	}
	if run > 0 {
		e.symbol(ac, 2*t+1, 0x00) // EOB
	}
}

// quantize is v/(8·step), rounded half away from zero, by the
// reciprocal.
func quantize(v, recip int32) int32 {
	neg := v >> 31 // -1 for a negative v
	a := ((v^neg)-neg)*recip + 1<<(recipBits-1)
	return (a>>recipBits ^ neg) - neg
}

// magnitude is the size of v, T.81's SSSS: the bits of |v|.
func magnitude(v int32) byte {
	if v < 0 {
		v = -v
	}
	return byte(bits.Len32(uint32(v)))
}

// symbol writes (or counts in table t) a symbol with no value after it.
func (e *jpegEncoder) symbol(h *huffCode, t int, sym byte) {
	if e.freq != nil {
		e.freq[t][sym]++
		return
	}
	e.put(uint32(h.code[sym]), uint(h.size[sym]))
}

// putValue writes symbol sym and the low size bits of v (negative v as
// v-1: T.81 F.1.2.1), size being sym's low 4 bits (a DC symbol's all of
// it): in one put where both fit in 24 bits, as nearly all do.
func (e *jpegEncoder) putValue(h *huffCode, sym byte, v int32) {
	s := uint(sym & 15)
	if v < 0 {
		v--
	}
	value := uint32(v) & (1<<s - 1)
	if n := uint(h.size[sym]); n+s <= 24 {
		e.put(uint32(h.code[sym])<<s|value, n+s)
	} else {
		e.put(uint32(h.code[sym]), n)
		e.put(value, s)
	}
}

// put writes the low n bits of b (n ≤ 24: with the 7 bits left, within
// 32), then every whole byte, a 0xFF followed by a stuffed 0.
func (e *jpegEncoder) put(b uint32, n uint) {
	e.acc = e.acc<<n | b
	e.nbits += n
	for e.nbits >= 8 {
		e.nbits -= 8
		c := byte(e.acc >> e.nbits)
		e.out = append(e.out, c)
		if c == 0xFF {
			e.out = append(e.out, 0)
		}
	}
}

// flush writes the last bits, padded with ones (T.81 F.1.2.3).
func (e *jpegEncoder) flush() {
	if e.nbits > 0 {
		e.put(1<<(8-e.nbits)-1, 8-e.nbits)
	}
}

// headers writes SOI, the quantization tables, the frame (Y 2×2, Cb and
// Cr 1×1), the Huffman tables and the scan's header.
func (e *jpegEncoder) headers(w, h int) {
	o := append(e.out, 0xFF, 0xD8)
	o = append(o, 0xFF, 0xDB, 0, 2+2*65)
	for t := range e.quant {
		o = append(o, byte(t))
		for _, n := range zigzag {
			o = append(o, byte(e.quant[t][n]))
		}
	}
	o = append(o, 0xFF, 0xC0, 0, 17, 8)
	o = binary.BigEndian.AppendUint16(o, uint16(h))
	o = binary.BigEndian.AppendUint16(o, uint16(w))
	o = append(o, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1)
	n := 2
	for _, c := range e.codes {
		n += 17 + len(c.vals)
	}
	o = append(o, 0xFF, 0xC4)
	o = binary.BigEndian.AppendUint16(o, uint16(n))
	for t, c := range e.codes {
		o = append(o, byte(t%2)<<4|byte(t/2)) // class (AC: 1), then table
		o = append(o, c.counts[:]...)
		o = append(o, c.vals...)
	}
	o = append(o, 0xFF, 0xDA, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0)
	e.out = o
}

// fdct turns a block of samples less 128 into its coefficients ×8
// (8·F(v,u)), in place: idct's factorisation transposed. Along one side,
// U(u) = Σx K(x,u)·f(x), K being G's matrix (see idct.go: K(x,0) = 1,
// else √2·cos((2x+1)uπ/16)), and F = U(U(f))/8. The even u come from the
// sums s_x = f(x) + f(7-x) as their 4-point transform (U0 and U4 with no
// multiplication, U2 and U6 the rotation by 3π/8), the odd u from the
// differences d_x = f(x) - f(7-x) through the odd half's matrix, which is
// symmetric: idct's odd half as it is. Along the rows first, keeping
// pass1Bits below the units, then down the columns.
func fdct(b *[64]int32) {
	const rs = constBits - pass1Bits // the rows' shift, and its rounding
	const r = 1 << (rs - 1)
	for y := range 8 {
		f := (*[8]int32)(b[8*y:])
		s0, s1, s2, s3 := f[0]+f[7], f[1]+f[6], f[2]+f[5], f[3]+f[4]
		d0, d1, d2, d3 := f[0]-f[7], f[1]-f[6], f[2]-f[5], f[3]-f[4]
		f[0], f[4] = (s0+s1+s2+s3)<<pass1Bits, (s0-s1-s2+s3)<<pass1Bits
		z := (s0 - s3 + s1 - s2) * c6
		f[2], f[6] = (z+(s0-s3)*c2m6+r)>>rs, (z-(s1-s2)*c2p6+r)>>rs
		z = (d0 + d1 + d2 + d3) * c3
		z03, z12 := (d0+d3)*-c3m7, (d1+d2)*-c1p3
		z02, z13 := z-(d0+d2)*c3m5, z-(d1+d3)*c3p5
		f[1], f[3] = (d0*odd1+z03+z02+r)>>rs, (d1*odd3+z12+z13+r)>>rs
		f[5], f[7] = (d2*odd5+z12+z02+r)>>rs, (d3*odd7+z03+z13+r)>>rs
	}
	const cs = constBits + pass1Bits // the columns'
	const r2 = 1 << (cs - 1)
	for u := range 8 {
		u &= 7
		s0, s1, s2, s3 := b[u]+b[56+u], b[8+u]+b[48+u], b[16+u]+b[40+u], b[24+u]+b[32+u]
		d0, d1, d2, d3 := b[u]-b[56+u], b[8+u]-b[48+u], b[16+u]-b[40+u], b[24+u]-b[32+u]
		const h = 1 << (pass1Bits - 1)
		b[u], b[32+u] = (s0+s1+s2+s3+h)>>pass1Bits, (s0-s1-s2+s3+h)>>pass1Bits
		z := (s0 - s3 + s1 - s2) * c6
		b[16+u], b[48+u] = (z+(s0-s3)*c2m6+r2)>>cs, (z-(s1-s2)*c2p6+r2)>>cs
		z = (d0 + d1 + d2 + d3) * c3
		z03, z12 := (d0+d3)*-c3m7, (d1+d2)*-c1p3
		z02, z13 := z-(d0+d2)*c3m5, z-(d1+d3)*c3p5
		b[8+u], b[24+u] = (d0*odd1+z03+z02+r2)>>cs, (d1*odd3+z12+z13+r2)>>cs
		b[40+u], b[56+u] = (d2*odd5+z12+z02+r2)>>cs, (d3*odd7+z03+z13+r2)>>cs
	}
}

// huffmanFor makes the Huffman table for symbols of these counts (those
// of 0 get no code), as T.81 K.2 does: the code sizes of Huffman's
// merging of the two rarest, with a symbol of its own reserving the code
// of all ones, then lengths past 16 moved up, the reserved code dropped.
func huffmanFor(freq *[256]int) huffCode {
	var f [257]int
	copy(f[:], freq[:])
	f[256] = 1
	var size [257]int
	var next [257]int // the symbols merged into one, in a chain
	for i := range next {
		next[i] = -1
	}
	for {
		v1, v2 := -1, -1 // the rarest, then the next: the last of equals
		for i, n := range f {
			switch {
			case n == 0:
			case v1 < 0 || n <= f[v1]:
				v1, v2 = i, v1
			case v2 < 0 || n <= f[v2]:
				v2 = i
			}
		}
		if v2 < 0 {
			break
		}
		f[v1], f[v2] = f[v1]+f[v2], 0
		for size[v1]++; next[v1] >= 0; size[v1]++ {
			v1 = next[v1]
		}
		next[v1] = v2
		for size[v2]++; next[v2] >= 0; size[v2]++ {
			v2 = next[v2]
		}
	}
	var counts [258]int // by length
	for _, n := range size {
		if n > 0 {
			counts[n]++
		}
	}
	for i := len(counts) - 1; i > 16; i-- {
		for counts[i] > 0 { // two codes of length i become one of i-1 and one a length below a shorter one
			j := i - 2
			for counts[j] == 0 {
				j--
			}
			counts[i] -= 2
			counts[i-1]++
			counts[j+1] += 2
			counts[j]--
		}
	}
	for i := 16; i > 0; i-- { // the reserved code: the longest
		if counts[i] > 0 {
			counts[i]--
			break
		}
	}
	var h huffCode
	for l := 1; l <= 32; l++ { // the symbols by length, as the merging gave them
		for sym := range 256 {
			if size[sym] == l {
				h.vals = append(h.vals, byte(sym))
			}
		}
	}
	code, k := uint16(0), 0
	for l := 1; l <= 16; l++ {
		h.counts[l-1] = byte(counts[l])
		for range counts[l] {
			sym := h.vals[k]
			h.code[sym], h.size[sym] = code, uint8(l)
			code++
			k++
		}
		code <<= 1
	}
	h.vals = h.vals[:k]
	return h
}
