package web

import (
	"crypto/tls"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// /status.json needs a login and reports the version; /admin/update is
// the admin's, and off a card it says so instead of pretending.
func TestSystemRoutes(t *testing.T) {
	d := newDAV(t, 0)
	if err := d.Users.Add("admin", "adminpass"); err != nil {
		t.Fatal(err)
	}
	rebooted := ""
	h := HTTPS(newBox(t), d, &System{Version: "9.8.7", Started: time.Now(), Reboot: func(why string) { rebooted = why }})
	do := func(method, path, user, pw, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.TLS = &tls.ConnectionState{}
		if user != "" {
			r.SetBasicAuth(user, pw)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := do("GET", "/status.json", "", "", ""); w.Code != 401 {
		t.Errorf("GET /status.json without a login = %d", w.Code)
	}
	w := do("GET", "/status.json", "u", "password", "")
	var st struct {
		Version string
		System  any
	}
	if err := json.Unmarshal(w.Body.Bytes(), &st); w.Code != 200 || err != nil || st.Version != "9.8.7" || st.System != nil {
		t.Errorf("GET /status.json = %d %s", w.Code, w.Body)
	}
	if w := do("PUT", "/admin/update", "u", "password", "x"); w.Code != 403 {
		t.Errorf("an update by a user who is not admin = %d", w.Code)
	}
	if w := do("PUT", "/admin/update", "admin", "adminpass", "x"); w.Code != 501 || !strings.Contains(w.Body.String(), "not booted from a bonesync card") {
		t.Errorf("an update off a card = %d %s", w.Code, w.Body)
	}
	if w := do("POST", "/admin/update", "admin", "adminpass", "x"); w.Code != 405 {
		t.Errorf("POST /admin/update = %d; only PUT is taken", w.Code)
	}
	r := httptest.NewRequest("PUT", "/admin/update", strings.NewReader("x"))
	r.TLS = &tls.ConnectionState{}
	r.SetBasicAuth("admin", "adminpass")
	r.Header.Set("Origin", "https://evil.example")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 403 {
		t.Errorf("a cross-site PUT = %d", w.Code)
	}
	if rebooted != "" {
		t.Errorf("a refused update asked for a reboot (%s)", rebooted)
	}
}
