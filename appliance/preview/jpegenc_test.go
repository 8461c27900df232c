package preview

import (
	"bytes"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

// fdct is the forward DCT ×8 within 2 (of 8·F: a quarter of a
// coefficient's unit, before the quantizer's step of 1 or more) on blocks
// of samples.
func TestFDCT(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 5000 {
		var s [64]float64
		var b [64]int32
		for k := range s {
			v := rng.IntN(256) - 128
			if i%2 == 0 { // smooth, as pictures are
				v = min(127, max(-128, (k%8)*12-(k/8)*9+rng.IntN(9)-40))
			}
			s[k], b[k] = float64(v), int32(v)
		}
		want := forwardDCT(&s)
		fdct(&b)
		for k := range b {
			if d := math.Abs(float64(b[k]) - 8*want[k]); d > 2 {
				t.Fatalf("block %v: coefficient %d = %d, want %.2f", s, k, b[k], 8*want[k])
			}
		}
	}
}

// huffmanFor gives every counted symbol a code of at most 16 bits, the
// codes a prefix code with none all ones, the commoner symbols the shorter.
func TestHuffmanFor(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for i := range 200 {
		var freq [256]int
		n := 1 + rng.IntN(256)
		for range n {
			freq[rng.IntN(256)] = 1 + rng.IntN(1000)
		}
		if i%4 == 0 { // counts like Fibonacci's: a plain Huffman code of 20 bits and more
			a, b := 1, 1
			for s := range 40 {
				freq[s], a, b = a, b, min(a+b, 1<<30)
			}
		}
		h := huffmanFor(&freq)
		kraft := 0.0
		for s, f := range freq {
			l := int(h.size[s])
			if f > 0 && (l < 1 || l > 16) {
				t.Fatalf("symbol %d (count %d) has a code of %d bits", s, f, l)
			}
			if l > 0 {
				kraft += math.Pow(2, -float64(l))
				if h.code[s] == 1<<l-1 {
					t.Fatalf("symbol %d's code is all ones", s)
				}
			}
		}
		if kraft > 1 {
			t.Fatalf("not a prefix code: Kraft sum %f", kraft)
		}
		// A decoder's tables from the DHT counts and symbols agree.
		var dec huffman
		copy(dec.vals[:], h.vals)
		if err := dec.build(h.counts[:]); err != nil {
			t.Fatalf("the table does not build: %v", err)
		}
	}
}

// putValue writes codes of up to 16 bits and values of up to 11 (a DC
// difference's) as they are, bytes of 0xFF followed by a 0.
func TestPutValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var h huffCode
	e := &jpegEncoder{}
	var want []byte // the bits, one a byte
	for range 5000 {
		sym := byte(rng.IntN(256)) &^ 15
		sym |= byte(rng.IntN(12)) // the value's size: 0 to 11
		n := 1 + rng.IntN(16)
		h.code[sym], h.size[sym] = uint16(rng.IntN(1<<n)), uint8(n)
		s := uint(sym & 15)
		v := int32(0)
		if s > 0 {
			v = int32(1<<(s-1) + rng.IntN(1<<(s-1))) // of size s
			if rng.IntN(2) == 0 {
				v = -v
			}
		}
		e.putValue(&h, sym, v)
		for i := n - 1; i >= 0; i-- {
			want = append(want, byte(h.code[sym]>>i&1))
		}
		bitsOfV := uint32(v)
		if v < 0 {
			bitsOfV = uint32(v - 1)
		}
		for i := int(s) - 1; i >= 0; i-- {
			want = append(want, byte(bitsOfV>>i&1))
		}
	}
	e.flush()
	var got []byte
	for i := 0; i < len(e.out); i++ {
		b := e.out[i]
		if b == 0xFF {
			if i+1 == len(e.out) || e.out[i+1] != 0 {
				t.Fatalf("byte %d: 0xFF not followed by 0", i)
			}
			i++
		}
		for j := 7; j >= 0; j-- {
			got = append(got, b>>j&1)
		}
	}
	if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("the bits written differ (%d written, %d meant)", len(got), len(want))
	}
	for _, b := range got[len(want):] {
		if b != 1 {
			t.Fatal("the last byte is not padded with ones")
		}
	}
}

// ycbcrOf is m in YCbCr 4:4:4, as a JPEG's preview is made.
func ycbcrOf(m *image.RGBA) *image.YCbCr {
	b := m.Bounds()
	out := image.NewYCbCr(b, image.YCbCrSubsampleRatio444)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := m.RGBAAt(x, y)
			out.Y[out.YOffset(x, y)], out.Cb[out.COffset(x, y)], out.Cr[out.COffset(x, y)] = rgbToYCbCr(c.R, c.G, c.B)
		}
	}
	return out
}

func rgbToYCbCr(r, g, b byte) (byte, byte, byte) {
	R, G, B := float64(r), float64(g), float64(b)
	y := 0.299*R + 0.587*G + 0.114*B
	cb := 128 - 0.168736*R - 0.331264*G + 0.5*B
	cr := 128 + 0.5*R - 0.418688*G - 0.081312*B
	c := func(v float64) byte { return byte(min(255, max(0, math.Round(v)))) }
	return c(y), c(cb), c(cr)
}

// encodeJPEG's pictures decode (with image/jpeg) to what was encoded, as
// closely as image/jpeg's own at the same quality, and no larger but for
// small ones, at sizes of part-blocks and part-MCUs, and from part of a
// picture.
func TestEncodeJPEG(t *testing.T) {
	photo := previewtest.Photo(333, 250, 12)
	for _, r := range []image.Rectangle{
		image.Rect(0, 0, 1, 1), image.Rect(0, 0, 7, 5), image.Rect(0, 0, 16, 16),
		image.Rect(3, 5, 20, 38), image.Rect(0, 0, 333, 250), image.Rect(40, 10, 290, 250),
	} {
		src := ycbcrOf(photo).SubImage(r).(*image.YCbCr)
		var ours, theirs bytes.Buffer
		if err := encodeJPEG(&ours, src, 80); err != nil {
			t.Fatal(err)
		}
		jpeg.Encode(&theirs, src, &jpeg.Options{Quality: 80})
		m, err := jpeg.Decode(bytes.NewReader(ours.Bytes()))
		if err != nil {
			t.Fatalf("%v: image/jpeg cannot decode it: %v", r, err)
		}
		if m.Bounds().Size() != r.Size() {
			t.Fatalf("%v: decoded %v", r, m.Bounds())
		}
		m2, _ := jpeg.Decode(bytes.NewReader(theirs.Bytes()))
		want := toRGBA(src)
		p, p2 := psnr(t, toRGBA(m), want), psnr(t, toRGBA(m2), want)
		if p < p2-0.5 || p < 25 {
			t.Errorf("%v: PSNR %.1f dB, image/jpeg's %.1f", r, p, p2)
		}
		if r.Dx() > 100 && ours.Len() > theirs.Len() { // (a small one's tables are most of it)
			t.Errorf("%v: %d bytes, image/jpeg's %d", r, ours.Len(), theirs.Len())
		}
	}
}

// BenchmarkEncode encodes the 1024-pixel preview of a photo, with
// encodeJPEG and with image/jpeg (what it replaced).
func BenchmarkEncode(b *testing.B) {
	src := ycbcrOf(previewtest.Photo(1024, 768, 12))
	for _, enc := range []struct {
		name string
		f    func(*bytes.Buffer) error
	}{
		{"ours", func(w *bytes.Buffer) error { return encodeJPEG(w, src, 80) }},
		{"image-jpeg", func(w *bytes.Buffer) error { return jpeg.Encode(w, src, &jpeg.Options{Quality: 80}) }},
	} {
		b.Run(enc.name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := enc.f(&buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes")
		})
	}
}
