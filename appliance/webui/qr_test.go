package webui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/boombuler/barcode/qr"
)

// The SVG draws exactly the code's dark modules, a row's run at a time,
// inside a quiet zone of 4, and names itself for a screen reader.
func TestQRSVG(t *testing.T) {
	text := "https://bonesync.local/index.php/s/AbCdEfGhIjKlMnO"
	svg, err := qrSVG(text, `the link to "Trip"`)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := qr.Encode(text, qr.M, qr.Auto)
	n := code.Bounds().Dx()
	// dark is checked against what every QR code has, so that the SVG
	// is not only compared with itself: the finder pattern's dark ring
	// and centre, the light ring between, at the top left corner.
	if !dark(code, 0, 0) || !dark(code, 6, 0) || dark(code, 1, 1) || !dark(code, 3, 3) || dark(code, 7, 7) {
		t.Fatal("dark does not read the code's finder pattern")
	}
	if !strings.Contains(string(svg), fmt.Sprintf(`viewBox="0 0 %d %d"`, n+8, n+8)) || !strings.Contains(string(svg), `aria-label="the link to &#34;Trip&#34;"`) {
		t.Fatalf("qrSVG = %.300s", svg)
	}
	drawn := map[[2]int]bool{}
	for _, m := range regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`).FindAllStringSubmatch(string(svg), -1) {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		w, _ := strconv.Atoi(m[3])
		if m[4] != m[3] {
			t.Fatalf("a run that does not close: %s", m[0])
		}
		for i := range w {
			drawn[[2]int{x + i - 4, y - 4}] = true
		}
	}
	darks := 0
	for y := range n {
		for x := range n {
			want := dark(code, x, y)
			if drawn[[2]int{x, y}] != want {
				t.Fatalf("module %d,%d: drawn %v, want %v", x, y, drawn[[2]int{x, y}], want)
			}
			if want {
				darks++
			}
		}
	}
	if darks == 0 || len(drawn) != darks {
		t.Fatalf("%d modules drawn, %d dark in the code", len(drawn), darks)
	}
}
