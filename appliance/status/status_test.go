package status_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/admin/admintest"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/status"
	"github.com/bonesync/bonesync/appliance/users"
)

// newHandler is the admin routes with the users u and admin, a report as
// a board measures it, and sys.
func newHandler(t *testing.T, sys admin.System) (*status.Handler, *report.Report) {
	t.Helper()
	h, rep, _ := newHandlerDB(t, sys)
	return h, rep
}

// newHandlerDB is newHandler with the user database it made.
func newHandlerDB(t *testing.T, sys admin.System) (*status.Handler, *report.Report, *users.DB) {
	t.Helper()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	for n, pw := range map[string]string{"u": "password", users.Admin: "adminpass"} {
		if err := db.Add(n, pw); err != nil {
			t.Fatal(err)
		}
	}
	phase := func(p50, p95 float64) *measure.Phase {
		return &measure.Phase{Latency: measure.Stats{N: 10, P50: p50, P95: p95, P99: p95, Max: p95}, Rate: 20, CPUSamples: []float64{14.5}}
	}
	rep := &report.Report{
		Machine: measure.Machine{CPU: "ARMv7 Processor rev 2 (v7l)", Cores: 1, Arch: "arm7", Kernel: "Linux 5.10.168-ti-r72",
			Go: "go1.26.8", Time: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), LoadGen: "by a separate process", Hostname: "bonesync"},
		Policy: report.Policy{TargetMs: 500, Concurrency: 8, BudgetS: 600, PostQuantum: "auto", MinStrength: keys.MinStrength},
		TLS: []*measure.Result{
			{Proto: measure.TLS, Key: keys.ECDSAP256, Kex: measure.X25519, Strength: 128, Full1: phase(38.2, 41.7), FullN: phase(201.4, 240.4)},
		},
		SSH: []*measure.Result{
			{Proto: measure.SSH, Key: keys.Ed25519, Kex: measure.Curve25519SHA, Strength: 128, Full1: phase(55.3, 60.2), FullN: phase(280, 310)},
		},
		Choice: choose.Choice{
			TLS: choose.Decision{Key: string(keys.ECDSAP256), MetTarget: true, Reasons: []string{"it meets the target"},
				Verdicts: map[string]string{string(keys.ECDSAP256): choose.Chosen}},
			SSH: choose.Decision{Key: string(keys.Ed25519), MetTarget: true, Reasons: []string{"it meets the target"},
				Verdicts: map[string]string{string(keys.Ed25519): choose.Chosen}},
			Target: "500ms", Concurrency: 8,
		},
		CAFingerprint: "AA:BB",
		URLs:          []string{"https://bonesync.local/"},
		DurationS:     100,
	}
	log := slog.New(slog.DiscardHandler)
	return &status.Handler{Door: auth.New(db, log), System: sys, Report: func() *report.Report { return rep }, Log: log}, rep, db
}

func serve(h *status.Handler, method, path, user, pw, body string, hdr ...string) *httptest.ResponseRecorder {
	mux := front.NewRoutes(h.Door.(*auth.Door))
	h.Routes(mux)
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.TLS = &tls.ConnectionState{}
	if user != "" {
		r.SetBasicAuth(user, pw)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

// /status.json needs a login and reports the version; /admin/update is
// the admin's, and off a card it says so instead of pretending.
func TestSystemRoutes(t *testing.T) {
	rebooted := ""
	h, _ := newHandler(t, &admintest.System{Ver: "9.8.7", StartedAt: time.Now(), RebootTo: func(why string) { rebooted = why }})
	if w := serve(h, "GET", "/status.json", "", "", ""); w.Code != 401 {
		t.Errorf("GET /status.json without a login = %d", w.Code)
	}
	w := serve(h, "GET", "/status.json", "u", "password", "")
	var st struct {
		Version string
		System  any
	}
	if err := json.Unmarshal(w.Body.Bytes(), &st); w.Code != 200 || err != nil || st.Version != "9.8.7" || st.System != nil {
		t.Errorf("GET /status.json = %d %s", w.Code, w.Body)
	}
	if w := serve(h, "PUT", "/admin/update", "u", "password", "x"); w.Code != 403 {
		t.Errorf("an update by a user who is not admin = %d", w.Code)
	}
	if w := serve(h, "PUT", "/admin/update", users.Admin, "adminpass", "x"); w.Code != 501 || !strings.Contains(w.Body.String(), "not booted from a bonesync card") {
		t.Errorf("an update off a card = %d %s", w.Code, w.Body)
	}
	if w := serve(h, "POST", "/admin/update", users.Admin, "adminpass", "x"); w.Code != 405 {
		t.Errorf("POST /admin/update = %d; only PUT is taken", w.Code)
	}
	if w := serve(h, "PUT", "/admin/update", users.Admin, "adminpass", "x", "Origin", "https://evil.example"); w.Code != 403 {
		t.Errorf("a cross-site PUT = %d", w.Code)
	}
	if rebooted != "" {
		t.Errorf("a refused update asked for a reboot (%s)", rebooted)
	}
}

// An admin's app password (made for a phone or a sync client) reaches the
// files, not the firmware: /admin/update asks for the account's password
// (it let an app password through before).
func TestUpdateRefusesAppPasswords(t *testing.T) {
	h, _, db := newHandlerDB(t, &admintest.System{Ver: "9.8.7", StartedAt: time.Now()})
	app, _, err := db.NewAppPassword(users.Admin, "phone")
	if err != nil {
		t.Fatal(err)
	}
	if w := serve(h, "GET", "/status.json", users.Admin, app, ""); w.Code != 200 {
		t.Errorf("the app password does not work at all (%d): the test proves nothing", w.Code)
	}
	if w := serve(h, "PUT", "/admin/update", users.Admin, app, "x"); w.Code != 401 {
		t.Errorf("an update with an app password = %d %s, want 401", w.Code, w.Body)
	}
	if w := serve(h, "PUT", "/admin/update", users.Admin, "adminpass", "x"); w.Code != 501 {
		t.Errorf("an update with the account's password = %d, want it past the login (501 off a card)", w.Code)
	}
}

// The status page and /report.json show the benchmark, not the software
// versions, to anyone; a logged-in user gets the full report.
func TestReportHidesVersions(t *testing.T) {
	h, rep := newHandler(t, &admintest.System{})
	w := serve(h, "GET", "/", "", "", "")
	if ct := w.Header().Get("Content-Type"); w.Code != 200 || ct != "text/html; charset=utf-8" {
		t.Errorf("GET / = %d %q", w.Code, ct)
	}
	for _, want := range []string{"<svg", string(report.FingerprintHTML(rep.CAFingerprint)), rep.Choice.TLS.Key} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("GET / does not contain %q", want)
		}
	}
	// Without a login: the benchmark and the CA's fingerprint, not the
	// versions, the CPU's model, the host's name or the URLs (the page
	// names the box as the browser reached it instead).
	for _, p := range []string{"/", "/report.json"} {
		body := serve(h, "GET", p, "", "", "").Body.String()
		for _, bad := range []string{"5.10.168", "go1.26.8", "ARMv7", `"hostname"`, "bonesync.local"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s without login shows %q:\n%.400s", p, bad, body)
			}
		}
		if !strings.Contains(body, "AA:BB") || !strings.Contains(body, "ecdsa-p256") {
			t.Errorf("GET %s without login lacks the benchmark or the fingerprint", p)
		}
	}
	if body := serve(h, "GET", "/", "", "", "").Body.String(); !strings.Contains(body, "https://example.com") {
		t.Errorf("the page does not name the box as the browser reached it (example.com)")
	}
	if body := serve(h, "GET", "/report.json", "u", "password", "").Body.String(); !strings.Contains(body, "5.10.168") || !strings.Contains(body, "go1.26.8") || !strings.Contains(body, "ARMv7") {
		t.Errorf("GET /report.json logged in lacks the machine details:\n%.400s", body)
	}
	if w := serve(h, "GET", "/report.json", "u", "wrong", ""); w.Code != 401 {
		t.Errorf("GET /report.json with a wrong password = %d, want 401", w.Code)
	}
}

// The status page names the welcome page (the CA and the steps) where the
// plain-HTTP listener is, at the name the browser used.
func TestPageNamesThePlainPort(t *testing.T) {
	h, _ := newHandler(t, &admintest.System{})
	for port, want := range map[int]string{8080: "http://bonesync.local:8080/", 80: "http://bonesync.local/"} {
		h.PlainPort = port
		mux := front.NewRoutes(h.Door.(*auth.Door))
		h.Routes(mux)
		r := httptest.NewRequest("GET", "https://bonesync.local:8443/", nil)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if !strings.Contains(w.Body.String(), `href="`+want+`"`) {
			t.Errorf("with the plain-HTTP port %d the page does not name %s", port, want)
		}
	}
}

// The report is read per request: a new one shows at once.
func TestReportReadPerRequest(t *testing.T) {
	h, rep := newHandler(t, &admintest.System{})
	for _, fp := range []string{"AA:BB", "CC:DD"} {
		rep.CAFingerprint = fp
		w := serve(h, "GET", "/report.json", "", "", "")
		r, err := report.Parse(w.Body.Bytes())
		if err != nil {
			t.Fatalf("report.Parse(GET /report.json) error = %v, want nil", err)
		}
		if r.CAFingerprint != fp || !bytes.Contains(w.Body.Bytes(), []byte(fp)) {
			t.Errorf("GET /report.json fingerprint = %s, want %s", r.CAFingerprint, fp)
		}
	}
}

// /status.json carries each disk's health, with the admin's worry when it
// reports errors, and not the log's own bookkeeping.
func TestStatusHasTheDisksHealth(t *testing.T) {
	disks := []health.Report{
		{Disk: "mmcblk0", Written: 5 << 20, Days: []health.Day{{Date: "2026-12-01", Written: 5 << 20}}},
		{Disk: "sda", IOErrors: 2, LastIOError: "I/O error, dev sda, sector 8"},
	}
	h, _ := newHandler(t, &admintest.System{StartedAt: time.Now(), Reports: disks})
	if w := serve(h, "GET", "/status.json", "u", "password", ""); strings.Contains(w.Body.String(), "disks") {
		t.Errorf("a user who is not admin sees the disks: %s", w.Body)
	}
	w := serve(h, "GET", "/status.json", users.Admin, "adminpass", "")
	var st struct {
		Disks []map[string]any `json:"disks"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || len(st.Disks) != 2 {
		t.Fatalf("GET /status.json = %d %s", w.Code, w.Body)
	}
	if st.Disks[0]["written_bytes"] != float64(5<<20) || st.Disks[0]["problem"] != nil {
		t.Errorf("the card: %v", st.Disks[0])
	}
	if p, _ := st.Disks[1]["problem"].(string); !strings.Contains(p, "2 I/O errors (the last: I/O error, dev sda, sector 8)") {
		t.Errorf("the USB disk: %v", st.Disks[1])
	}
	if strings.Contains(w.Body.String(), "boot_id") {
		t.Errorf("the log's bookkeeping in /status.json: %s", w.Body)
	}
}

// From the web, an update needs the session and the password typed within
// the last 5 minutes: a browser left logged in is not enough (it was).
func TestUpdateFromTheWebNeedsThePasswordAgain(t *testing.T) {
	h, _ := newHandler(t, &admintest.System{Ver: "9.8.7", StartedAt: time.Now()})
	door := h.Door.(*auth.Door)
	now := time.Now()
	door.Sessions().Now = func() time.Time { return now }
	rec := httptest.NewRecorder()
	sess := door.Sessions().Start(rec, users.Admin)
	cookie := rec.Result().Cookies()[0]
	send := func(method, path, body string, hdr ...string) *httptest.ResponseRecorder {
		mux := front.NewRoutes(h.Door.(*auth.Door))
		h.Routes(mux)
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.TLS = &tls.ConnectionState{}
		r.AddCookie(cookie)
		r.Header.Set("X-CSRF-Token", sess.CSRF)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}
	if w := send("PUT", "/admin/update", "x"); w.Code != 501 {
		t.Errorf("just logged in: an update = %d %s, want past the login (501 off a card)", w.Code, w.Body)
	}
	now = now.Add(auth.ConfirmFor + time.Second)
	w := send("PUT", "/admin/update", "x")
	if w.Code != 403 || w.Header().Get("X-Bonesync-Confirm") != "password" {
		t.Errorf("logged in 5 minutes ago: an update = %d %s, want 403 asking for the password", w.Code, w.Body)
	}
	form := "application/x-www-form-urlencoded"
	if w := send("POST", "/admin/confirm", "password=wrong", "Content-Type", form); w.Code != 403 {
		t.Errorf("a wrong password confirmed: %d", w.Code)
	}
	if w := send("PUT", "/admin/update", "x"); w.Code != 403 {
		t.Errorf("after a wrong password an update = %d", w.Code)
	}
	if w := send("POST", "/admin/confirm", "password=adminpass", "Content-Type", form, "X-CSRF-Token", "forged"); w.Code != 403 {
		t.Errorf("a confirmation without the page's token = %d", w.Code)
	}
	if w := send("POST", "/admin/confirm", "password=adminpass", "Content-Type", form); w.Code != 204 {
		t.Errorf("the right password = %d %s", w.Code, w.Body)
	}
	if w := send("PUT", "/admin/update", "x"); w.Code != 501 {
		t.Errorf("password typed again: an update = %d %s", w.Code, w.Body)
	}
}

// An account with two-factor login applies updates from the admin page
// only: its password over Basic (curl -T) lacks the code, and is
// answered as a wrong one (an answer of its own would tell who has
// two-factor login).
func TestUpdateWithTwoFactorNeedsThePage(t *testing.T) {
	h, _, db := newHandlerDB(t, &admintest.System{Ver: "9.8.7", StartedAt: time.Now()})
	key, _ := db.NewTOTP(users.Admin)
	code, _ := totp.GenerateCode(key.Secret(), time.Now())
	if _, err := db.EnableTOTP(users.Admin, key.Secret(), code); err != nil {
		t.Fatal(err)
	}
	wrong := serve(h, "PUT", "/admin/update", users.Admin, "not-the-password", "x")
	w := serve(h, "PUT", "/admin/update", users.Admin, "adminpass", "x")
	if w.Code != 401 || w.Code != wrong.Code || w.Body.String() != wrong.Body.String() || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("an update with the password alone under two-factor login = %d %s, with a wrong one %d %s; want both 401 and alike",
			w.Code, w.Body, wrong.Code, wrong.Body)
	}
}

// A probe shows the admin page's pass at /probe/allow and is told what
// its address may do; no pass, or a made-up one, is refused.
func TestProbeAllow(t *testing.T) {
	h, _ := newHandler(t, &admintest.System{})
	probes := guard.NewProbes()
	h.Probes = probes
	if w := serve(h, "POST", status.ProbePath, "", "", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("no pass = %d, want 401", w.Code)
	}
	if w := serve(h, "POST", status.ProbePath, "", "", "", "Authorization", "Bearer MADEUP"); w.Code != http.StatusForbidden {
		t.Errorf("a made-up pass = %d, want 403", w.Code)
	}
	pass, _, err := probes.Pass()
	if err != nil {
		t.Fatal(err)
	}
	w := serve(h, "POST", status.ProbePath, "", "", "", "Authorization", "Bearer "+pass)
	var a status.ProbeAllowance
	if err := json.Unmarshal(w.Body.Bytes(), &a); w.Code != http.StatusOK || err != nil || a.Connections <= 0 || a.Address == "" {
		t.Errorf("the pass = %d %s (%v)", w.Code, w.Body, err)
	}
}
