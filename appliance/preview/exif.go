package preview

// What a JPEG's header says before its picture: its size, and from its
// EXIF (an APP1 segment holding a TIFF structure, CIPA DC-008), how the
// camera was held, when the photo was taken (DateTimeOriginal, or for a
// picture that says not, IFD0's DateTime: a scan's, an edited file's),
// and the small JPEG most cameras embed as its thumbnail.

import (
	"bufio"
	"encoding/binary"
	"io"
	"strings"
	"time"
)

// photoInfo is what probeJPEG found.
type photoInfo struct {
	width, height int
	progressive   bool
	orientation   int       // EXIF's 1-8 (1: upright); 0 if it says nothing
	taken         time.Time // DateTimeOriginal, else DateTime; zero if it says neither
	thumb         []byte    // the embedded thumbnail, a JPEG
}

// probeJPEG reads a JPEG's markers up to its frame header.
func probeJPEG(r io.Reader) (photoInfo, error) {
	var info photoInfo
	br := bufio.NewReaderSize(r, 4096)
	var soi [2]byte
	if _, err := io.ReadFull(br, soi[:]); err != nil || soi != [2]byte{0xFF, 0xD8} {
		return info, jpegError("no start of image")
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return info, jpegError("no frame header")
		}
		if b != 0xFF {
			continue
		}
		m, err := br.ReadByte()
		for err == nil && m == 0xFF {
			m, err = br.ReadByte()
		}
		if err != nil {
			return info, jpegError("no frame header")
		}
		if m == 0xD8 || m == 0x01 || m >= 0xD0 && m <= 0xD7 || m == 0 {
			continue
		}
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			return info, jpegError("no frame header")
		}
		n := int(binary.BigEndian.Uint16(l[:])) - 2
		if n < 0 {
			return info, jpegError("bad segment length")
		}
		switch {
		case m == 0xC0 || m == 0xC1 || m == 0xC2:
			var f [5]byte
			if n < 5 {
				return info, jpegError("bad frame header")
			}
			if _, err := io.ReadFull(br, f[:]); err != nil {
				return info, jpegError("bad frame header")
			}
			info.height, info.width = int(f[1])<<8|int(f[2]), int(f[3])<<8|int(f[4])
			info.progressive = m == 0xC2
			return info, nil
		case m == 0xE1 && info.orientation == 0 && info.thumb == nil:
			seg := make([]byte, n)
			if _, err := io.ReadFull(br, seg); err != nil {
				return info, jpegError("cut short")
			}
			if e, ok := strings.CutPrefix(string(seg), "Exif\x00\x00"); ok {
				info.orientation, info.taken, info.thumb = parseExif([]byte(e))
			}
		default:
			if _, err := br.Discard(n); err != nil {
				return info, jpegError("cut short")
			}
		}
	}
}

// EXIF tags read.
const (
	tagOrientation     = 0x0112
	tagDateTime        = 0x0132
	tagExifIFD         = 0x8769
	tagDateTimeOrig    = 0x9003
	tagOffsetTime      = 0x9010
	tagOffsetTimeOrig  = 0x9011
	tagThumbOffset     = 0x0201
	tagThumbLength     = 0x0202
	typeShort          = 3
	typeLong           = 4
	typeASCII          = 2
	maxEntriesPerIFD   = 512
	exifTimeLayout     = "2006:01:02 15:04:05"
	exifTimeZoneLayout = "2006:01:02 15:04:05-07:00"
)

// tiff reads a TIFF structure in its byte order; every read is checked
// against its end.
type tiff struct {
	b  []byte
	bo binary.ByteOrder
}

type ifdEntry struct {
	typ   uint16
	count uint32
	value []byte // the 4 bytes of the value or offset field
}

func (t tiff) u16(off int) (uint16, bool) {
	if off < 0 || off+2 > len(t.b) {
		return 0, false
	}
	return t.bo.Uint16(t.b[off:]), true
}

func (t tiff) u32(off int) (uint32, bool) {
	if off < 0 || off+4 > len(t.b) {
		return 0, false
	}
	return t.bo.Uint32(t.b[off:]), true
}

// ifd reads the directory at off: its entries by tag, and the offset of
// the next one.
func (t tiff) ifd(off uint32) (map[uint16]ifdEntry, uint32) {
	n, ok := t.u16(int(off))
	if !ok || n > maxEntriesPerIFD || int(off) < 0 {
		return nil, 0
	}
	entries := map[uint16]ifdEntry{}
	for i := range int(n) {
		e := int(off) + 2 + 12*i
		tag, ok1 := t.u16(e)
		typ, ok2 := t.u16(e + 2)
		count, ok3 := t.u32(e + 4)
		if !ok1 || !ok2 || !ok3 || e+12 > len(t.b) {
			return entries, 0
		}
		entries[tag] = ifdEntry{typ: typ, count: count, value: t.b[e+8 : e+12]}
	}
	next, _ := t.u32(int(off) + 2 + 12*int(n))
	return entries, next
}

// uint is an entry's SHORT or LONG value.
func (t tiff) uint(e ifdEntry) (uint32, bool) {
	switch {
	case e.typ == typeShort && e.count >= 1:
		return uint32(t.bo.Uint16(e.value)), true
	case e.typ == typeLong && e.count >= 1:
		return t.bo.Uint32(e.value), true
	}
	return 0, false
}

// ascii is an entry's text, without its NUL.
func (t tiff) ascii(e ifdEntry) string {
	if e.typ != typeASCII || e.count == 0 || e.count > 64 {
		return ""
	}
	var b []byte
	if e.count <= 4 {
		b = e.value[:e.count]
	} else {
		off := t.bo.Uint32(e.value)
		if uint64(off)+uint64(e.count) > uint64(len(t.b)) {
			return ""
		}
		b = t.b[off : off+e.count]
	}
	return strings.TrimRight(string(b), "\x00 ")
}

// date is a date entry's time, in the zone of the zone entry when there
// is one; zero when the date is missing or not a date.
func (t tiff) date(stamp, zone ifdEntry) time.Time {
	when, z := t.ascii(stamp), t.ascii(zone)
	if tm, err := time.Parse(exifTimeZoneLayout, when+z); z != "" && err == nil {
		return tm
	}
	if tm, err := time.Parse(exifTimeLayout, when); err == nil {
		return tm // no zone given: read as UTC, good for ordering
	}
	return time.Time{}
}

// parseExif reads the orientation, the time taken and the thumbnail from
// an EXIF block (the TIFF structure after "Exif\0\0").
func parseExif(b []byte) (orientation int, taken time.Time, thumb []byte) {
	if len(b) < 8 {
		return
	}
	t := tiff{b: b}
	switch string(b[:4]) {
	case "II*\x00":
		t.bo = binary.LittleEndian
	case "MM\x00*":
		t.bo = binary.BigEndian
	default:
		return
	}
	off, _ := t.u32(4)
	ifd0, next := t.ifd(off)
	if e, ok := ifd0[tagOrientation]; ok {
		if v, ok := t.uint(e); ok && v >= 1 && v <= 8 {
			orientation = int(v)
		}
	}
	var exif map[uint16]ifdEntry
	if e, ok := ifd0[tagExifIFD]; ok {
		if off, ok := t.uint(e); ok {
			exif, _ = t.ifd(off)
		}
	}
	taken = t.date(exif[tagDateTimeOrig], exif[tagOffsetTimeOrig])
	if taken.IsZero() { // a scanner's or an editor's: when the file was made
		taken = t.date(ifd0[tagDateTime], exif[tagOffsetTime])
	}
	if next != 0 && next != off {
		ifd1, _ := t.ifd(next)
		start, ok1 := t.uint(ifd1[tagThumbOffset])
		n, ok2 := t.uint(ifd1[tagThumbLength])
		if ok1 && ok2 && n > 2 && uint64(start)+uint64(n) <= uint64(len(b)) &&
			b[start] == 0xFF && b[start+1] == 0xD8 {
			thumb = b[start : start+n]
		}
	}
	return
}
