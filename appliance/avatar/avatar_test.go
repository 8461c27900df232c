package avatar

import (
	"bytes"
	"image/png"
	"testing"
)

func TestPNG(t *testing.T) {
	for _, size := range []int{64, 512, 4096} {
		b, err := PNG("alice", size)
		if err != nil {
			t.Fatal(err)
		}
		m, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		want := min(size, MaxSize)
		if m.Bounds().Dx() != want {
			t.Errorf("size %d: %v", size, m.Bounds())
		}
		// A corner is clear, the middle is the letter's white, the disc its
		// colour beside it.
		if _, _, _, a := m.At(0, 0).RGBA(); a != 0 {
			t.Errorf("size %d: the corner is not clear", size)
		}
		c := Colour("alice")
		if r, g, bl, _ := m.At(want/2, want/12).RGBA(); byte(r>>8) != c.R || byte(g>>8) != c.G || byte(bl>>8) != c.B {
			t.Errorf("size %d: the disc is not %v", size, c)
		}
		white := 0
		for x := want / 4; x < 3*want/4; x++ {
			if r, g, bl, _ := m.At(x, want/2).RGBA(); r>>8 > 240 && g>>8 > 240 && bl>>8 > 240 {
				white++
			}
		}
		if white == 0 {
			t.Errorf("size %d: no letter across the middle", size)
		}
	}
	for name, want := range map[string]string{"alice": "A", " élodie": "É", "_bob": "B", "": "?", "9lives": "9"} {
		if got := Initial(name); got != want {
			t.Errorf("Initial(%q) = %q, want %q", name, got, want)
		}
	}
}
