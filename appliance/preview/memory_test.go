package preview

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"runtime"
	"testing"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

// The hostile picture: 130 KB of interlaced 16-bit RGBA at 4 MP, 48 MiB
// to the standard decoder. Its estimate is more than the whole budget,
// so it has no preview (a 404, kept), and the decoder never ran: the
// heap did not grow by its pixels.
func TestHostilePNGRefusedBeforeDecoding(t *testing.T) {
	b := newBox(t)
	b.h.Maker.Memory = budget.New(budget.Admission, budget.Options{})
	hostile := previewtest.InterlacedPNG(2048, 2048)
	if len(hostile) > 200<<10 {
		t.Fatalf("the hostile PNG is %d bytes, want a small one", len(hostile))
	}
	in := b.put("evil.png", hostile)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=1024&y=1024&a=1", in.FileID))
	runtime.ReadMemStats(&after)
	if w.Code != 404 {
		t.Errorf("preview of the hostile PNG = %d %s, want 404", w.Code, w.Body.String())
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("the preview's refusal allocated %d MiB: the decoder ran", grew>>20)
	}
	st := b.h.Maker.Memory.Stats()
	if len(st.Kinds) != 1 || st.Kinds[0].Refused != 1 || st.InUse != 0 {
		t.Errorf("budget after the refusal: %+v, want one refused preview and nothing held", st)
	}
	// A small interlaced PNG still gets its preview, drawn from the budget.
	small := b.put("small.png", previewtest.InterlacedPNG(300, 200))
	if got := picSize(t, b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=256&y=256&a=1", small.FileID))); got != image.Pt(256, 171) {
		t.Errorf("small interlaced preview = %v, want 256×171", got)
	}
}

// A preview the budget has no room for now is a 503 with Retry-After, and
// is not remembered as having none: asked again with room, it is made.
func TestPreviewWaitsForTheBudget(t *testing.T) {
	b := newBox(t)
	mem := budget.New(budget.Admission, budget.Options{Wait: 1})
	b.h.Maker.Memory = mem
	in := b.put("photo.png", pngOf(t, previewtest.Picture(640, 480)))
	hold, err := mem.Take(context.Background(), "login", budget.Admission)
	if err != nil {
		t.Fatal(err)
	}
	w := b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=256&y=256&a=1", in.FileID))
	if w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Errorf("preview while the budget is full = %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	hold()
	if got := picSize(t, b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=256&y=256&a=1", in.FileID))); got != image.Pt(256, 192) {
		t.Errorf("preview with room = %v, want 256×192", got)
	}
}

// The estimates follow the decoders' pixel formats.
func TestWholeBytes(t *testing.T) {
	for _, c := range []struct {
		model      color.Model
		interlaced bool
		perPixel   float64
	}{
		{color.NRGBA64Model, true, 12}, // 8 bytes, half again for the passes
		{color.NRGBAModel, true, 6},
		{color.GrayModel, false, 1},
		{color.YCbCrModel, false, 1.5},
		{color.Palette{color.Black, color.White}, false, 2},
		{color.NRGBAModel, false, 8}, // a lossless WebP
	} {
		got := float64(wholeBytes(image.Config{ColorModel: c.model, Width: 1000, Height: 1000}, c.interlaced)-4000) / 1e6
		if got != c.perPixel {
			t.Errorf("wholeBytes(%T, interlaced %v) = %v bytes a pixel, want %v", c.model, c.interlaced, got, c.perPixel)
		}
	}
}
