// Package avatar draws a user's picture when none was given: the first
// letter of the name, white on a disc of a colour the name picks, as
// Nextcloud draws one. The apps and the desktop client show it beside
// the account (/index.php/avatar/USER/SIZE); they decode PNG, not SVG.
package avatar

import (
	"bytes"
	"hash/fnv"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomedium"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// MaxSize is the largest side drawn; a larger request gets this.
const MaxSize = 512

// colours are the discs' colours: Nextcloud's palette, dark enough for
// white letters.
var colours = []color.RGBA{
	{0x00, 0x82, 0xc9, 255}, {0x1e, 0x78, 0xc1, 255}, {0x7c, 0x31, 0xa8, 255}, {0xb3, 0x31, 0x2d, 255},
	{0xc9, 0x5c, 0x00, 0xff}, {0x2d, 0x7b, 0x41, 255}, {0x00, 0x7a, 0x82, 255}, {0x6e, 0x58, 0x3a, 255},
}

var face = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(gomedium.TTF) })

// Initial is the letter drawn for name: its first letter or digit, in
// capitals ("?" for none).
func Initial(name string) string {
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return strings.ToUpper(string(r))
		}
	}
	return "?"
}

// Colour is the disc's colour for name.
func Colour(name string) color.RGBA {
	h := fnv.New32a()
	h.Write([]byte(name))
	return colours[h.Sum32()%uint32(len(colours))]
}

// PNG draws name's picture, size pixels square (at most MaxSize).
func PNG(name string, size int) ([]byte, error) {
	size = min(max(size, 16), MaxSize)
	m := image.NewRGBA(image.Rect(0, 0, size, size))
	disc(m, Colour(name))
	f, err := face()
	if err != nil {
		return nil, err
	}
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: float64(size) * 0.5, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, err
	}
	defer fc.Close()
	letter := Initial(name)
	d := &font.Drawer{Dst: m, Src: image.White, Face: fc}
	b, _ := d.BoundString(letter)
	w, h := b.Max.X-b.Min.X, b.Max.Y-b.Min.Y
	d.Dot = fixed.Point26_6{
		X: fixed.I(size)/2 - w/2 - b.Min.X,
		Y: fixed.I(size)/2 - h/2 - b.Min.Y,
	}
	d.DrawString(letter)
	var out bytes.Buffer
	err = png.Encode(&out, m)
	return out.Bytes(), err
}

// disc fills m with a disc of colour c, its edge smoothed.
func disc(m *image.RGBA, c color.RGBA) {
	size := m.Bounds().Dx()
	r := float64(size) / 2
	draw.Draw(m, m.Bounds(), image.Transparent, image.Point{}, draw.Src)
	for y := range size {
		for x := range size {
			dx, dy := float64(x)+0.5-r, float64(y)+0.5-r
			// Coverage by distance from the edge, over one pixel.
			cov := r - math.Sqrt(dx*dx+dy*dy) + 0.5
			if cov <= 0 {
				continue
			}
			a := min(cov, 1)
			m.SetRGBA(x, y, color.RGBA{byte(float64(c.R) * a), byte(float64(c.G) * a), byte(float64(c.B) * a), byte(255 * a)})
		}
	}
}
