package preview

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

// FuzzDecode feeds the decoders any bytes: an error is fine, a panic or
// a hang is not (a preview is made of whatever a user uploads).
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jpg")
	for _, name := range files {
		b, _ := os.ReadFile(name)
		f.Add(b)
	}
	f.Add(previewtest.WithExif(jpegOf(f, previewtest.Picture(40, 30), 70), 6, "2024:05:06 07:08:09", "+02:00", jpegOf(f, previewtest.Picture(16, 12), 50)))
	f.Add(pngBytes(previewtest.Picture(30, 20)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return
		}
		for _, n := range []int{1, 2, 8} {
			decodeJPEG(bytes.NewReader(b), func(int, int, bool) int { return n }, &shrink{fit: fitWithin(64)})
		}
		decodePNG(bytes.NewReader(b), &shrink{fit: fitWithin(64)})
		probeJPEG(bytes.NewReader(b))
		parseExif(b)
		r := &rendering{f: bytes.NewReader(b), spec: spec{side: 64, square: true}, draw: func(int64) (func(), error) { return func() {}, nil }}
		r.run()
	})
}
