// Package previewtest makes pictures for the preview package's tests and
// for the benchmark's photos (bench): a test picture, the same with a
// camera's sensor grain, and a JPEG with an EXIF block as a camera writes
// one. Like net/http/httptest, it is for tests and measurements, never for
// the appliance itself.
package previewtest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"math"
)

// Picture is a test picture: gradients, a sharp-edged disc and stripes,
// in colour.
func Picture(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			r := byte(255 * x / w)
			g := byte(255 * y / h)
			b := byte(128 + 127*math.Sin(float64(x+y)/17))
			dx, dy := x-w/3, y-h/2
			if dx*dx+dy*dy < (h/4)*(h/4) {
				r, g, b = 250, 240, 20
			}
			if x > 2*w/3 && (y/16)%2 == 0 { // stripes a 1/8 decode can show
				r, g, b = 10, 10, 10
			}
			m.SetRGBA(x, y, color.RGBA{r, g, b, 255})
		}
	}
	return m
}

// Photo is Picture with grain of up to ±amount in each channel, from a
// fixed seed: a picture whose JPEG is as large as a camera's (a 12-MP
// photo at quality 90 with amount 12 is 3.2 MB, a phone's size), so that decoding it
// costs what decoding a real photo costs.
func Photo(w, h, amount int) *image.RGBA {
	m := Picture(w, h)
	state := uint32(2463534242)
	for i := range m.Pix {
		if i%4 == 3 {
			continue
		}
		state ^= state << 13 // xorshift32
		state ^= state >> 17
		state ^= state << 5
		v := int(m.Pix[i]) + int(state%uint32(2*amount+1)) - amount
		m.Pix[i] = byte(min(255, max(0, v)))
	}
	return m
}

// EXIF tags and types (TIFF 6.0, EXIF 2.32).
const (
	tagOrientation    = 0x0112
	tagExifIFD        = 0x8769
	tagDateTimeOrig   = 0x9003
	tagOffsetTimeOrig = 0x9011
	tagThumbOffset    = 0x0201
	tagThumbLength    = 0x0202
	typeASCII         = 2
	typeShort         = 3
	typeLong          = 4
)

// WithExif puts an EXIF block into a JPEG, as a camera writes one: IFD0
// with the orientation and a pointer to the EXIF IFD (the time taken,
// "2006:01:02 15:04:05", and its zone if zone is not ""), then IFD1
// pointing at the thumbnail, itself a JPEG.
func WithExif(jpg []byte, orientation int, taken, zone string, thumb []byte) []byte {
	le := binary.LittleEndian
	var t bytes.Buffer
	t.WriteString("II*\x00")
	binary.Write(&t, le, uint32(8))
	entry := func(tag, typ uint16, count, value uint32) {
		binary.Write(&t, le, tag)
		binary.Write(&t, le, typ)
		binary.Write(&t, le, count)
		binary.Write(&t, le, value)
	}
	// IFD0 at 8: 2 entries (26 bytes + 4 next) = ends at 8+2+24+4 = 38.
	ifd0End := uint32(8 + 2 + 2*12 + 4)
	exifIFD := ifd0End
	nExif := uint32(1)
	if zone != "" {
		nExif = 2
	}
	exifEnd := exifIFD + 2 + 12*nExif + 4
	dateAt := exifEnd
	zoneAt := dateAt + 20
	ifd1 := zoneAt + 8
	thumbAt := ifd1 + 2 + 2*12 + 4
	binary.Write(&t, le, uint16(2))
	entry(tagOrientation, typeShort, 1, uint32(orientation))
	entry(tagExifIFD, typeLong, 1, exifIFD)
	binary.Write(&t, le, ifd1)
	binary.Write(&t, le, uint16(nExif))
	entry(tagDateTimeOrig, typeASCII, 20, dateAt)
	if zone != "" {
		entry(tagOffsetTimeOrig, typeASCII, 7, zoneAt)
	}
	binary.Write(&t, le, uint32(0))
	t.WriteString(taken + "\x00")
	t.WriteString(zone + "\x00\x00")
	for t.Len() < int(ifd1) {
		t.WriteByte(0)
	}
	binary.Write(&t, le, uint16(2))
	entry(tagThumbOffset, typeLong, 1, thumbAt)
	entry(tagThumbLength, typeLong, 1, uint32(len(thumb)))
	binary.Write(&t, le, uint32(0))
	t.Write(thumb)
	app1 := append([]byte("Exif\x00\x00"), t.Bytes()...)
	var out bytes.Buffer
	out.Write(jpg[:2])
	out.Write([]byte{0xFF, 0xE1, byte((len(app1) + 2) >> 8), byte(len(app1) + 2)})
	out.Write(app1)
	out.Write(jpg[2:])
	return out.Bytes()
}

// InterlacedPNG is an Adam7-interlaced PNG of w×h pixels at 16 bits a
// sample in RGBA, every pixel zero: a few kilobytes to send that the
// standard decoder holds at 8 bytes a pixel, half again for its passes
// (the hostile picture of the memory budget's tests: 2048×2048 is 130 KB
// and 48 MiB decoded).
func InterlacedPNG(w, h int) []byte {
	var raw bytes.Buffer
	zw := zlib.NewWriter(&raw)
	// Adam7's passes: where each starts and its step, across and down.
	passes := [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	for _, p := range passes {
		pw, ph := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
		if pw <= 0 || ph <= 0 {
			continue
		}
		row := make([]byte, 1+8*pw) // filter type 0, then the samples
		for range ph {
			zw.Write(row)
		}
	}
	zw.Close()
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(w)), uint32(h))
	ihdr = append(ihdr, 16, 6, 0, 0, 1) // depth 16, RGBA, deflate, filter 0, Adam7
	pngChunk(&b, "IHDR", ihdr)
	pngChunk(&b, "IDAT", raw.Bytes())
	pngChunk(&b, "IEND", nil)
	return b.Bytes()
}

func pngChunk(b *bytes.Buffer, kind string, data []byte) {
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	b.WriteString(kind)
	b.Write(data)
	b.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
}
