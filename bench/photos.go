package main

// The photo figures: what making a preview of a 12-megapixel JPEG costs
// bonesync (time, server CPU, peak resident memory), for the Nextcloud
// apps' grid (256 pixels) from a photo that carries an EXIF thumbnail and
// from one that does not, and for the iOS app's large preview (1024
// pixels), beside libjpeg-turbo's djpeg decoding the same photo at the
// same reduced scale: the C library that GD and ImageMagick, which make
// Nextcloud's previews, decode with.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

const (
	photoW, photoH   = 4000, 3000 // 12 megapixels, 4:3 as phones take them
	thumbW, thumbH   = 512, 384   // the EXIF thumbnail
	photoRuns        = 5          // measured previews per case, after one unmeasured
	photoUser        = "bench-photos"
	photoMarker      = 48 // the thumbnail's top-left square of magenta, in its pixels
	photoGrainAmount = 12
)

// photoCase is one kind of preview request.
type photoCase struct {
	Name  string
	Thumb bool   // the photo carries the EXIF thumbnail
	Side  int    // the request's x and y (a=1: the long side)
	Scale string // djpeg's -scale for the same decode ("": none applies)
}

var photoCases = []photoCase{
	{"grid (256 px), the photo with an EXIF thumbnail", true, 256, ""},
	{"grid (256 px), the photo without one", false, 256, "1/8"},
	{"iOS large preview (1024 px)", false, 1024, "1/2"},
}

// photoFigures are one case's medians, and its peak.
type photoFigures struct {
	Wall, CPU   time.Duration
	RSSBeforeKB int64 // the server's resident set before the first
	HWMKB       int64 // its largest peak over the runs
	Bytes       int   // the preview's size
	// djpeg at the same scale, to /dev/null: median CPU and wall, its
	// largest peak resident set.
	PeerWall, PeerCPU time.Duration
	PeerHWMKB         int64
}

// photoResult is the photo section.
type photoResult struct {
	PhotoBytes, ThumbPhotoBytes int
	Djpeg                       string // djpeg's version, "" if not installed
	Cases                       []photoFigures
	Err                         string
}

// photoFiles are the two photos: the same picture without and with a
// thumbnail. The thumbnail has a magenta square in its top-left corner
// that the photo lacks, so a preview shows which one it was made from.
func photoFiles() (plain, withThumb []byte, err error) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, previewtest.Photo(photoW, photoH, photoGrainAmount), &jpeg.Options{Quality: 90}); err != nil {
		return nil, nil, err
	}
	th := previewtest.Photo(thumbW, thumbH, photoGrainAmount)
	draw.Draw(th, image.Rect(0, 0, photoMarker, photoMarker), image.NewUniform(color.RGBA{255, 0, 255, 255}), image.Point{}, draw.Src)
	var t bytes.Buffer
	if err := jpeg.Encode(&t, th, &jpeg.Options{Quality: 80}); err != nil {
		return nil, nil, err
	}
	const taken = "2026:06:07 08:09:10"
	return previewtest.WithExif(b.Bytes(), 1, taken, "+02:00", nil), previewtest.WithExif(b.Bytes(), 1, taken, "+02:00", t.Bytes()), nil
}

// checkPreview decodes a preview and checks its size (the long side is
// side) and its source (the thumbnail's magenta corner, or none).
func checkPreview(body []byte, side int, fromThumb bool) error {
	m, err := jpeg.Decode(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the preview is not a JPEG: %w", err)
	}
	b := m.Bounds()
	if max(b.Dx(), b.Dy()) != side {
		return fmt.Errorf("the preview is %d×%d, want a long side of %d", b.Dx(), b.Dy(), side)
	}
	r, g, bl, _ := m.At(2, 2).RGBA()
	magenta := r>>8 > 200 && g>>8 < 80 && bl>>8 > 200
	if magenta != fromThumb {
		return fmt.Errorf("the preview's corner is %d,%d,%d: made from the EXIF thumbnail = %v, want %v", r>>8, g>>8, bl>>8, magenta, fromThumb)
	}
	return nil
}

func photosBlock(ctx context.Context, o *options, dir string) photoResult {
	var res photoResult
	if err := photosRun(ctx, o, dir, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

func photosRun(ctx context.Context, o *options, dir string, res *photoResult) error {
	plain, thumbed, err := photoFiles()
	if err != nil {
		return err
	}
	res.PhotoBytes, res.ThumbPhotoBytes = len(plain), len(thumbed)
	st := filepath.Join(dir, "state")
	add := exec.CommandContext(ctx, o.bonesync, "user", "-state", st, "add", photoUser)
	add.Stdin = strings.NewReader(syncPass + "\n")
	if out, err := add.CombinedOutput(); err != nil && !strings.Contains(string(out), "exists") {
		return fmt.Errorf("user add: %v %s", err, out)
	}
	bs, _, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return err
	}
	defer bs.stop()
	base := "https://" + bs.addr
	c := davClient()
	do := func(method, path string, body []byte) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
		req.SetBasicAuth(photoUser, syncPass)
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s %s = %s: %.200s", method, path, resp.Status, b)
		}
		return b, err
	}
	do("MKCOL", "/dav/photos/", nil) // there already on a second run
	local := filepath.Join(o.work, "photos")
	os.MkdirAll(local, 0o755)
	for _, f := range []struct {
		name string
		data []byte
	}{{"photo.jpg", plain}, {"photo-thumb.jpg", thumbed}} {
		if err := os.WriteFile(filepath.Join(local, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	o.logf("photos: a %d×%d JPEG, %d kB (%d kB with its %d×%d EXIF thumbnail)", photoW, photoH, len(plain)/1000, len(thumbed)/1000, thumbW, thumbH)
	res.Djpeg = djpegVersion()
	pid := strconv.Itoa(bs.pid())
	for ci, pc := range photoCases {
		data := plain
		if pc.Thumb {
			data = thumbed
		}
		// A copy per run: each is a file of its own, its preview made anew.
		for i := 0; i <= photoRuns; i++ {
			if _, err := do("PUT", fmt.Sprintf("/dav/photos/case%d-%d.jpg", ci, i), data); err != nil {
				return err
			}
		}
		var f photoFigures
		var walls, cpus []time.Duration
		for i := 0; i <= photoRuns; i++ {
			settle(bs)
			os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0) // reset VmHWM
			rss, _ := statusKB("/proc/"+pid+"/status", "VmRSS")
			cpu0, _ := treeCPU(bs.pid())
			t0 := time.Now()
			q := url.Values{"file": {fmt.Sprintf("/photos/case%d-%d.jpg", ci, i)}, "x": {strconv.Itoa(pc.Side)}, "y": {strconv.Itoa(pc.Side)}, "a": {"1"}}
			body, err := do("GET", "/index.php/core/preview.png?"+q.Encode(), nil)
			if err != nil {
				return err
			}
			wall := time.Since(t0)
			settle(bs)
			cpu1, _ := treeCPU(bs.pid())
			hwm, _ := statusKB("/proc/"+pid+"/status", "VmHWM")
			if err := checkPreview(body, pc.Side, pc.Thumb); err != nil {
				return fmt.Errorf("%s: %w", pc.Name, err)
			}
			if i == 0 {
				continue // the first pays for lazy set-up
			}
			if f.RSSBeforeKB == 0 {
				f.RSSBeforeKB = rss
			}
			f.HWMKB = max(f.HWMKB, hwm)
			f.Bytes = len(body)
			walls, cpus = append(walls, wall), append(cpus, cpu1-cpu0)
		}
		f.Wall, f.CPU = measure.Percentile(walls, 50), measure.Percentile(cpus, 50)
		o.logf("photos: %s: %.0f ms, CPU %.0f ms, peak RSS %d kB (%d kB before)", pc.Name, ms(f.Wall), ms(f.CPU), f.HWMKB, f.RSSBeforeKB)
		if pc.Scale != "" && res.Djpeg != "" {
			if f.PeerWall, f.PeerCPU, f.PeerHWMKB, err = djpegFigures(ctx, filepath.Join(local, "photo.jpg"), pc.Scale); err != nil {
				return fmt.Errorf("djpeg: %w", err)
			}
			o.logf("photos: djpeg -scale %s: %.0f ms, CPU %.0f ms, peak RSS %d kB", pc.Scale, ms(f.PeerWall), ms(f.PeerCPU), f.PeerHWMKB)
		}
		res.Cases = append(res.Cases, f)
	}
	return nil
}

// djpegVersion is the first line djpeg prints of its version, "" if it is
// not installed.
func djpegVersion() string {
	if _, err := exec.LookPath("djpeg"); err != nil {
		return ""
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return ""
	}
	out, _ := exec.Command("djpeg", "-version").CombinedOutput()
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return v
}

// djpegFigures decodes file at scale with djpeg, to /dev/null, photoRuns
// times after one unmeasured: median wall time and CPU, largest peak RSS.
// The peak comes from GNU time, which forks djpeg: the resource usage of a
// process Go starts counts Go's own resident set, shared until the exec.
func djpegFigures(ctx context.Context, file, scale string) (wall, cpu time.Duration, hwmKB int64, err error) {
	var walls, cpus []time.Duration
	for i := 0; i <= photoRuns; i++ {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "/usr/bin/time", "-f", "maxrss %M", "djpeg", "-scale", scale, "-outfile", "/dev/null", file)
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, 0, 0, fmt.Errorf("%v %s", err, stderr.Bytes())
		}
		w := time.Since(t0)
		var kb int64
		if _, err := fmt.Sscanf(lastLine(stderr.String()), "maxrss %d", &kb); err != nil {
			return 0, 0, 0, fmt.Errorf("GNU time said %q", stderr.String())
		}
		if i == 0 {
			continue
		}
		walls = append(walls, w)
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		hwmKB = max(hwmKB, kb)
	}
	return measure.Percentile(walls, 50), measure.Percentile(cpus, 50), hwmKB, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// markdown writes the photo section of the report.
func (p *photoResult) markdown(w io.Writer) {
	fmt.Fprintf(w, "\n## Photos: previews of a 12-megapixel JPEG\n\n")
	if p.Err != "" {
		fmt.Fprintf(w, "Failed: %s\n\n", p.Err)
	}
	fmt.Fprintf(w, "A %d×%d JPEG (4:2:0, quality 90, %d kB; %d kB with a %d×%d EXIF thumbnail), its preview asked as the apps ask "+
		"(`/index.php/core/preview.png?file=…&x=N&y=N&a=1`, over HTTPS), a new copy each time so that each is made, not read from the cache; "+
		"medians of %d after one unmeasured. Peak RSS is the server's VmHWM, reset before each preview (the resident set before it in brackets). "+
		"The peer is %s decoding the same photo at the same reduced scale to /dev/null: the decode alone, which is most of the work; "+
		"bonesync's figure also holds the TLS connection, the shrink, the JPEG encode and the cache write.\n\n",
		photoW, photoH, p.PhotoBytes/1000, p.ThumbPhotoBytes/1000, thumbW, thumbH, photoRuns, orDash(p.Djpeg))
	fmt.Fprintf(w, "| preview | time | server CPU | peak RSS | djpeg time, CPU, peak RSS | CPU ratio |\n|---|---:|---:|---:|---:|---:|\n")
	for i, f := range p.Cases {
		c := photoCases[i]
		peer, r := "–", ""
		if f.PeerCPU > 0 {
			peer = fmt.Sprintf("%.0f ms, %.0f ms, %.1f MB (-scale %s)", ms(f.PeerWall), ms(f.PeerCPU), mib(f.PeerHWMKB), c.Scale)
			r = ratio(ms(f.CPU), ms(f.PeerCPU))
		}
		fmt.Fprintf(w, "| %s | %.0f ms | %.0f ms | %.1f MB (%.1f) | %s | %s |\n", c.Name, ms(f.Wall), ms(f.CPU), mib(f.HWMKB), mib(f.RSSBeforeKB), peer, r)
	}
	fmt.Fprintln(w)
}
