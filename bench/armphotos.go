package main

// The preview count: ARM instructions one preview of the 12-megapixel
// photo costs the board's build (bench/armcost, `bonesync serve` with
// markers): the grid's with and without an EXIF thumbnail,
// and the iOS app's 1024-pixel one, beside Debian's armhf djpeg
// (libjpeg-turbo, with its NEON code) decoding the same photo at the same
// scale.

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"image"
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
)

const armPreviews = 2 // previews counted per kind

// armPhotos are the preview counts, million instructions per preview: the
// connection that asks for it (a GET of the CA file) taken off.
type armPhotos struct {
	Thumb, Plain float64 // the grid preview, with and without the thumbnail
	Large        float64 // the 1024-pixel preview (decoded at 1/2)
	Djpeg        float64 // djpeg -scale 1/8 of the photo, less a tiny one's run
	DjpegHalf    float64 // djpeg -scale 1/2, the same way
	Conn         float64 // the connection taken off
}

// countPreviews counts bin's previews under qemu-arm, then djpeg's.
func countPreviews(ctx context.Context, o *options, plugin, bin, box string) (armPhotos, error) {
	var res armPhotos
	plain, thumbed, err := photoFiles()
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp(o.work, "arm-photos-")
	if err != nil {
		return res, err
	}
	a, err := startArmServer(ctx, o, plugin, bin, box)
	if err != nil {
		return res, err
	}
	defer a.close()
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives: true, // each request's connection ends before the next marker
	}, Timeout: 10 * time.Minute}
	do := func(method, path string, body []byte) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, method, "https://"+a.tlsAddr+path, bytes.NewReader(body))
		req.SetBasicAuth("bench", "bench-password")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s %s = %s", method, path, resp.Status)
		}
		return b, err
	}
	get := func(name string, side int, fromThumb bool) error {
		q := url.Values{"file": {"/" + name}, "x": {strconv.Itoa(side)}, "y": {strconv.Itoa(side)}, "a": {"1"}}
		b, err := do("GET", "/index.php/core/preview.png?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		return checkPreview(b, side, fromThumb)
	}
	o.logf("arm: previews of a %d×%d JPEG, %d with its EXIF thumbnail and %d without", photoW, photoH, armPreviews, armPreviews)
	if _, err := do("PUT", "/dav/warm.jpg", plain); err != nil {
		return res, err
	}
	for i := range armPreviews {
		if _, err := do("PUT", fmt.Sprintf("/dav/thumb-%d.jpg", i), thumbed); err != nil {
			return res, err
		}
		if _, err := do("PUT", fmt.Sprintf("/dav/plain-%d.jpg", i), plain); err != nil {
			return res, err
		}
	}
	if err := get("warm.jpg", 256, false); err != nil { // lazy set-up
		return res, err
	}
	// The large previews are of the plain copies: a size of their own,
	// made anew, not read from the grid's.
	steps := []func(i int) error{
		func(int) error { _, err := do("GET", "/ca.crt", nil); return err },
		func(i int) error { return get(fmt.Sprintf("thumb-%d.jpg", i), 256, true) },
		func(i int) error { return get(fmt.Sprintf("plain-%d.jpg", i), 256, false) },
		func(i int) error { return get(fmt.Sprintf("plain-%d.jpg", i), 1024, false) },
	}
	if err := a.say("mark 1"); err != nil {
		return res, err
	}
	for s, step := range steps {
		for i := range armPreviews {
			if err := step(i); err != nil {
				return res, err
			}
		}
		if err := a.say("mark " + strconv.Itoa(s+2)); err != nil {
			return res, err
		}
	}
	marks, err := a.marks()
	if err != nil {
		return res, err
	}
	if marks[5] == 0 {
		return res, fmt.Errorf("no marker counts in %s", a.log)
	}
	res.Conn = marks[2] / armPreviews / 1e6
	res.Thumb = marks[3]/armPreviews/1e6 - res.Conn
	res.Plain = marks[4]/armPreviews/1e6 - res.Conn
	res.Large = marks[5]/armPreviews/1e6 - res.Conn

	djpeg := filepath.Join(o.sysroot, "usr/bin/djpeg")
	if _, err := os.Stat(djpeg); err != nil {
		return res, nil // the report says djpeg was not counted
	}
	o.logf("arm: djpeg -scale 1/8 and 1/2 (libjpeg-turbo armhf)")
	photo, tiny := filepath.Join(dir, "photo.jpg"), filepath.Join(dir, "tiny.jpg")
	var t bytes.Buffer
	jpeg.Encode(&t, image.NewGray(image.Rect(0, 0, 8, 8)), nil)
	if err := os.WriteFile(photo, plain, 0o644); err != nil {
		return res, err
	}
	if err := os.WriteFile(tiny, t.Bytes(), 0o644); err != nil {
		return res, err
	}
	for _, s := range []struct {
		scale string
		to    *float64
	}{{"1/8", &res.Djpeg}, {"1/2", &res.DjpegHalf}} {
		name := strings.ReplaceAll(s.scale, "/", "-")
		whole, err := djpegRun(ctx, o, plugin, djpeg, s.scale, photo, filepath.Join(dir, "djpeg-"+name+".log"))
		if err != nil {
			return res, err
		}
		base, err := djpegRun(ctx, o, plugin, djpeg, s.scale, tiny, filepath.Join(dir, "djpeg-tiny-"+name+".log"))
		if err != nil {
			return res, err
		}
		*s.to = (whole - base) / 1e6
	}
	return res, nil
}

// djpegRun is one djpeg -scale scale of file under qemu-arm with the
// plugin, its total instructions.
func djpegRun(ctx context.Context, o *options, plugin, djpeg, scale, file, log string) (float64, error) {
	// The library path, given: djpeg's first library is in /usr/lib, and
	// the loader's failed look in /lib, which the host lacks, drops /lib
	// from its search, where libc is.
	cmd := exec.CommandContext(ctx, "qemu-arm", "-cpu", "cortex-a8", "-L", o.sysroot, "-E", "LD_LIBRARY_PATH=/usr/lib/arm-linux-gnueabihf:/lib/arm-linux-gnueabihf",
		"-plugin", plugin, "-d", "plugin", "-D", log, djpeg, "-scale", scale, "-outfile", "/dev/null", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("djpeg under qemu-arm: %v %s", err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		return 0, err
	}
	m := totalLine.FindAllStringSubmatch(string(b), -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("no total in %s", log)
	}
	return strconv.ParseFloat(m[len(m)-1][1], 64)
}
