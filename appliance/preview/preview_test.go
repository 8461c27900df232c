package preview

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
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
	h := &Handler{Maker: &Maker{Store: s, Log: slog.New(slog.DiscardHandler)}, Log: slog.New(slog.DiscardHandler)}
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

func TestTaken(t *testing.T) {
	b := newBox(t)
	shot := b.put("shot.jpg", previewtest.WithExif(jpegOf(t, previewtest.Picture(64, 48), 80), 1, "2023:07:08 09:10:11", "", jpegOf(t, previewtest.Picture(16, 12), 50)))
	plain := b.put("plain.jpg", jpegOf(t, previewtest.Picture(64, 48), 80))
	src := func(p string, in store.Info) Source {
		return Source{User: "u", ID: in.FileID, Version: in.ETag, Open: func() (io.ReadSeekCloser, error) { return b.tree.Open(p) }}
	}
	pics := []Source{src("shot.jpg", shot), src("plain.jpg", plain)}
	got := b.h.Maker.Taken("u", pics)
	if !got[0].Equal(time.Date(2023, 7, 8, 9, 10, 11, 0, time.UTC)) || !got[1].IsZero() {
		t.Errorf("Taken = %v", got)
	}
	// Kept: read again without opening the files.
	pics[0].Open = func() (io.ReadSeekCloser, error) { t.Error("opened again"); return nil, os.ErrNotExist }
	if again := b.h.Maker.Taken("u", pics); !again[0].Equal(got[0]) {
		t.Errorf("kept date = %v", again[0])
	}
	// Swept with what no file has.
	b.tree.Remove("shot.jpg")
	b.tree.Bin().Empty("")
	b.h.Maker.Sweep()
	if idx := b.h.Maker.loadDates("u"); len(idx) != 1 {
		t.Errorf("after the sweep the dates hold %v", idx)
	}
}

// BenchmarkMake makes the grid preview of a 12-megapixel photo, from its
// EXIF thumbnail and from the photo itself, and the iOS app's 1024-pixel
// one: the decode, the shrink and the encode, as a request has them made.
func BenchmarkMake(b *testing.B) {
	var photo, thumb bytes.Buffer
	jpeg.Encode(&photo, previewtest.Photo(4000, 3000, 12), &jpeg.Options{Quality: 90})
	jpeg.Encode(&thumb, previewtest.Photo(512, 384, 12), &jpeg.Options{Quality: 80})
	for _, c := range []struct {
		name, how string
		side      int
		data      []byte
	}{
		{"thumbnail", "exif 4/8", 256, previewtest.WithExif(photo.Bytes(), 1, "2026:06:07 08:09:10", "", thumb.Bytes())},
		{"photo", "1/8", 256, photo.Bytes()},
		{"photo-1024", "4/8", 1024, photo.Bytes()},
	} {
		f, err := os.Create(filepath.Join(b.TempDir(), "photo.jpg"))
		if err != nil {
			b.Fatal(err)
		}
		f.Write(c.data)
		b.Run(c.name, func(b *testing.B) {
			m := &Maker{}
			for b.Loop() {
				f.Seek(0, io.SeekStart)
				if _, how, err := m.make(context.Background(), f, spec{side: c.side}); err != nil || how != c.how {
					b.Fatalf("made %q, %v; want %q", how, err, c.how)
				}
			}
		})
		f.Close()
	}
}
