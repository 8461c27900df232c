package preview

import (
	"bytes"
	"context"
	"image/jpeg"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
	"github.com/bonesync/bonesync/appliance/store"
)

type box struct {
	t     *testing.T
	store *store.Store
	tree  *store.Tree
	m     *Maker
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
	return &box{t: t, store: s, tree: tr, m: &Maker{Store: s, Log: slog.New(slog.DiscardHandler)}}
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

func TestTaken(t *testing.T) {
	b := newBox(t)
	shot := b.put("shot.jpg", previewtest.WithExif(jpegOf(t, previewtest.Picture(64, 48), 80), 1, "2023:07:08 09:10:11", "", jpegOf(t, previewtest.Picture(16, 12), 50)))
	plain := b.put("plain.jpg", jpegOf(t, previewtest.Picture(64, 48), 80))
	scan := b.put("scan.jpg", previewtest.Exif{DateTime: "2001:02:03 04:05:06"}.Into(jpegOf(t, previewtest.Picture(64, 48), 80)))
	src := func(p string, in store.Info) Source {
		return Source{User: "u", ID: in.FileID, Version: in.ETag, Open: func() (io.ReadSeekCloser, error) { return b.tree.Open(p) }}
	}
	pics := []Source{src("shot.jpg", shot), src("plain.jpg", plain), src("scan.jpg", scan)}
	got := b.m.Taken("u", pics)
	if !got[0].Equal(time.Date(2023, 7, 8, 9, 10, 11, 0, time.UTC)) || !got[1].IsZero() || !got[2].Equal(time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)) {
		t.Errorf("Taken = %v, want DateTimeOriginal's, none, DateTime's", got)
	}
	// Kept: read again without opening the files.
	pics[0].Open = func() (io.ReadSeekCloser, error) { t.Error("opened again"); return nil, os.ErrNotExist }
	if again := b.m.Taken("u", pics); !again[0].Equal(got[0]) {
		t.Errorf("kept date = %v", again[0])
	}
	// Swept with what no file has, and the dates file of an older
	// reading (taken.json, of DateTimeOriginal alone) with them.
	name, _ := b.m.datesPath("u")
	old := filepath.Join(filepath.Dir(name), "taken.json")
	os.WriteFile(old, []byte(`{}`), 0o600)
	b.tree.Remove("shot.jpg")
	b.tree.Bin().Empty("")
	b.m.Sweep()
	if idx := b.m.loadDates("u"); len(idx) != 2 {
		t.Errorf("after the sweep the dates hold %v, want plain.jpg's and scan.jpg's", idx)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the sweep left %s: %v", old, err)
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
