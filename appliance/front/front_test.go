package front

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/report"
)

// box is a CA, as the appliance serves it, and a report (whose fingerprint
// no plain-HTTP answer may hold).
type box struct {
	ca  *pki.CA
	rep *report.Report
}

func (b *box) CACert() *x509.Certificate { return b.ca.Cert }

func newCA(t *testing.T) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("bonesync", nil, time.Now(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func newBox(t *testing.T) *box {
	t.Helper()
	ca := newCA(t)
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
		CAFingerprint: pki.Fingerprint(ca.Cert),
		URLs:          []string{"https://bonesync.local/"},
		DurationS:     100,
	}
	return &box{ca: ca, rep: rep}
}

// leaf issues an ECDSA P-256 server certificate from ca for bonesync and
// 127.0.0.1.
func leaf(t *testing.T, ca *pki.CA) *tls.Certificate {
	return leafOf(t, ca, keys.ECDSAP256)
}

func leafOf(t *testing.T, ca *pki.CA, name keys.Name) *tls.Certificate {
	t.Helper()
	key, err := keys.Generate(name, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(key.Public(), pki.BoxNames("bonesync", nil, pki.Addrs("127.0.0.1")), time.Now(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return (&pki.Server{Name: name, Key: key, Leaf: cert}).TLSCertificate(ca)
}

// server is an HTTPS server on TLSConfig, as the appliance runs it, with the
// certificate and the post-quantum decision switchable.
type server struct {
	addr  string
	ca    *pki.CA
	cert  atomic.Pointer[tls.Certificate]
	other atomic.Pointer[tls.Certificate] // the other family's, if set
	pq    atomic.Bool
}

func (s *server) certs() []tls.Certificate {
	certs := []tls.Certificate{*s.cert.Load()}
	if o := s.other.Load(); o != nil {
		certs = append(certs, *o)
	}
	return certs
}

func serve(t *testing.T, b *box) *server {
	t.Helper()
	s := &server{ca: b.ca}
	s.cert.Store(leaf(t, b.ca))
	cfg := TLSConfig(s.certs, s.pq.Load, time.Now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	srv := &http.Server{Handler: HTTPS(b, "8080", nil, nil), TLSConfig: cfg, ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(tls.NewListener(ln, cfg))
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return s
}

// client is a TLS client configuration that trusts only the box's CA.
func (s *server) client() *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(s.ca.Cert)
	return &tls.Config{RootCAs: roots, ServerName: "bonesync.local"}
}

func (s *server) dial(cfg *tls.Config) (tls.ConnectionState, error) {
	c, err := tls.Dial("tcp", s.addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.ConnectionState(), nil
}

// refused says whether err is the server's alert, not a failure of the
// client's own making.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

func TestHTTP(t *testing.T) {
	b := newBox(t)
	for _, tc := range []struct {
		port, method, host, target string
		code                       int
		location                   string
	}{
		{"8443", "GET", "bonesync.local:8080", "/anything?x=1", http.StatusMovedPermanently, "https://bonesync.local:8443/anything?x=1"},
		{"8443", "HEAD", "bonesync.local:8080", "/", http.StatusOK, ""}, // the welcome page
		{"443", "GET", "bonesync.local:8080", "/anything?x=1", http.StatusMovedPermanently, "https://bonesync.local/anything?x=1"},
		{"443", "GET", "bonesync.local", "/", http.StatusOK, ""},
		{"443", "GET", "bonesync.local", "/index.html", http.StatusMovedPermanently, "https://bonesync.local/index.html"},
		{"8443", "POST", "bonesync.local:8080", "/upload", http.StatusPermanentRedirect, "https://bonesync.local:8443/upload"},
		{"8443", "PUT", "192.168.1.20", "/a/b", http.StatusPermanentRedirect, "https://192.168.1.20:8443/a/b"},
		{"8443", "GET", "[fe80::1]:80", "/x?y=z", http.StatusMovedPermanently, "https://[fe80::1]:8443/x?y=z"},
		{"443", "GET", "[fe80::1]:80", "/", http.StatusOK, ""},
		// report.json is for HTTPS only: over HTTP it is a redirect.
		{"8443", "GET", "bonesync.local", "/report.json", http.StatusMovedPermanently, "https://bonesync.local:8443/report.json"},
		{"8443", "GET", "evil.example@bonesync.local", "/", http.StatusBadRequest, ""},
		{"8443", "GET", "evil.example/x", "/", http.StatusBadRequest, ""},
		{"8443", "GET", `evil.example\x`, "/", http.StatusBadRequest, ""},
		{"8443", "GET", "", "/", http.StatusBadRequest, ""},
	} {
		req := httptest.NewRequest(tc.method, "http://placeholder"+tc.target, nil)
		req.Host = tc.host
		w := httptest.NewRecorder()
		HTTP(b, tc.port, nil).ServeHTTP(w, req)
		if w.Code != tc.code || w.Header().Get("Location") != tc.location {
			t.Errorf("HTTP(%s) %s %s Host %q = %d Location %q, want %d Location %q",
				tc.port, tc.method, tc.target, tc.host, w.Code, w.Header().Get("Location"), tc.code, tc.location)
		}
		if strings.Contains(w.Body.String(), string(b.rep.Choice.TLS.Key)) {
			t.Errorf("HTTP(%s) %s %s body holds the report:\n%s", tc.port, tc.method, tc.target, w.Body)
		}
	}
}

// The welcome page, over plain HTTP before any certificate is trusted: the
// CA, its fingerprint, the steps (Chrome on Linux among them), the way in
// at the ports the device used; no version, no secret. The HTTPS pages'
// /trust is the same page. (Plain-HTTP / redirected to HTTPS, behind a
// certificate warning.)
func TestWelcome(t *testing.T) {
	b := newBox(t)
	for _, tc := range []struct {
		h                  http.Handler
		tls                bool
		host, caURL, https string
	}{
		{HTTP(b, "8443", nil), false, "bonesync.local:8080", "http://bonesync.local:8080/ca.crt", "https://bonesync.local:8443/files/"},
		{HTTP(b, "443", nil), false, "192.168.1.20", "http://192.168.1.20/ca.crt", "https://192.168.1.20/files/"},
		{HTTPS(b, "8080", nil, nil), true, "bonesync.local:8443", "http://bonesync.local:8080/ca.crt", "https://bonesync.local:8443/files/"},
	} {
		target := "/"
		if tc.tls {
			target = "/trust"
		}
		req := httptest.NewRequest("GET", target, nil)
		req.Host = tc.host
		if tc.tls {
			req.TLS = &tls.ConnectionState{}
		}
		w := httptest.NewRecorder()
		tc.h.ServeHTTP(w, req)
		page := w.Body.String()
		for _, want := range []string{string(report.FingerprintHTML(pki.Fingerprint(b.ca.Cert))), tc.caURL, `href="` + tc.https + `"`, "certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n bonesync", "update-ca-certificates", "Firefox", "Android", "iPhone", "Windows", "Mac"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s%s lacks %q", tc.host, target, want)
			}
		}
		if w.Code != 200 || !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s%s = %d %v", tc.host, target, w.Code, w.Header())
		}
		for _, secret := range []string{"version", "go1.", string(b.rep.Choice.TLS.Key)} {
			if strings.Contains(strings.ToLower(page), secret) {
				t.Errorf("the welcome page tells %q", secret)
			}
		}
	}
}

// A browser leaves port 80 out of Host, so an IPv6 literal comes bare.
func TestHTTPBareIPv6Host(t *testing.T) {
	req := httptest.NewRequest("GET", "/x", nil)
	req.Host = "[fe80::1]"
	w := httptest.NewRecorder()
	HTTP(newBox(t), "8443", nil).ServeHTTP(w, req)
	if got, want := w.Header().Get("Location"), "https://[fe80::1]:8443/x"; w.Code != http.StatusMovedPermanently || got != want {
		t.Errorf("HTTP(8443) GET /x Host %q = %d Location %q, want %d Location %q", req.Host, w.Code, got, http.StatusMovedPermanently, want)
	}
}

func TestCACert(t *testing.T) {
	b := newBox(t)
	for name, h := range map[string]http.Handler{"HTTP": HTTP(b, "8443", nil), "HTTPS": HTTPS(b, "8080", nil, nil)} {
		req := httptest.NewRequest("GET", "/ca.crt", nil)
		req.Host = "bonesync.local:8080"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Errorf("%s GET /ca.crt = %d, want 200", name, w.Code)
		}
		if got, want := w.Header().Get("Content-Type"), "application/x-x509-ca-cert"; got != want {
			t.Errorf("%s GET /ca.crt Content-Type = %q, want %q", name, got, want)
		}
		if got, want := w.Body.Bytes(), b.ca.PEM(); !bytes.Equal(got, want) {
			t.Errorf("%s GET /ca.crt = %q, want %q", name, got, want)
		}
	}
}

func TestTLSVersionsAndSuites(t *testing.T) {
	s := serve(t, newBox(t))

	cfg := s.client()
	cfg.MinVersion = tls.VersionTLS13
	st, err := s.dial(cfg)
	if err != nil {
		t.Fatalf("TLS 1.3 handshake error = %v, want nil", err)
	}
	if st.Version != tls.VersionTLS13 {
		t.Errorf("TLS 1.3 handshake Version = %x, want %x", st.Version, tls.VersionTLS13)
	}
	if got, want := st.PeerCertificates[0], s.cert.Load().Leaf; !got.Equal(want) {
		t.Errorf("TLS 1.3 handshake leaf serial = %v, want %v", got.SerialNumber, want.SerialNumber)
	}

	cfg = s.client()
	cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if _, err := s.dial(cfg); !refused(err) {
		t.Errorf("TLS 1.0-1.1 handshake error = %v, want the server's refusal", err)
	}

	cfg = s.client()
	cfg.MaxVersion = tls.VersionTLS12
	cfg.CipherSuites = []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	}
	if _, err := s.dial(cfg); !refused(err) {
		t.Errorf("TLS 1.2 CBC-only handshake error = %v, want the server's refusal", err)
	}

	for _, suite := range []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	} {
		cfg = s.client()
		cfg.MaxVersion = tls.VersionTLS12
		cfg.CipherSuites = []uint16{suite}
		st, err := s.dial(cfg)
		if err != nil {
			t.Errorf("TLS 1.2 %s handshake error = %v, want nil", tls.CipherSuiteName(suite), err)
			continue
		}
		if st.Version != tls.VersionTLS12 || st.CipherSuite != suite {
			t.Errorf("TLS 1.2 %s handshake = %x %s, want %x %s", tls.CipherSuiteName(suite),
				st.Version, tls.CipherSuiteName(st.CipherSuite), tls.VersionTLS12, tls.CipherSuiteName(suite))
		}
	}
}

func TestTLSPostQuantum(t *testing.T) {
	s := serve(t, newBox(t))
	for _, pq := range []bool{true, false, true} {
		s.pq.Store(pq)
		cfg := s.client()
		cfg.CurvePreferences = []tls.CurveID{tls.X25519MLKEM768, tls.X25519}
		st, err := s.dial(cfg)
		if err != nil {
			t.Fatalf("postQuantum %v: handshake error = %v, want nil", pq, err)
		}
		if got := st.CurveID == tls.X25519MLKEM768; got != pq {
			t.Errorf("postQuantum %v: negotiated %v, want X25519MLKEM768 %v", pq, st.CurveID, pq)
		}
		if !pq && st.CurveID != tls.X25519 {
			t.Errorf("postQuantum false: negotiated %v, want %v", st.CurveID, tls.X25519)
		}
	}
}

func TestTLSCertificateChanges(t *testing.T) {
	s := serve(t, newBox(t))
	for i := range 3 {
		want := leaf(t, s.ca)
		s.cert.Store(want)
		st, err := s.dial(s.client())
		if err != nil {
			t.Fatalf("handshake %d error = %v, want nil", i, err)
		}
		if got := st.PeerCertificates[0]; !got.Equal(want.Leaf) {
			t.Errorf("handshake %d leaf serial = %v, want %v", i, got.SerialNumber, want.Leaf.SerialNumber)
		}
	}
}

// Beside the chosen ECDSA certificate the box serves an RSA one: a
// client that takes only RSA signatures gets it (TLS 1.2 with RSA suites
// only, from Go; TLS 1.3 offering only RSA-PSS, from OpenSSL's s_client);
// every other client gets ECDSA.
func TestTLSPerClientKey(t *testing.T) {
	s := serve(t, newBox(t))
	ecdsaCert, rsaCert := leaf(t, s.ca), leafOf(t, s.ca, keys.RSA2048)
	s.cert.Store(ecdsaCert)
	s.other.Store(rsaCert)
	for _, c := range []struct {
		what string
		cfg  func(*tls.Config)
		want *tls.Certificate
	}{
		{"TLS 1.3", func(*tls.Config) {}, ecdsaCert},
		{"TLS 1.2", func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }, ecdsaCert},
		{"TLS 1.2, RSA suites only", func(c *tls.Config) {
			c.MaxVersion = tls.VersionTLS12
			c.CipherSuites = []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}
		}, rsaCert},
	} {
		cfg := s.client()
		c.cfg(cfg)
		st, err := s.dial(cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if !st.PeerCertificates[0].Equal(c.want.Leaf) {
			t.Errorf("%s: got the %T certificate", c.what, st.PeerCertificates[0].PublicKey)
		}
	}
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("no openssl for the TLS 1.3 clients that choose their signatures")
	}
	for sigalgs, want := range map[string]string{
		"rsa_pss_rsae_sha256:rsa_pss_rsae_sha384": "RSA-PSS",
		"ecdsa_secp256r1_sha256":                  "ECDSA",
	} {
		out, _ := exec.Command(openssl, "s_client", "-connect", s.addr, "-tls1_3", "-sigalgs", sigalgs, "-brief").CombinedOutput()
		if !strings.Contains(string(out), "ignature type: "+want) { // "Peer signature type" in older s_client
			t.Errorf("openssl s_client offering only %s: want %s\n%s", sigalgs, want, out)
		}
	}
}

func TestTLSResumption(t *testing.T) {
	for _, version := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		t.Run(tls.VersionName(version), func(t *testing.T) {
			s := serve(t, newBox(t))
			cfg := s.client()
			cfg.MinVersion, cfg.MaxVersion = version, version
			cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			// A TLS 1.3 ticket comes after the handshake, so read a response each time.
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
			defer c.CloseIdleConnections()
			for i, want := range []bool{false, true, true} {
				resp, err := c.Get("https://" + s.addr + "/ca.crt")
				if err != nil {
					t.Fatalf("GET %d error = %v, want nil", i, err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.TLS.DidResume != want {
					t.Errorf("GET %d DidResume = %v, want %v", i, resp.TLS.DidResume, want)
				}
			}
		})
	}
}

func TestHTTPS(t *testing.T) {
	b := newBox(t)
	s := serve(t, b)
	for _, h2 := range []bool{false, true} {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: s.client(), ForceAttemptHTTP2: h2}}
		get := func(path string) (*http.Response, []byte) {
			t.Helper()
			resp, err := c.Get("https://" + s.addr + path)
			if err != nil {
				t.Fatalf("GET %s error = %v, want nil", path, err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("GET %s body error = %v, want nil", path, err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s = %d, want 200", path, resp.StatusCode)
			}
			if got, want := resp.Header.Get("Strict-Transport-Security"), "max-age=31536000"; got != want {
				t.Errorf("GET %s Strict-Transport-Security = %q, want %q", path, got, want)
			}
			if got, want := resp.ProtoMajor, map[bool]int{false: 1, true: 2}[h2]; got != want {
				t.Errorf("GET %s over HTTP/%d, want HTTP/%d", path, got, want)
			}
			return resp, body
		}

		_, pem := get("/ca.crt")
		if !bytes.Equal(pem, b.ca.PEM()) {
			t.Errorf("GET /ca.crt = %q, want %q", pem, b.ca.PEM())
		}
		c.CloseIdleConnections()
	}
}

// A request's headers are bounded: 500 KB of Basic credentials are
// refused before any handler sees them, a long cookie is not.
func TestHeadersBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), slog.New(slog.DiscardHandler), "http")
	go srv.Serve(ln)
	defer srv.Close()
	for _, tc := range []struct {
		size int
		want int
	}{
		{30 << 10, http.StatusOK},
		{500 << 10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
		req.SetBasicAuth(strings.Repeat("u", tc.size), "pw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET with %d bytes of credentials: %v", tc.size, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET with %d bytes of credentials = %d, want %d", tc.size, resp.StatusCode, tc.want)
		}
	}
}

// A path no mount has is 404, with the HTTPS headers still on.
func TestHTTPSNotFound(t *testing.T) {
	w := httptest.NewRecorder()
	HTTPS(newBox(t), "8080", nil, nil).ServeHTTP(w, httptest.NewRequest("GET", "/nothing", nil))
	if w.Code != http.StatusNotFound || w.Header().Get("Strict-Transport-Security") == "" {
		t.Errorf("GET /nothing = %d Strict-Transport-Security %q, want 404 and the header", w.Code, w.Header().Get("Strict-Transport-Security"))
	}
}

// /ca.der and the Apple profile carry the same CA as /ca.crt, over HTTP and
// HTTPS, and parse with the tools devices' own parsers stand for here:
// openssl for the DER, Python's plistlib for the profile.
func TestCAForms(t *testing.T) {
	b := newBox(t)
	get := func(h http.Handler, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "bonesync.local:8443" // the HTTP listener's requests name its port; the profile names the HTTPS one
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, w.Code)
		}
		return w
	}
	dir := t.TempDir()
	for name, h := range map[string]http.Handler{"HTTP": HTTP(b, "8443", nil), "HTTPS": HTTPS(b, "8080", nil, nil)} {
		der := get(h, "/ca.der").Body.Bytes()
		if !bytes.Equal(der, b.ca.Cert.Raw) {
			t.Errorf("%s /ca.der is not the CA", name)
		}
		prof := get(h, "/bonesync.mobileconfig")
		if ct := prof.Header().Get("Content-Type"); ct != "application/x-apple-aspen-config" {
			t.Errorf("%s profile Content-Type %q", name, ct)
		}
		os.WriteFile(filepath.Join(dir, "ca.der"), der, 0o644)
		os.WriteFile(filepath.Join(dir, "p.mobileconfig"), prof.Body.Bytes(), 0o644)
	}
	out, err := exec.Command("openssl", "x509", "-inform", "DER", "-in", filepath.Join(dir, "ca.der"), "-noout", "-fingerprint", "-sha256").CombinedOutput()
	if err != nil || !strings.Contains(string(out), pki.Fingerprint(b.ca.Cert)) {
		t.Errorf("openssl on /ca.der: %v %s (want fingerprint %s)", err, out, pki.Fingerprint(b.ca.Cert))
	}
	py := `import plistlib, sys
p = plistlib.load(open(sys.argv[1], "rb"))
c = p["PayloadContent"][0]
assert p["PayloadType"] == "Configuration" and c["PayloadType"] == "com.apple.security.root", p
assert p["PayloadUUID"] != c["PayloadUUID"]
cal, card = p["PayloadContent"][1], p["PayloadContent"][2]
assert cal["PayloadType"] == "com.apple.caldav.account" and cal["CalDAVHostName"] == "bonesync.local" and cal["CalDAVPort"] == 8443 and cal["CalDAVUseSSL"], cal
assert card["PayloadType"] == "com.apple.carddav.account" and card["CardDAVHostName"] == "bonesync.local" and card["CardDAVPort"] == 8443, card
sys.stdout.buffer.write(c["PayloadContent"])`
	out, err = exec.Command("/usr/bin/python3", "-c", py, filepath.Join(dir, "p.mobileconfig")).Output()
	if err != nil || !bytes.Equal(out, b.ca.Cert.Raw) {
		t.Errorf("plistlib on the profile: %v; its certificate is the CA: %v", err, bytes.Equal(out, b.ca.Cert.Raw))
	}
}
