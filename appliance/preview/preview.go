// Package preview makes the previews of photos and pictures that the
// Nextcloud apps' photo grids, the desktop client and the web UI show:
// JPEG, PNG, GIF and WebP, in the box's memory. A JPEG's embedded EXIF
// thumbnail is used where it is large enough; otherwise a JPEG is decoded
// at 1/8, 1/4 or 1/2 of its size, a row of blocks at a time (jpeg.go),
// and a PNG a row at a time (png.go), each shrunk as it comes (scale.go):
// a 12-megapixel photo's preview takes the memory of the preview. A
// JPEG's preview is made in YCbCr and encoded by jpegenc.go. GIF,
// WebP and interlaced PNG are decoded whole, up to 4 megapixels, in the
// box's one slot for work that takes that much memory (the one Argon2id
// hashes take). One preview is made at a time.
//
// A preview is made once per size class (128, 256, 512 or 1024 pixels,
// fitted or square) and kept in the store's own folder
// (files/.bonesync/previews/USER), named by the file's id and ETag,
// so a new version gets new previews and a rename keeps them. What no
// file has any more (deleted, replaced, purged from the trash) is swept
// away daily (Sweep).
package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/store"
)

// Files is what previews need of the store: each user's files (Tree), who
// has any (Owners), and a folder of the store's own to keep previews in.
type Files interface {
	Tree(user string) (*store.Tree, error)
	Owners() ([]string, error)
	OwnDir(name string) (string, error)
}

// tree is what a preview reads of a user's files.
type tree interface {
	Info(p string) (store.Info, error)
	Find(id uint64) (string, store.Info, error)
	Open(p string) (store.File, error)
	Walk(p string, fn func(p string, in store.Info) error) error
	Bin() store.Bin
	Close() error
}

// Maker makes and keeps previews.
type Maker struct {
	Store Files
	// Memory is the box's budget: each preview draws what its decode
	// will take before it starts (memory.go); nil: unbounded.
	Memory *budget.Budget
	Log    *slog.Logger

	one   sync.Mutex // one preview made at a time
	dates sync.Mutex // the dates photos were taken (dates.go)
}

// Preview is a preview made: a JPEG, or a PNG where the picture has
// transparency.
type Preview struct {
	Data []byte
	Type string
}

// sizes are the size classes previews are made in: the smallest that
// covers the request is used, the largest for anything larger.
var sizes = []int{128, 256, 512, 1024}

func sizeFor(w, h int) int {
	s := max(w, h)
	for _, t := range sizes {
		if s <= t {
			return t
		}
	}
	return sizes[len(sizes)-1]
}

// Source is a file to preview: its owner, its id, and what names its
// content (its ETag, or its trash item), and how to open it.
type Source struct {
	User    string
	ID      uint64
	Version string
	Open    func() (io.ReadSeekCloser, error)
}

// Get returns the preview of src for a request of w×h pixels (square: cut
// to a square from the middle), made at most once. A preview the memory
// budget has no room for now is a *budget.Refusal (ErrBusy: ask again
// later), and nothing is kept; one that could never fit is NoPreview.
func (m *Maker) Get(ctx context.Context, src Source, w, h int, square bool) (Preview, error) {
	sp := spec{side: sizeFor(w, h), square: square}
	file, err := m.cachePath(src, sp)
	if err != nil {
		return Preview{}, err
	}
	if p, err := cached(file); err == nil || errors.Is(err, errNoPreview) {
		return p, err
	}
	m.one.Lock()
	defer m.one.Unlock()
	if p, err := cached(file); err == nil || errors.Is(err, errNoPreview) {
		return p, err // made while this request waited
	}
	f, err := src.Open()
	if err != nil {
		return Preview{}, err
	}
	defer f.Close()
	start := time.Now()
	p, how, err := m.make(ctx, f, sp)
	if budget.ForNow(err) {
		return Preview{}, err // busy, or the client went: not the file's fault
	}
	if err != nil {
		// Not a picture this box decodes, or a damaged one: said once,
		// and not tried again for this content.
		m.Log.Info("no preview", "user", src.User, "id", src.ID, "err", err)
		if err := writeCache(file+".none", nil); err != nil {
			m.Log.Warn("preview cache", "err", err) // tried again next time
		}
		return Preview{}, fmt.Errorf("%w: %v", errNoPreview, err)
	}
	if err := writeCache(file, p.Data); err != nil {
		m.Log.Warn("preview not kept", "user", src.User, "id", src.ID, "err", err) // made again next time
	}
	m.Log.Debug("made a preview", "user", src.User, "id", src.ID, "side", sp.side, "square", sp.square,
		"how", how, "bytes", len(p.Data), "duration", time.Since(start))
	return p, nil
}

// NoPreview reports whether an error from Get means the file has none (a
// 404), not that making one failed.
func NoPreview(err error) bool { return errors.Is(err, errNoPreview) }

func (m *Maker) make(ctx context.Context, f io.ReadSeeker, sp spec) (Preview, string, error) {
	r := &rendering{f: f, spec: sp, draw: func(n int64) (func(), error) { return m.Memory.Take(ctx, "preview", n) }}
	img, err := r.run()
	if err != nil {
		return Preview{}, "", err
	}
	p, err := encode(img)
	return p, r.used, err
}

// encode writes a preview as a JPEG, or as a PNG if it has transparency
// (a JPEG's is an image.YCbCr, which has none).
func encode(m image.Image) (Preview, error) {
	var b bytes.Buffer
	if m, ok := m.(*image.RGBA); ok {
		for i := 3; i < len(m.Pix); i += 4 {
			if m.Pix[i] != 255 {
				err := png.Encode(&b, m)
				return Preview{b.Bytes(), "image/png"}, err
			}
		}
	}
	var err error
	if yc, ok := m.(*image.YCbCr); ok {
		err = encodeJPEG(&b, yc, 80)
	} else {
		err = jpeg.Encode(&b, m, &jpeg.Options{Quality: 80})
	}
	return Preview{b.Bytes(), "image/jpeg"}, err
}

// cachePath is where src's preview of sp is kept: per user, in one of 256
// folders, named ID-VERSION.SIDE (s: square).
func (m *Maker) cachePath(src Source, sp spec) (string, error) {
	if src.User == "" || strings.ContainsAny(src.User, "/\\\x00") || strings.HasPrefix(src.User, ".") || !safeVersion(src.Version) {
		return "", fmt.Errorf("preview of %q/%d: bad name", src.User, src.ID)
	}
	dir, err := m.Store.OwnDir("previews")
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%016x-%s.%d", src.ID, src.Version, sp.side)
	if sp.square {
		name += "s"
	}
	return filepath.Join(dir, src.User, fmt.Sprintf("%02x", src.ID&0xff), name), nil
}

// safeVersion is whether v can be part of a file name: an ETag's or a
// trash item's letters.
func safeVersion(v string) bool {
	for _, c := range v {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == '-') {
			return false
		}
	}
	return v != ""
}

// cached reads a kept preview; a file with no preview has a ".none" mark.
func cached(file string) (Preview, error) {
	b, err := os.ReadFile(file)
	if err == nil {
		switch kind(b) {
		case "jpeg":
			return Preview{b, "image/jpeg"}, nil
		case "png":
			return Preview{b, "image/png"}, nil
		}
		// Damaged (a power cut while it was written): made again.
		return Preview{}, fs.ErrNotExist
	}
	if _, err := os.Stat(file + ".none"); err == nil {
		return Preview{}, errNoPreview
	}
	return Preview{}, err
}

// writeCache keeps a preview: written beside, then renamed, so a reader
// sees all of it or none. Not synced: a preview lost to a power cut is
// made again, and one cut short is not taken (cached).
func writeCache(file string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, file)
}
