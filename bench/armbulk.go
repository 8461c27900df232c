package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// armBulkMiB is the size of the file downloaded per count.
const armBulkMiB = 8

// The TLS 1.3 suites counted for bulk transfer, as OpenSSL names them
// (curl's --tls13-ciphers).
var armSuites = []string{"TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"}

// bulkKind is one way of downloading: a suite, over HTTP/1.1 or HTTP/2
// (curl's default where the server offers it, as bonesync does; nginx
// is configured for HTTP/1.1 only, so its figure is HTTP/1.1's in both).
type bulkKind struct {
	Suite string
	HTTP1 bool
}

func (k bulkKind) String() string {
	if k.HTTP1 {
		return k.Suite + ", HTTP/1.1"
	}
	return k.Suite + ", HTTP/2"
}

// curlArgs are curl's flags for the kind's protocol.
func (k bulkKind) curlArgs() []string {
	if k.HTTP1 {
		return []string{"--http1.1"}
	}
	return []string{"--http2"}
}

var bulkKinds = []bulkKind{{armSuites[0], true}, {armSuites[0], false}, {armSuites[1], false}}

// armBulk is one row of the bulk table: million instructions per MiB of
// an HTTPS download with one suite and protocol.
type armBulk struct {
	Suite          string
	HTTP           string // HTTP/1.1 or HTTP/2, bonesync's (nginx's is HTTP/1.1)
	Go, GoStd, Ngx float64
}

var curlSuite = regexp.MustCompile(`SSL connection using TLSv1\.3 / (\S+)`)

// curlGet fetches url with curl (OpenSSL), offering only suite if it is
// not empty, with extra flags, and returns the suite the server chose.
func curlGet(ctx context.Context, url, suite string, auth bool, extra ...string) (string, error) {
	args := []string{"-sk", "-v", "--tlsv1.3", "-o", "/dev/null", "--fail"}
	if suite != "" {
		args = append(args, "--tls13-ciphers", suite)
	}
	if auth {
		args = append(args, "-u", "bench:bench-password")
	}
	args = append(args, extra...)
	out, err := exec.CommandContext(ctx, "curl", append(args, url)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("curl %s: %v: %s", url, err, lastLines(out, 3))
	}
	m := curlSuite.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("curl %s: no suite in its output", url)
	}
	return string(m[1]), nil
}

func lastLines(b []byte, n int) string {
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(l[max(0, len(l)-n):], " / ")
}

// putBulkFiles puts big.bin (bulkBody) and tiny.bin in the WebDAV folder
// at base.
func putBulkFiles(ctx context.Context, o *options, base string) error {
	for name, body := range map[string][]byte{"big.bin": bulkBody(), "tiny.bin": []byte("tiny\n")} {
		f := filepath.Join(o.work, "bulk-"+name)
		if err := os.WriteFile(f, body, 0o644); err != nil {
			return err
		}
		out, err := exec.CommandContext(ctx, "curl", "-sk", "--fail", "-u", "bench:bench-password", "-T", f, base+name).CombinedOutput()
		if err != nil {
			return fmt.Errorf("PUT %s: %v %s", name, err, out)
		}
	}
	return nil
}

// bulkBody is the downloaded file: not compressible, not random (the
// same bytes in every run). Made once per run; callers must not change it.
var bulkBody = sync.OnceValue(func() []byte {
	b := make([]byte, armBulkMiB<<20)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
})

// countGoBulk runs one build of bench/armcost under qemu-arm:
// a PUT of the file (warm-up, and the login's Argon2 hash), then for each
// suite a GET of the file and a GET of a tiny one between markers; the
// difference is the download's own cost. It also returns the suite chosen
// when curl offers its default list.
func countGoBulk(ctx context.Context, o *options, plugin, bin, box string) (map[string]float64, string, error) {
	a, err := startArmServer(ctx, o, plugin, bin, box)
	if err != nil {
		return nil, "", err
	}
	defer a.close()
	base := "https://" + a.tlsAddr + "/dav/"
	if err := putBulkFiles(ctx, o, base); err != nil {
		return nil, "", err
	}
	chosen, err := curlGet(ctx, base+"tiny.bin", "", true)
	if err != nil {
		return nil, "", err
	}
	label := 1
	counts := map[string]float64{}
	for _, k := range bulkKinds {
		if err := a.say(fmt.Sprint("mark ", label)); err != nil {
			return nil, "", err
		}
		if got, err := curlGet(ctx, base+"big.bin", k.Suite, true, k.curlArgs()...); err != nil || got != k.Suite {
			return nil, "", fmt.Errorf("download with %s: got %s, %v", k, got, err)
		}
		if err := a.say(fmt.Sprint("mark ", label+1)); err != nil {
			return nil, "", err
		}
		if _, err := curlGet(ctx, base+"tiny.bin", k.Suite, true, k.curlArgs()...); err != nil {
			return nil, "", err
		}
		if err := a.say(fmt.Sprint("mark ", label+2)); err != nil {
			return nil, "", err
		}
		label += 3
	}
	marks, err := a.marks()
	if err != nil {
		return nil, "", err
	}
	label = 1
	for _, k := range bulkKinds {
		big, tiny := marks[label+1], marks[label+2]
		if big == 0 || tiny == 0 {
			return nil, "", fmt.Errorf("no marker counts in %s", a.log)
		}
		counts[k.String()] = (big - tiny) / armBulkMiB / 1e6
		label += 3
	}
	return counts, chosen, nil
}

// countNginxBulk counts Debian's armhf nginx by difference of whole runs:
// one with a GET of the file, one with a GET of the tiny file, each after
// the same warm-up.
func countNginxBulk(ctx context.Context, o *options, plugin, chainFile, keyFile string, ca []byte) (map[string]float64, string, error) {
	counts := map[string]float64{}
	var chosen string
	for _, suite := range armSuites {
		var totals [2]float64
		for i, file := range []string{"big.bin", "ca.crt"} {
			t, c, err := nginxBulkRun(ctx, o, plugin, chainFile, keyFile, ca, suite, file)
			if err != nil {
				return nil, "", err
			}
			totals[i], chosen = t, c
		}
		counts[suite] = (totals[0] - totals[1]) / armBulkMiB / 1e6
	}
	return counts, chosen, nil
}

func nginxBulkRun(ctx context.Context, o *options, plugin, chainFile, keyFile string, ca []byte, suite, file string) (float64, string, error) {
	dir, err := os.MkdirTemp(o.work, "arm-nginx-bulk-")
	if err != nil {
		return 0, "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "www"), 0o755); err != nil {
		return 0, "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "www", "big.bin"), bulkBody(), 0o644); err != nil {
		return 0, "", err
	}
	s, log, err := startArmNginx(ctx, o, plugin, dir, chainFile, keyFile, ca)
	if err != nil {
		return 0, "", err
	}
	defer s.stop()
	url := "https://" + s.addr + "/"
	chosen, err := curlGet(ctx, url+"ca.crt", "", false) // warm-up, and the suite curl's default list gets
	if err != nil {
		return 0, "", fmt.Errorf("%w%s", err, s.tail())
	}
	if got, err := curlGet(ctx, url+file, suite, false); err != nil || got != suite {
		return 0, "", fmt.Errorf("nginx %s with %s: got %s, %v%s", file, suite, got, err, s.tail())
	}
	t, err := stopArmNginx(s, log)
	return t, chosen, err
}
