package preview

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// withExif puts an EXIF block into a JPEG, as a camera writes one: IFD0
// with the orientation and a pointer to the EXIF IFD (the time taken, and
// its zone if zone is not ""), then IFD1 pointing at the thumbnail.
func withExif(jpg []byte, orientation int, taken, zone string, thumb []byte) []byte {
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

func TestProbeExif(t *testing.T) {
	thumb := jpegOf(t, picture(160, 120), 80)
	jpg := withExif(jpegOf(t, picture(640, 480), 80), 6, "2024:05:06 07:08:09", "+02:00", thumb)
	info, err := probeJPEG(bytes.NewReader(jpg))
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2024, 5, 6, 5, 8, 9, 0, time.UTC)
	if info.width != 640 || info.height != 480 || info.orientation != 6 || !info.taken.Equal(want) || !bytes.Equal(info.thumb, thumb) {
		t.Errorf("probe = %dx%d orientation %d taken %v thumb %d bytes; want 640x480, 6, %v, %d bytes",
			info.width, info.height, info.orientation, info.taken, len(info.thumb), want, len(thumb))
	}
	// Without a zone, the time is read as UTC.
	info, _ = probeJPEG(bytes.NewReader(withExif(jpegOf(t, picture(64, 48), 80), 1, "2020:01:02 03:04:05", "", thumb)))
	if !info.taken.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("taken without a zone = %v", info.taken)
	}
	// The whole file still decodes past its EXIF.
	if m := ours(t, jpg, 8, same); m.Bounds().Dx() != 640 {
		t.Errorf("decoded %v", m.Bounds())
	}
}

// Damaged EXIF is read as far as it holds, never past its end.
func TestParseExifDamaged(t *testing.T) {
	thumb := jpegOf(t, picture(16, 16), 50)
	good := withExif([]byte{0xFF, 0xD8, 0xFF, 0xD9}, 3, "2024:05:06 07:08:09", "+02:00", thumb)
	block := good[2+4+6 : len(good)-2]
	for cut := 0; cut < len(block); cut++ {
		parseExif(block[:cut])
	}
	for i := range block {
		bad := bytes.Clone(block)
		bad[i] ^= 0xff
		parseExif(bad)
	}
}
