package front_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/front/routetest"
)

// A pattern on the mux that the registry does not hold is found by the
// walk's probe, and the declared ones are not.
func TestWalkFindsAnUndeclaredPattern(t *testing.T) {
	rs := front.NewRoutes(nil)
	rs.Public("GET /ca.crt", func(http.ResponseWriter, *http.Request) {})
	rs.Link("GET /s/{token}", func(http.ResponseWriter, *http.Request) {})
	if p := routetest.Escapes(rs); len(p) != 0 {
		t.Errorf("declared routes reported: %v", p)
	}
	rs.HandleUndeclared("/admin/", func(http.ResponseWriter, *http.Request) {})
	p := routetest.Escapes(rs)
	if len(p) != 1 || !strings.Contains(p[0], `"/admin/", a pattern with no declared access`) {
		t.Errorf("an undeclared pattern: %v", p)
	}
}

// Routes needs a door for any access but Public and Link.
func TestRoutesWithoutADoor(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a user's route was taken with no door to check it")
		}
	}()
	front.NewRoutes(nil).Handle(auth.User, "GET /x", func(http.ResponseWriter, *http.Request, auth.Caller) {})
}

// A changing request from another site's page is refused before any
// route; one from the box's own page, or with no browser's headers, is
// not.
func TestCrossSiteRefused(t *testing.T) {
	rs := front.NewRoutes(nil)
	rs.Public("POST /x", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })
	for _, tc := range []struct {
		hdr  []string
		want int
	}{
		{nil, 204},
		{[]string{"Sec-Fetch-Site", "same-origin"}, 204},
		{[]string{"Sec-Fetch-Site", "cross-site"}, 403},
		{[]string{"Sec-Fetch-Site", "same-site"}, 403},
		{[]string{"Origin", "https://evil.example"}, 403},
		{[]string{"Origin", "https://box.example"}, 204},
	} {
		r, _ := http.NewRequest("POST", "https://box.example/x", nil)
		for i := 0; i+1 < len(tc.hdr); i += 2 {
			r.Header.Set(tc.hdr[i], tc.hdr[i+1])
		}
		w := httptest.NewRecorder()
		rs.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("POST with %v = %d, want %d", tc.hdr, w.Code, tc.want)
		}
	}
}
