package main

// End-to-end: the built binary on a temp state dir, reached by Go's TLS client
// and by curl, restarted to check that the keys and the choice survive.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// built compiles bonesync once per test run.
func built(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bonesync-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "bonesync")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// instance is one running bonesync.
type instance struct {
	cmd           *exec.Cmd
	stdout        syncBuffer
	https, http   string
	ssh           string
	stderrLines   chan string
	stderrCapture *syncBuffer
}

// syncBuffer is a bytes.Buffer safe to read while the process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) WriteString(p string) { s.Write([]byte(p)) }

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// boxEnv is the test's environment without the Go runtime's tuning, which
// would replace the server's own (its memory limit) and so change what
// the tests measure of it.
func boxEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "GOGC" && name != "GOMEMLIMIT" {
			env = append(env, kv)
		}
	}
	return env
}

func start(t *testing.T, stateDir string, extra ...string) *instance {
	t.Helper()
	in := &instance{stderrLines: make(chan string, 1000), stderrCapture: &syncBuffer{}}
	// Port 0: the kernel picks three free ports as the server binds, and
	// the server says which; ports chosen here beforehand could be taken
	// in between (or coincide) and stall the test.
	args := append([]string{"serve", "-state", stateDir, "-https", "127.0.0.1:0", "-http", "127.0.0.1:0", "-ssh", "127.0.0.1:0", "-quick"}, extra...)
	in.cmd = exec.Command(built(t), args...)
	in.cmd.Env = boxEnv()
	in.cmd.Stdout = &in.stdout
	pr, pw := io.Pipe()
	in.cmd.Stderr = pw
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		// A line of any length, so that a server that logs a client's
		// 500 KB name fails its test rather than stalls on a full pipe.
		sc.Buffer(make([]byte, 64<<10), 1<<30)
		for sc.Scan() {
			in.stderrCapture.WriteString(sc.Text() + "\n")
			select {
			case in.stderrLines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() { in.stop(); pw.Close() })
	serving := regexp.MustCompile(`^serving HTTPS, HTTP and SFTP https=(\S+) http=(\S+) sftp=(\S+)$`)
	deadline := time.After(3 * time.Minute)
	alive := time.NewTicker(200 * time.Millisecond)
	defer alive.Stop()
	for {
		select {
		case l := <-in.stderrLines:
			if m := serving.FindStringSubmatch(l); m != nil {
				in.https, in.http, in.ssh = m[1], m[2], m[3]
				return in
			}
		case <-alive.C:
			if exited(in.cmd.Process.Pid) {
				time.Sleep(100 * time.Millisecond) // its last words
				t.Fatalf("bonesync exited before serving; stderr:\n%s", in.stderrCapture)
			}
		case <-deadline:
			t.Fatalf("bonesync did not start serving in 3 minutes; stderr:\n%s", in.stderrCapture)
		}
	}
}

// exited says whether process pid has ended (a zombie not yet waited for).
func exited(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// waitStdout waits until stdout holds want (stdout and stderr are separate
// pipes, so stdout can lag behind the "serving" line) and returns it.
func (in *instance) waitStdout(t *testing.T, want string) string {
	t.Helper()
	for i := 0; i < 100; i++ {
		if s := in.stdout.String(); strings.Contains(s, want) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("stdout lacks %q:\n%s", want, in.stdout.String())
	return ""
}

func (in *instance) stop() {
	if in.cmd.ProcessState != nil {
		return
	}
	in.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { in.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		in.cmd.Process.Kill()
		<-done
	}
}

func get(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return b
}

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	// A typo in the config is reported with file:line and never stops the box.
	conf := filepath.Join(dir, "bonesync.conf")
	os.WriteFile(conf, []byte("# test\nconcurency = 4\n"), 0o644)
	in := start(t, dir)
	if want := "at=" + conf + `:2 problem=unknown setting "concurency" (did you mean "concurrency"?)`; !strings.Contains(in.stderrCapture.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, in.stderrCapture)
	}
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// The CA over plain HTTP, as a phone would fetch it first.
	caPEM := get(t, plain, "http://"+in.http+"/ca.crt")
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("/ca.crt is not a PEM certificate: %q", caPEM)
	}
	// Everything else over HTTP is a redirect to HTTPS.
	resp, err := plain.Get("http://" + in.http + "/report.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, httpsPort, _ := net.SplitHostPort(in.https)
	if want := "https://127.0.0.1:" + httpsPort + "/report.json"; resp.StatusCode != 301 || resp.Header.Get("Location") != want {
		t.Errorf("HTTP /report.json = %s Location %q, want 301 to %s", resp.Status, resp.Header.Get("Location"), want)
	}

	// Go's TLS client verifies the served chain against that CA, by name and
	// by address, and resumes a session.
	for _, name := range []string{"localhost", "127.0.0.1"} {
		cfg := &tls.Config{RootCAs: roots, ServerName: name, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		var resumed bool
		for i := 0; i < 2; i++ {
			c, err := tls.Dial("tcp", in.https, cfg)
			if err != nil {
				t.Fatalf("TLS to %s as %s: %v", in.https, name, err)
			}
			c.Write([]byte("GET /ca.crt HTTP/1.0\r\n\r\n"))
			io.ReadAll(c)
			resumed = c.ConnectionState().DidResume
			c.Close()
		}
		if !resumed {
			t.Errorf("second TLS connection as %s was not resumed: session tickets are off", name)
		}
	}
	// Old protocols and non-AEAD suites are refused.
	for _, cfg := range []*tls.Config{
		{RootCAs: roots, ServerName: "localhost", MaxVersion: tls.VersionTLS11},
		{RootCAs: roots, ServerName: "localhost", MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA}},
	} {
		if c, err := tls.Dial("tcp", in.https, cfg); err == nil {
			c.Close()
			t.Errorf("TLS with %+v succeeded, want refused", cfg)
		}
	}

	// curl, a client that is not ours, verifies the chain too.
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(caFile, caPEM, 0o644)
	if curl, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command(curl, "-sS", "--fail", "--cacert", caFile, "https://localhost:"+httpsPort+"/report.json").CombinedOutput()
		if err != nil {
			t.Fatalf("curl --cacert: %v\n%s", err, out)
		}
		if !json.Valid(out) {
			t.Errorf("curl got no JSON: %.200s", out)
		}
	} else if os.Getenv("CI") != "" {
		t.Fatal("curl not installed; .ci/run installs it")
	}

	// The console table and report.json agree.
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}}}
	rep, err := report.Parse(get(t, c, "https://"+in.https+"/report.json"))
	if err != nil {
		t.Fatal(err)
	}
	console := in.waitStdout(t, "Reach the box at")
	for _, want := range append([]string{
		"Chosen HTTPS key: " + rep.Choice.TLS.Key,
		"Chosen SFTP host key: " + rep.Choice.SSH.Key,
	}, report.FingerprintLines(rep.CAFingerprint)...) {
		if !strings.Contains(console, want) {
			t.Errorf("console lacks %q:\n%s", want, console)
		}
	}
	for _, r := range append(rep.TLS, rep.SSH...) {
		if r.Full1 == nil {
			t.Errorf("%s %s has no one-client measurement", r.Proto, r.Key)
			continue
		}
		// key, bits, server ms, hs/s, p50@1, ...
		want := []string{string(r.Key), fmt.Sprint(r.Strength), fmt.Sprintf("%.1f", r.Full1.Latency.P50)}
		if !hasRow(console, want) {
			t.Errorf("console has no row %v (key, bits, p50@1 in column 5)", want)
		}
	}
	// Served to anyone: the benchmark's cores and time, no software
	// versions, CPU model, host name or URLs. Kept whole on the box.
	if rep.Machine.Cores == 0 || rep.Machine.Go != "" || rep.Machine.Kernel != "" || rep.Machine.CPU != "" || rep.Machine.Hostname != "" ||
		len(rep.URLs) > 0 || rep.Machine.Time.IsZero() {
		t.Errorf("report.json served without login: machine %+v, URLs %v; want the cores and time only", rep.Machine, rep.URLs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err != nil {
		t.Error(err)
	} else if full, err := report.Parse(b); err != nil || full.Machine.Go == "" || full.Machine.Kernel == "" {
		t.Errorf("the stored report.json lacks the versions: %v %+v", err, full.Machine)
	}
	if rep.Choice.TLS.Key == "rsa-1024" {
		t.Error("rsa-1024 was chosen")
	}
	page := string(get(t, c, "https://"+in.https+"/"))
	if !strings.Contains(page, "<svg") || !strings.Contains(strings.ReplaceAll(page, "<wbr>", ""), rep.CAFingerprint) { // it wraps between pairs
		t.Error("status page lacks the chart or the CA fingerprint")
	}
	served := in.served(t, roots)

	// Restart: the same CA, keys and choice, and no benchmark.
	sd := &state.Dir{Path: dir}
	before := snapshot(t, sd)
	in.stop()
	in2 := start(t, dir)
	if strings.Contains(in2.stderrCapture.String(), "benchmarking") {
		t.Errorf("restart benchmarked again:\n%s", in2.stderrCapture)
	}
	if after := snapshot(t, sd); after != before {
		t.Errorf("state changed across a restart:\nbefore %s\nafter  %s", before, after)
	}
	if got := in2.served(t, roots); !bytes.Equal(got, served) {
		t.Error("the restarted server serves another certificate")
	}
	if !strings.Contains(in2.waitStdout(t, "Reach the box at"), report.FingerprintLines(rep.CAFingerprint)[1]) {
		t.Error("the restart summary lacks the CA fingerprint")
	}
}

func hasRow(text string, want []string) bool {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && f[0] == want[0] && f[1] == want[1] && f[4] == want[2] {
			return true
		}
	}
	return false
}

// served returns the leaf certificate the instance serves.
func (in *instance) served(t *testing.T, roots *x509.CertPool) []byte {
	c, err := tls.Dial("tcp", in.https, &tls.Config{RootCAs: roots, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Raw
}

func snapshot(t *testing.T, d *state.Dir) string {
	var parts []string
	for _, f := range []string{state.CACert, state.CAKey, state.TLSKey, state.TLSCert, state.SSHHostKey, state.Decision} {
		b, err := d.Read(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		parts = append(parts, fmt.Sprintf("%s:%x", f, sha256.Sum256(b)))
	}
	return strings.Join(parts, " ")
}
