package webui

import (
	"fmt"
	"html/template"
	"image"
	"strings"

	"github.com/boombuler/barcode/qr"
)

// qrSVG is text as a QR code, an SVG drawn in the page (the pages' content
// policy takes no image from elsewhere, and this needs none), named label
// for a screen reader: the two-factor enrolment's secret, a public link.
// Each row's run of dark modules is one rectangle, which keeps a link's
// code to a few kilobytes. The encoder is boombuler/barcode's, which the
// TOTP library already brings.
func qrSVG(text, label string) (template.HTML, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", fmt.Errorf("QR code of %d bytes: %w", len(text), err)
	}
	b := code.Bounds()
	const quiet = 4
	var path strings.Builder
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; {
			if !dark(code, x, y) {
				x++
				continue
			}
			run := 1
			for x+run < b.Max.X && dark(code, x+run, y) {
				run++
			}
			fmt.Fprintf(&path, "M%d %dh%dv1h-%dz", x-b.Min.X+quiet, y-b.Min.Y+quiet, run, run)
			x += run
		}
	}
	n := b.Dx() + 2*quiet
	return template.HTML(fmt.Sprintf(`<svg class="qr" role="img" aria-label="%s" viewBox="0 0 %d %d" width="%d" height="%d"><rect width="100%%" height="100%%" fill="#fff"/><path d="%s" fill="#000"/></svg>`,
		template.HTMLEscapeString(label), n, n, n*5, n*5, path.String())), nil
}

// dark is whether the module at x, y is dark.
func dark(img image.Image, x, y int) bool {
	r, _, _, _ := img.At(x, y).RGBA()
	return r < 0x8000
}
