package preview

import (
	"bytes"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

func TestProbeExif(t *testing.T) {
	thumb := jpegOf(t, previewtest.Picture(160, 120), 80)
	jpg := previewtest.WithExif(jpegOf(t, previewtest.Picture(640, 480), 80), 6, "2024:05:06 07:08:09", "+02:00", thumb)
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
	info, _ = probeJPEG(bytes.NewReader(previewtest.WithExif(jpegOf(t, previewtest.Picture(64, 48), 80), 1, "2020:01:02 03:04:05", "", thumb)))
	if !info.taken.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("taken without a zone = %v", info.taken)
	}
	// The whole file still decodes past its EXIF.
	if m := ours(t, jpg, 8, same); m.Bounds().Dx() != 640 {
		t.Errorf("decoded %v", m.Bounds())
	}
}

// The date taken is DateTimeOriginal, else IFD0's DateTime (a scanner's,
// an editor's, with OffsetTime for its zone), else none.
func TestProbeExifDates(t *testing.T) {
	jpg := jpegOf(t, previewtest.Picture(64, 48), 80)
	for _, tc := range []struct {
		what string
		exif previewtest.Exif
		want time.Time
	}{
		{"DateTime alone", previewtest.Exif{DateTime: "2019:03:04 05:06:07"}, time.Date(2019, 3, 4, 5, 6, 7, 0, time.UTC)},
		{"DateTime in its zone", previewtest.Exif{DateTime: "2019:03:04 05:06:07", DateTimeZone: "-05:00"}, time.Date(2019, 3, 4, 10, 6, 7, 0, time.UTC)},
		{"both", previewtest.Exif{Orientation: 1, DateTime: "2025:01:01 00:00:00", Taken: "2018:02:03 04:05:06"}, time.Date(2018, 2, 3, 4, 5, 6, 0, time.UTC)},
		{"DateTimeOriginal no date", previewtest.Exif{DateTime: "2019:03:04 05:06:07", Taken: "    :  :     :  :  "}, time.Date(2019, 3, 4, 5, 6, 7, 0, time.UTC)},
		{"neither", previewtest.Exif{Orientation: 3}, time.Time{}},
	} {
		info, err := probeJPEG(bytes.NewReader(tc.exif.Into(jpg)))
		if err != nil || !info.taken.Equal(tc.want) {
			t.Errorf("%s: taken = %v (%v), want %v", tc.what, info.taken, err, tc.want)
		}
	}
}

// Damaged EXIF is read as far as it holds, never past its end.
func TestParseExifDamaged(t *testing.T) {
	thumb := jpegOf(t, previewtest.Picture(16, 16), 50)
	good := previewtest.WithExif([]byte{0xFF, 0xD8, 0xFF, 0xD9}, 3, "2024:05:06 07:08:09", "+02:00", thumb)
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
