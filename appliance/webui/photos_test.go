package webui

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

// jpegBytes is a small JPEG, of the colour c.
func jpegBytes(c color.RGBA) []byte {
	m := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for i := 0; i < len(m.Pix); i += 4 {
		m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var b bytes.Buffer
	jpeg.Encode(&b, m, nil)
	return b.Bytes()
}

func (s *site) putFile(user, p string, body []byte, mtime time.Time) {
	s.t.Helper()
	tree, err := s.store.Tree(user)
	if err != nil {
		s.t.Fatal(err)
	}
	defer tree.Close()
	u, err := tree.Create(p, false)
	if err != nil {
		s.t.Fatal(err)
	}
	u.SetModTime(mtime)
	u.Write(body)
	if err := u.Close(); err != nil {
		s.t.Fatal(err)
	}
}

func TestPhotosSearchThumbs(t *testing.T) {
	s := newSite(t)
	cookie, csrf := s.login("ann", "ann-password")
	old, recent := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	s.putFile("ann", "beach.jpg", jpegBytes(color.RGBA{200, 180, 40, 255}), old)
	s.putFile("ann", "garden.jpg", jpegBytes(color.RGBA{20, 160, 40, 255}), recent)
	s.putFile("ann", "notes.txt", []byte("beach list"), recent)

	// The file list shows a thumbnail of each picture, and it is one.
	_, page := s.do("GET", "/files/", cookie, nil)
	m := regexp.MustCompile(`<img class="thumb" src="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(m) != 2 {
		t.Fatalf("thumbnails in the list: %d, want 2:\n%s", len(m), page)
	}
	resp, body := s.do("GET", strings.ReplaceAll(m[0][1], "&amp;", "&"), cookie, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("thumbnail = %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	if c, err := jpeg.DecodeConfig(strings.NewReader(body)); err != nil || c.Width != 128 {
		t.Errorf("thumbnail %v %v, want 128 wide", c, err)
	}
	if resp, _ := s.do("GET", "/thumb/notes.txt", cookie, nil); resp.StatusCode != 404 {
		t.Errorf("thumbnail of a text = %s", resp.Status)
	}
	if resp, _ := s.do("GET", "/thumb/beach.jpg", "", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("thumbnail without a session = %s", resp.Status)
	}

	// The photos page: newest first, a month at a heading; by the EXIF
	// date (a scan's DateTime, when it has no DateTimeOriginal), else the
	// file's.
	s.putFile("ann", "scan.jpg", previewtest.Exif{DateTime: "2019:05:15 12:00:00"}.Into(jpegBytes(color.RGBA{90, 90, 90, 255})), recent)
	_, page = s.do("GET", "/photos", cookie, nil)
	g, b, sc := strings.Index(page, "garden.jpg"), strings.Index(page, "beach.jpg"), strings.Index(page, "scan.jpg")
	if g < 0 || b < 0 || g > b || b > sc || !strings.Contains(page, "July 2026") || !strings.Contains(page, "March 2024") || !strings.Contains(page, "May 2019") || strings.Contains(page, "notes.txt") {
		t.Errorf("photos page (garden.jpg of July 2026, beach.jpg of March 2024, scan.jpg of May 2019 by its DateTime):\n%s", page)
	}

	// Search.
	_, page = s.do("GET", "/search?q=BEACH", cookie, nil)
	if !strings.Contains(page, ">beach.jpg<") || strings.Contains(page, ">notes.txt<") || strings.Contains(page, ">garden.jpg<") { // names, not contents
		t.Errorf("search for beach:\n%s", page)
	}

	// Nextcloud's link to a file by id.
	tree, _ := s.store.Tree("ann")
	in, _ := tree.Info("garden.jpg")
	tree.Close()
	resp, _ = s.do("GET", fmt.Sprintf("/index.php/f/%d", in.FileID), cookie, nil)
	if loc := resp.Header.Get("Location"); loc != "/files/garden.jpg?view" {
		t.Errorf("/index.php/f/ID sent to %q", loc)
	}

	// A notice shows on the pages until dismissed.
	s.common.Notices.Post("ann", "quota", "", "Your files take 93% of your quota", "", "/account")
	_, page = s.do("GET", "/files/", cookie, nil)
	id := regexp.MustCompile(`name="id" value="(\d+)"`).FindStringSubmatch(page)
	if id == nil || !strings.Contains(page, "Your files take 93% of your quota") {
		t.Fatalf("no notice on the page:\n%s", page)
	}
	resp, _ = s.do("POST", "/notices", cookie, url.Values{"csrf": {csrf}, "id": {id[1]}}, "Referer", s.srv.URL+"/photos")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/photos" {
		t.Errorf("dismiss = %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	if _, page = s.do("GET", "/files/", cookie, nil); strings.Contains(page, "93%") {
		t.Error("the dismissed notice is still shown")
	}
	// Without the page's token, nothing is dismissed.
	s.common.Notices.Post("ann", "disk", "", "Disk nearly full", "", "")
	if resp, _ := s.do("POST", "/notices", cookie, url.Values{"id": {"2"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("dismiss without a token = %s", resp.Status)
	}
}

// The login flow v1, as older Nextcloud apps run it in a web view.
func TestLoginFlowV1(t *testing.T) {
	s := newSite(t)
	if resp, _ := s.do("GET", "/index.php/login/flow", "", nil); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=%2Findex.php%2Flogin%2Fflow") {
		t.Fatalf("without a session = %s %s", resp.Status, resp.Header.Get("Location"))
	}
	cookie, csrf := s.login("ann", "ann-password")
	resp, page := s.do("GET", "/index.php/login/flow", cookie, nil, "User-Agent", "Mozilla/5.0 (Android) Nextcloud-android/3.14.0")
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "form-action 'self' nc:") || !strings.Contains(page, "The Nextcloud Android app at the address") {
		t.Fatalf("grant page: %s\n%s", resp.Header.Get("Content-Security-Policy"), page)
	}
	resp, _ = s.do("POST", "/index.php/login/flow", cookie, url.Values{"csrf": {csrf}}, "User-Agent", "Mozilla/5.0 (Android) Nextcloud-android/3.14.0")
	m := regexp.MustCompile(`^nc://login/server:https://[^&]+&user:ann&password:([^&]+)$`).FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || m == nil {
		t.Fatalf("grant = %s %q", resp.Status, resp.Header.Get("Location"))
	}
	pw, _ := url.QueryUnescape(m[1])
	req, _ := http.NewRequest("PROPFIND", s.srv.URL+"/remote.php/dav/files/ann/", nil)
	req.SetBasicAuth("ann", pw)
	req.Header.Set("Depth", "0")
	if r, err := s.c.Do(req); err != nil || r.StatusCode != 207 {
		t.Errorf("the app password over WebDAV: %v %v", r, err)
	}
	if resp, _ := s.do("POST", "/index.php/login/flow", cookie, url.Values{}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("grant without the page's token = %s", resp.Status)
	}
}
