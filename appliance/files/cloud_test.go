package files

import (
	"bytes"
	"encoding/json"
	"image/png"
	"strings"
	"testing"
)

func TestCloudUserAndAvatar(t *testing.T) {
	h := newDAV(t, 0)
	var got struct {
		OCS struct {
			Meta struct{ Statuscode int }
			Data map[string]any
		}
	}
	body := must(t, h, 200, davRequest("GET", "/ocs/v2.php/cloud/users/u", "", "Accept", "application/json"))
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.OCS.Meta.Statuscode != 200 || got.OCS.Data["id"] != "u" {
		t.Errorf("cloud/users/u = %s", body)
	}
	for _, k := range []string{"display-name", "quota", "backendCapabilities", "groups", "language"} {
		if _, ok := got.OCS.Data[k]; !ok {
			t.Errorf("cloud/users/u lacks %s", k)
		}
	}
	must(t, h, 404, davRequest("GET", "/ocs/v2.php/cloud/users/someone", "", "Accept", "application/json"))

	w := muxed(h, davRequest("GET", "/index.php/avatar/u/128", ""))
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("avatar = %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if m, err := png.Decode(bytes.NewReader(w.Body.Bytes())); err != nil || m.Bounds().Dx() != 128 {
		t.Errorf("avatar: %v", err)
	}
	if w := muxed(h, davRequest("GET", "/index.php/avatar/u/128", "", "If-None-Match", w.Header().Get("ETag"))); w.Code != 304 {
		t.Errorf("avatar with its ETag = %d, want 304", w.Code)
	}
}

func TestUnifiedSearch(t *testing.T) {
	h := newDAV(t, 0)
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/Holiday", ""))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/Holiday/beach.jpg", "x", "X-OC-Mtime", "1700000000"))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/holiday-plan.txt", "x", "X-OC-Mtime", "1700000100"))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/other.txt", "x"))
	if body := must(t, h, 200, davRequest("GET", "/ocs/v2.php/search/providers?format=json", "")); !strings.Contains(body, `"id":"files"`) {
		t.Errorf("providers = %s", body)
	}
	body := must(t, h, 200, davRequest("GET", "/ocs/v2.php/search/providers/files/search?term=HOLIDAY&limit=5&format=json", ""))
	var got struct {
		OCS struct {
			Data struct {
				Entries []struct {
					Title      string
					Attributes map[string]string
				}
				Cursor int
			}
		}
	}
	json.Unmarshal([]byte(body), &got)
	e := got.OCS.Data.Entries
	if len(e) != 2 || e[0].Title != "Holiday" || e[1].Title != "holiday-plan.txt" || e[1].Attributes["path"] != "/holiday-plan.txt" || got.OCS.Data.Cursor != 2 {
		t.Errorf("search for holiday = %s", body)
	}
}
