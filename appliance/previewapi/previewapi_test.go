package previewapi

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/preview/previewtest"
	"github.com/bonesync/bonesync/appliance/store"
)

type door string

func (d door) Check(_ auth.Access, w http.ResponseWriter, r *http.Request) (auth.Caller, error) {
	return auth.Caller{User: string(d)}, nil
}

type box struct {
	t     *testing.T
	store *store.Store
	tree  *store.Tree
	h     *Handler
	mux   *front.Routes
}

func newBox(t *testing.T) *box {
	s, err := store.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	s.SetTrashPolicy(30*24*time.Hour, 0)
	tr, err := s.Tree("u")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	log := slog.New(slog.DiscardHandler)
	h := &Handler{Maker: &preview.Maker{Store: s, Log: log}, Log: log}
	mux := front.NewRoutes(door("u"))
	h.Routes(mux)
	return &box{t: t, store: s, tree: tr, h: h, mux: mux}
}

func (b *box) put(p string, data []byte) store.Info {
	b.t.Helper()
	u, err := b.tree.Create(p, false)
	if err != nil {
		b.t.Fatal(err)
	}
	u.Write(data)
	if err := u.Close(); err != nil {
		b.t.Fatal(err)
	}
	return u.Result()
}

func jpegOf(t testing.TB, m image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (b *box) get(target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	b.mux.ServeHTTP(w, r)
	return w
}

func picSize(t *testing.T, w *httptest.ResponseRecorder) image.Point {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("preview = %d %s", w.Code, w.Body.String())
	}
	c, _, err := image.DecodeConfig(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatalf("the preview is no picture: %v", err)
	}
	return image.Pt(c.Width, c.Height)
}

func TestPreviewsOfPhotos(t *testing.T) {
	b := newBox(t)
	// A portrait photo: stored 1600×1200, the camera turned right (6),
	// with a 512×384 EXIF thumbnail.
	photo := previewtest.WithExif(jpegOf(t, previewtest.Picture(1600, 1200), 85), 6, "2024:05:06 07:08:09", "+02:00", jpegOf(t, previewtest.Picture(512, 384), 80))
	if err := b.tree.Mkdir("DCIM"); err != nil {
		t.Fatal(err)
	}
	in := b.put("DCIM/photo.jpg", photo)

	// The grid's square: from the EXIF thumbnail, upright.
	w := b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=256&y=256&a=0&mode=cover&forceIcon=0", in.FileID))
	if got := picSize(t, w); got != image.Pt(256, 256) || w.Header().Get("Content-Type") != "image/jpeg" {
		t.Errorf("square preview %v %s, want 256×256 JPEG", got, w.Header().Get("Content-Type"))
	}
	// Its shape kept (a=1): 1024 on its long side, decoded at 1/2 (the
	// thumbnail is too small), upright: taller than wide.
	w = b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=1024&y=1024&a=1", in.FileID))
	if got := picSize(t, w); got != image.Pt(768, 1024) {
		t.Errorf("fitted preview %v, want 768×1024", got)
	}
	// Made once: the ETag comes back as 304, and a second request reads
	// what was kept.
	etag := w.Header().Get("ETag")
	if w := b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=1024&y=1024&a=1", in.FileID), "If-None-Match", etag); w.Code != 304 {
		t.Errorf("If-None-Match = %d, want 304", w.Code)
	}
	kept, _ := filepath.Glob(filepath.Join(b.store.Dir(), ".bonesync", "previews", "u", "*", "*"))
	if len(kept) != 2 {
		t.Errorf("kept previews: %q, want 2", kept)
	}
	// By path, and the files app's square thumbnail.
	if got := picSize(t, b.get("/index.php/core/preview.png?file=/DCIM/photo.jpg&x=128&y=128&a=1")); got != image.Pt(96, 128) {
		t.Errorf("preview.png = %v, want 96×128", got)
	}
	if got := picSize(t, b.get("/index.php/apps/files/api/v1/thumbnail/128/128/DCIM/photo.jpg")); got != image.Pt(128, 128) {
		t.Errorf("thumbnail = %v, want 128×128", got)
	}
	// A PNG with transparency stays a PNG; a small picture is not enlarged.
	alpha := image.NewNRGBA(image.Rect(0, 0, 90, 60))
	for i := range alpha.Pix {
		alpha.Pix[i] = byte(i)
	}
	var pb bytes.Buffer
	png.Encode(&pb, alpha)
	pin := b.put("icon.png", pb.Bytes())
	w = b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=256&y=256&a=1", pin.FileID))
	if got := picSize(t, w); got != image.Pt(90, 60) || w.Header().Get("Content-Type") != "image/png" {
		t.Errorf("PNG preview %v %s, want 90×60 PNG", got, w.Header().Get("Content-Type"))
	}
	// No preview: not a picture, a damaged one, a folder, someone else's id.
	txt := b.put("notes.txt", []byte("hello"))
	broken := b.put("broken.jpg", photo[:500])
	for _, target := range []string{
		fmt.Sprintf("/index.php/core/preview?fileId=%d&x=64&y=64", txt.FileID),
		fmt.Sprintf("/index.php/core/preview?fileId=%d&x=64&y=64", broken.FileID),
		"/index.php/core/preview?fileId=12345&x=64&y=64",
		"/index.php/apps/files/api/v1/thumbnail/64/64/DCIM",
	} {
		if w := b.get(target); w.Code != 404 {
			t.Errorf("%s = %d, want 404", target, w.Code)
		}
	}
	if w := b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=0&y=64", in.FileID)); w.Code != 400 {
		t.Errorf("x=0 = %d, want 400", w.Code)
	}
}

func TestPreviewOfTrashedAndSweep(t *testing.T) {
	b := newBox(t)
	in := b.put("a.jpg", jpegOf(t, previewtest.Picture(300, 200), 80))
	if got := picSize(t, b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=128&y=128&a=1", in.FileID))); got != image.Pt(128, 85) {
		t.Errorf("preview %v", got)
	}
	if err := b.tree.Remove("a.jpg"); err != nil {
		t.Fatal(err)
	}
	if got := picSize(t, b.get(fmt.Sprintf("/index.php/apps/files_trashbin/preview?fileId=%d&x=128&y=128&a=1", in.FileID))); got != image.Pt(128, 85) {
		t.Errorf("trash preview %v", got)
	}
	// In the trash, it keeps its preview (the same: its content did not
	// change); purged, the preview goes.
	if n, err := b.h.Maker.Sweep(); err != nil || n != 0 {
		t.Errorf("Sweep with the file in the trash removed %d, %v", n, err)
	}
	if err := b.tree.Bin().Empty(""); err != nil {
		t.Fatal(err)
	}
	if n, err := b.h.Maker.Sweep(); err != nil || n != 1 {
		t.Errorf("Sweep after the purge removed %d, %v; want 1", n, err)
	}
}

// A 12-megapixel photo's preview takes the memory of the preview, not of
// the picture: image/jpeg would allocate 18 MB for it.
func TestPreviewMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes a 12-megapixel JPEG")
	}
	b := newBox(t)
	big := image.NewYCbCr(image.Rect(0, 0, 4000, 3000), image.YCbCrSubsampleRatio420)
	for i := range big.Y {
		big.Y[i] = byte(i % 251)
	}
	for i := range big.Cb {
		big.Cb[i], big.Cr[i] = byte(i%200), byte(i%100)
	}
	var jb bytes.Buffer
	jpeg.Encode(&jb, big, &jpeg.Options{Quality: 85})
	big = nil
	in := b.put("big.jpg", jb.Bytes())
	for _, side := range []int{256, 1024} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := b.get(fmt.Sprintf("/index.php/core/preview?fileId=%d&x=%d&y=%d&a=1", in.FileID, side, side))
		runtime.ReadMemStats(&after)
		if got := picSize(t, w); got.X != side {
			t.Errorf("preview %v, want %d wide", got, side)
		}
		t.Logf("side %d: allocated %.1f MB", side, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
		// The preview itself, 4 bytes a pixel, twice (turned upright), and
		// rows of blocks.
		limit := uint64(2*4*side*side*3/4 + 1<<20)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
			t.Errorf("a %d preview of 12 megapixels allocated %.1f MB, want at most %.1f", side, float64(alloc)/(1<<20), float64(limit)/(1<<20))
		}
	}
}

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

func pngOf(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
