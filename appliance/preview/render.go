package preview

// render makes a picture's preview: the format sniffed from its first
// bytes, decoded at the smallest scale that still gives the preview its
// pixels, shrunk, cropped if asked, and turned upright.

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/gif"
	"image/png"
	"io"

	"golang.org/x/image/webp"

	"github.com/bonesync/bonesync/appliance/budget"
)

// errNoPreview says a file has none: not a picture the box decodes.
var errNoPreview = errors.New("no preview for this kind of file")

// spec is what a preview is asked to be: at most side pixels on its longer
// side, or side×side cut from the middle.
type spec struct {
	side   int
	square bool
}

func (s spec) fit() func(w8, h8 int) (int, int) {
	if s.square {
		return cover(s.side)
	}
	return fitWithin(s.side)
}

// enough is whether a picture of w×h covers the spec without enlarging.
func (s spec) enough(w, h int) bool {
	if s.square {
		return min(w, h) >= s.side
	}
	return max(w, h) >= s.side
}

// kind sniffs a file's format.
func kind(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "jpeg"
	case bytes.HasPrefix(head, []byte(pngSignature)):
		return "png"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "webp"
	}
	return ""
}

// rendering is one preview being made.
type rendering struct {
	f    io.ReadSeeker
	spec spec
	// draw takes n bytes from the box's memory budget, before a decode
	// that takes them starts (memory.go)
	draw func(n int64) (release func(), err error)
	used string // how it was made, for the log and the tests: "exif 4/8", "1/8"...
}

func (r *rendering) run() (image.Image, error) {
	var head [16]byte
	n, _ := io.ReadFull(r.f, head[:])
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var m image.Image
	var err error
	orientation := 1
	switch kind(head[:n]) {
	case "jpeg":
		m, orientation, err = r.jpeg()
	case "png":
		m, err = r.png()
	case "gif":
		m, err = r.whole(func(rd io.Reader) (image.Image, error) { return gif.Decode(rd) },
			func(rd io.Reader) (image.Config, error) { return gif.DecodeConfig(rd) }, false)
	case "webp":
		m, err = r.whole(webp.Decode, webp.DecodeConfig, false)
	default:
		return nil, errNoPreview
	}
	if err != nil {
		return nil, err
	}
	if r.spec.square {
		m = cropSquare(m)
	}
	return orient(m, orientation), nil
}

// jpeg uses the EXIF thumbnail when it is large enough, and otherwise
// decodes at the smallest scale large enough.
func (r *rendering) jpeg() (image.Image, int, error) {
	info, err := probeJPEG(r.f)
	if err != nil {
		return nil, 0, err
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	release, err := r.draw(jpegBytes(info) + outputBytes(r.spec))
	if err != nil {
		return nil, 0, err
	}
	defer release()
	chosen := 8
	scale := func(w, h int, progressive bool) int {
		for _, n := range []int{1, 2, 4} {
			if r.spec.enough(w*n/8, h*n/8) {
				chosen = n
				return n
			}
		}
		chosen = 8
		return 8
	}
	if len(info.thumb) > 0 {
		if t, err := probeJPEG(bytes.NewReader(info.thumb)); err == nil && r.spec.enough(t.width, t.height) {
			s := &shrink{fit: r.spec.fit()}
			err := decodeJPEG(bytes.NewReader(info.thumb), scale, s)
			if m, ok := s.result(); err == nil && ok {
				r.used = fmt.Sprintf("exif %d/8", chosen)
				return m, info.orientation, nil
			}
		}
	}
	s := &shrink{fit: r.spec.fit()}
	if err := decodeJPEG(r.f, scale, s); err != nil {
		return nil, 0, err
	}
	m, ok := s.result()
	if !ok {
		return nil, 0, jpegError("rows missing")
	}
	r.used = fmt.Sprintf("%d/8", chosen)
	return m, info.orientation, nil
}

func (r *rendering) png() (image.Image, error) {
	c, err := png.DecodeConfig(r.f)
	if err != nil {
		return nil, err
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	release, err := r.draw(pngRowBytes(c.Width) + outputBytes(r.spec))
	if err != nil {
		return nil, err
	}
	s := &shrink{fit: r.spec.fit()}
	err = decodePNG(r.f, s)
	release()
	if errors.Is(err, errInterlaced) {
		if _, err := r.f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return r.whole(png.Decode, png.DecodeConfig, true)
	}
	if err != nil {
		return nil, err
	}
	m, ok := s.result()
	if !ok {
		return nil, errors.New("PNG: rows missing")
	}
	r.used = "png rows"
	return m, nil
}

// whole decodes a picture whole, with what that takes drawn from the
// memory budget first (a picture too large for the whole budget has no
// preview), and shrinks it.
func (r *rendering) whole(decode func(io.Reader) (image.Image, error), config func(io.Reader) (image.Config, error), interlaced bool) (image.Image, error) {
	c, err := config(r.f)
	if err != nil {
		return nil, err
	}
	if c.Width <= 0 || c.Height <= 0 || c.Width > 1<<16 || c.Height > 1<<16 {
		return nil, fmt.Errorf("%w: a %d×%d picture", errNoPreview, c.Width, c.Height)
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	release, err := r.draw(wholeBytes(c, interlaced) + outputBytes(r.spec))
	if errors.Is(err, budget.ErrTooLarge) {
		return nil, fmt.Errorf("%w: a %d×%d picture of this kind is too large to decode whole here (%v)", errNoPreview, c.Width, c.Height, err)
	}
	if err != nil {
		return nil, err
	}
	defer release()
	src, err := decode(r.f)
	if err != nil {
		return nil, err
	}
	b := src.Bounds()
	s := &shrink{fit: r.spec.fit()}
	s.begin(8*b.Dx(), 8*b.Dy(), 4, false)
	line := image.NewRGBA(image.Rect(0, 0, b.Dx(), 1))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		draw.Draw(line, line.Bounds(), src, image.Pt(b.Min.X, y), draw.Src)
		s.row(line.Pix)
	}
	m, _ := s.result()
	r.used = "whole"
	return m, nil
}
