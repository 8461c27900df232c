// Package previewtest makes pictures for the preview package's tests and
// for the benchmark's photos (bench): a test picture, the same with a
// camera's sensor grain, and a JPEG with an EXIF block as a camera (or a
// scanner, an editor) writes one. Like net/http/httptest, it is for tests and measurements, never for
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
	tagDateTime       = 0x0132
	tagExifIFD        = 0x8769
	tagDateTimeOrig   = 0x9003
	tagOffsetTime     = 0x9010
	tagOffsetTimeOrig = 0x9011
	tagThumbOffset    = 0x0201
	tagThumbLength    = 0x0202
	typeASCII         = 2
	typeShort         = 3
	typeLong          = 4
)

// Exif is an EXIF block as a camera or a program writes one; what is
// zero or "" is left out. Times are written "2006:01:02 15:04:05", zones
// "+02:00".
type Exif struct {
	Orientation int // IFD0's, 1-8
	// DateTime is IFD0's DateTime (when the file was last changed: what
	// a scanner or an editor writes when it writes no DateTimeOriginal),
	// and DateTimeZone its OffsetTime in the EXIF IFD.
	DateTime, DateTimeZone string
	// Taken is the EXIF IFD's DateTimeOriginal, and Zone its
	// OffsetTimeOriginal.
	Taken, Zone string
	Thumb       []byte // a JPEG, pointed at by IFD1
}

// WithExif puts an EXIF block into a JPEG, as a camera writes one: IFD0
// with the orientation and a pointer to the EXIF IFD (the time taken,
// "2006:01:02 15:04:05", and its zone if zone is not ""), then IFD1
// pointing at the thumbnail, itself a JPEG.
func WithExif(jpg []byte, orientation int, taken, zone string, thumb []byte) []byte {
	return Exif{Orientation: orientation, Taken: taken, Zone: zone, Thumb: thumb}.Into(jpg)
}

// Into puts the EXIF block into a JPEG, as its first segment: a TIFF
// structure in little-endian order, IFD0, the EXIF IFD, IFD1 and the
// thumbnail, each IFD's longer values right after it.
func (e Exif) Into(jpg []byte) []byte {
	var ifd0, exif, ifd1 []field
	if e.Orientation != 0 {
		ifd0 = append(ifd0, field{tag: tagOrientation, typ: typeShort, count: 1, value: uint32(e.Orientation)})
	}
	if e.DateTime != "" {
		ifd0 = append(ifd0, ascii(tagDateTime, e.DateTime))
	}
	for _, f := range []struct {
		tag  uint16
		text string
	}{{tagDateTimeOrig, e.Taken}, {tagOffsetTime, e.DateTimeZone}, {tagOffsetTimeOrig, e.Zone}} {
		if f.text != "" {
			exif = append(exif, ascii(f.tag, f.text))
		}
	}
	if len(exif) > 0 {
		ifd0 = append(ifd0, field{tag: tagExifIFD, typ: typeLong, count: 1})
	}
	offExif := 8 + ifdSize(ifd0)
	offIFD1 := offExif + ifdSize(exif)
	if len(exif) > 0 {
		ifd0[len(ifd0)-1].value = offExif
	}
	next := uint32(0)
	if e.Thumb != nil {
		next = offIFD1
		ifd1 = []field{{tag: tagThumbOffset, typ: typeLong, count: 1}, {tag: tagThumbLength, typ: typeLong, count: 1, value: uint32(len(e.Thumb))}}
		ifd1[0].value = offIFD1 + ifdSize(ifd1)
	}
	var t bytes.Buffer
	t.WriteString("II*\x00")
	binary.Write(&t, binary.LittleEndian, uint32(8))
	writeIFD(&t, ifd0, next)
	if len(exif) > 0 {
		writeIFD(&t, exif, 0)
	}
	if e.Thumb != nil {
		writeIFD(&t, ifd1, 0)
		t.Write(e.Thumb)
	}
	app1 := append([]byte("Exif\x00\x00"), t.Bytes()...)
	var out bytes.Buffer
	out.Write(jpg[:2])
	out.Write([]byte{0xFF, 0xE1, byte((len(app1) + 2) >> 8), byte(len(app1) + 2)})
	out.Write(app1)
	out.Write(jpg[2:])
	return out.Bytes()
}

// field is an IFD entry: its value in the entry, or its data (longer
// than 4 bytes) after the IFD, where the entry points.
type field struct {
	tag, typ uint16
	count    uint32
	value    uint32
	data     []byte
}

func ascii(tag uint16, s string) field {
	return field{tag: tag, typ: typeASCII, count: uint32(len(s) + 1), data: append([]byte(s), 0)}
}

// ifdSize is the bytes of an IFD of fs with its longer values after it;
// 0 for none.
func ifdSize(fs []field) uint32 {
	if len(fs) == 0 {
		return 0
	}
	n := uint32(2 + 12*len(fs) + 4)
	for _, f := range fs {
		if len(f.data) > 4 {
			n += uint32(len(f.data))
		}
	}
	return n
}

// writeIFD writes an IFD of fs at the end of t, next the offset of the
// one after it, then the longer values.
func writeIFD(t *bytes.Buffer, fs []field, next uint32) {
	le := binary.LittleEndian
	at := uint32(t.Len()) + 2 + 12*uint32(len(fs)) + 4
	var data []byte
	binary.Write(t, le, uint16(len(fs)))
	for _, f := range fs {
		binary.Write(t, le, f.tag)
		binary.Write(t, le, f.typ)
		binary.Write(t, le, f.count)
		switch {
		case len(f.data) > 4:
			binary.Write(t, le, at+uint32(len(data)))
			data = append(data, f.data...)
		case f.data != nil:
			var v [4]byte
			copy(v[:], f.data)
			t.Write(v[:])
		default:
			binary.Write(t, le, f.value)
		}
	}
	binary.Write(t, le, next)
	t.Write(data)
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
