package ocs

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func answer(target string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	Write(w, r, map[string]any{"id": uint64(6506282773270625951), "name": "a & b", "list": []string{"x", "y"}, "yes": true, "no": false, "none": nil})
	return w
}

func TestFormats(t *testing.T) {
	// JSON when asked for by parameter or by Accept; v1 says 100, v2 200.
	for _, tc := range []struct {
		target, accept, want string
	}{
		{"/ocs/v1.php/x?format=json", "", `"statuscode":100`},
		{"/ocs/v2.php/x?format=json", "", `"statuscode":200`},
		{"/ocs/v2.php/x", "application/json, text/plain", `"id":6506282773270625951`},
	} {
		w := answer(tc.target, "Accept", tc.accept)
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s: %s %s, want JSON with %s", tc.target, ct, w.Body.String(), tc.want)
		}
	}
	// XML otherwise, numbers exact, lists as <element>s.
	w := answer("/ocs/v2.php/x")
	body := w.Body.String()
	for _, want := range []string{"<statuscode>200</statuscode>", "<id>6506282773270625951</id>", "<name>a &amp; b</name>",
		"<list><element>x</element><element>y</element></list>", "<yes>1</yes>", "<no/>", "<none/>"} {
		if !strings.Contains(body, want) {
			t.Errorf("XML lacks %s:\n%s", want, body)
		}
	}
	// The ETag comes back: 304.
	etag := w.Header().Get("ETag")
	if w := answer("/ocs/v2.php/x", "If-None-Match", etag); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("If-None-Match %s = %d %q, want 304", etag, w.Code, w.Body.String())
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		target     string
		httpStatus int
		want       string
	}{
		{"/ocs/v2.php/x?format=json", 404, `"statuscode":404`},
		{"/ocs/v1.php/x?format=json", 200, `"statuscode":404`},
	} {
		w := httptest.NewRecorder()
		Error(w, httptest.NewRequest("GET", tc.target, nil), http.StatusNotFound, "no such share")
		if w.Code != tc.httpStatus || !strings.Contains(w.Body.String(), tc.want) || !strings.Contains(w.Body.String(), `"status":"failure"`) {
			t.Errorf("%s: %d %s", tc.target, w.Code, w.Body.String())
		}
	}
}
