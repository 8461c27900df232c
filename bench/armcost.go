package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// armRow is the ARM instruction count of one kind of handshake, in millions
// per connection (0: not measured).
type armRow struct {
	Key, Mode           string
	Go, Nginx           float64
	GoStd               float64 // the build with Go's crypto as it is, no armcrypto overlay
	RefGo, RefNginx     float64 // from the armcost README, not measured here
	GoDetail, NgxDetail string
}

// armResult is the whole ARM section.
type armResult struct {
	Rows  []armRow
	Notes []string
	Err   string
	// Million instructions per MiB a WebDAV PUT costs, with the digests
	// computed as the bytes stream and in the build without them.
	UploadHashed, UploadPlain float64
	// Bulk download per MiB by suite, and the suite each server chose
	// from curl's default list.
	Bulk                           []armBulk
	ChosenGo, ChosenStd, ChosenNgx string
	// SSH connections ("login") and SFTP put and get per MiB with
	// chacha20-poly1305@openssh.com: both builds and Debian's armhf sshd.
	SFTP, SFTPStd, SFTPSshd map[string]float64
	// A preview of a 12-megapixel photo, and djpeg's decode of it.
	Photos armPhotos
	// Where the instructions go: a full handshake's and a download's
	// functions.
	Profiles []armProfile
	// The product: the board's binary, `bonesync serve`, by whole runs
	// (armserve.go). The rest of the block is a harness's breakdown.
	Serve  []armServeRow
	ServeN int // connections a handshake run counts
	// The board's binary's size and the modules that take it (armsize.go).
	Size *armSize
}

// armPart reports whether the run includes this part of the ARM block.
func (o *options) armPart(name string) bool {
	return o.armOnly == "" || slices.Contains(strings.Split(o.armOnly, ","), name)
}

// armReference are the figures the armcost tool's README prints (the tool
// -armcost names)
// (Go 1.26; Debian 12 armhf OpenSSL 3.0), million instructions per handshake
// with a tiny HTTP request. Shown beside this run's counts, never as them.
var armReference = map[string][2]float64{
	"ecdsa-p256 full":    {11.6, 3.6},
	"ecdsa-p256 resumed": {7.7, 3.2},
	"rsa-2048 full":      {82.4, 17.4},
}

// armWarm is the number of full handshakes before counting: the first
// connections pay for lazy initialisation (both sides), the last one
// leaves a session ticket in the client's cache for the resumed count.
const armWarm = 3

// armBlock counts ARM instructions per TLS 1.3 server handshake under
// qemu-arm (cortex-a8 model) with the armcost plugin: `bonesync serve` in
// the harness (bench/armcost, armharness.go) built GOARM=7, and Debian's
// armhf nginx with OpenSSL if the sysroot is there. Each side serves the
// box's chain for the same benchmark key; the load is this program,
// natively, one connection at a time.
func armBlock(ctx context.Context, o *options) armResult {
	var res armResult
	if o.armPart("size") {
		size, err := armSizeBlock(ctx, o)
		if err != nil {
			res.Notes = append(res.Notes, "the board's binary's size: "+err.Error())
		}
		res.Size = size
	}
	if o.armOnly == "size" {
		return res // no instruction counts: no plugin, no harness
	}
	plugin, err := armPlugin(ctx, o)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	bin, binStd := filepath.Join(o.work, "armcost-armv7"), filepath.Join(o.work, "armcost-armv7-std")
	for _, b := range []struct {
		bin     string
		overlay bool
	}{{bin, true}, {binStd, false}} {
		if err := buildArmcost(ctx, o, b.bin, b.overlay, false); err != nil {
			res.Err = err.Error()
			return res
		}
	}
	nginx := filepath.Join(o.sysroot, "usr/sbin/nginx")
	haveNginx := true
	if _, err := os.Stat(nginx); err != nil {
		haveNginx = false
		res.Notes = append(res.Notes, fmt.Sprintf("nginx under qemu-arm not measured: no armhf sysroot at %s (bench/armhf-sysroot.sh makes it); "+
			"compare with the README nginx column, the armcost README's figures, not measured here", o.sysroot))
	}
	if o.armPart("handshakes") {
		if haveNginx, err = armHandshakes(ctx, o, &res, plugin, bin, binStd, haveNginx); err != nil {
			res.Err = err.Error()
			return res
		}
	}
	if ctx.Err() == nil && o.armPart("profiles") {
		if res.Profiles, err = armProfiles(ctx, o, bin); err != nil {
			res.Notes = append(res.Notes, "profiles under qemu-arm failed: "+err.Error())
		}
	}
	if ctx.Err() == nil && o.armPart("bulk") {
		if err := armBulkBlock(ctx, o, &res, plugin, bin, binStd, haveNginx); err != nil {
			res.Notes = append(res.Notes, "bulk downloads under qemu-arm failed: "+err.Error())
		}
	}
	if ctx.Err() == nil && o.armPart("uploads") {
		box, err := armBox(ctx, o, "ecdsa-p256")
		if err == nil {
			res.UploadHashed, res.UploadPlain, err = armUploads(ctx, o, plugin, bin, box)
		}
		if err != nil {
			res.Notes = append(res.Notes, "uploads under qemu-arm failed: "+err.Error())
		}
	}
	if ctx.Err() == nil && (o.armPart("serve") || o.armPart("serve-profiles")) {
		err := ensureARMBinary(ctx, o)
		if err == nil {
			err = armServeBlock(ctx, o, plugin, &res)
		}
		if err != nil {
			res.Notes = append(res.Notes, "the board's binary under qemu-arm failed: "+err.Error())
		}
	}
	if ctx.Err() == nil && o.armPart("photos") {
		box, err := armBox(ctx, o, "ecdsa-p256")
		if err == nil {
			res.Photos, err = countPreviews(ctx, o, plugin, bin, box)
		}
		if err != nil {
			res.Notes = append(res.Notes, "previews under qemu-arm failed: "+err.Error())
		}
	}
	return res
}

// armHandshakes counts the handshake rows: each key with both builds of
// the harness and with nginx if haveNginx, all three serving the box's
// chain. It returns whether nginx is still to be counted (not once it
// failed).
func armHandshakes(ctx context.Context, o *options, res *armResult, plugin, bin, binStd string, haveNginx bool) (bool, error) {
	for _, k := range []struct {
		key     string
		resumed bool
	}{{"ecdsa-p256", true}, {"rsa-2048", false}} {
		if ctx.Err() != nil {
			break
		}
		box, err := armBox(ctx, o, k.key)
		if err != nil {
			return haveNginx, err
		}
		chainFile, keyFile, ca, err := boxFiles(box)
		if err != nil {
			return haveNginx, err
		}
		modes := []string{"full"}
		if k.resumed {
			modes = append(modes, "resumed")
		}
		o.logf("arm: %s, bonesync (Go, GOARM=7), %d handshakes per kind", k.key, o.armN)
		goCounts, goDetail, err := countGo(ctx, o, plugin, bin, box, ca, k.resumed)
		if err != nil {
			return haveNginx, fmt.Errorf("bonesync %s under qemu-arm: %v", k.key, err)
		}
		o.logf("arm: %s, bonesync with Go's crypto as it is (no armcrypto overlay)", k.key)
		stdCounts, _, err := countGo(ctx, o, plugin, binStd, box, ca, k.resumed)
		if err != nil {
			return haveNginx, fmt.Errorf("bonesync (Go's crypto) %s under qemu-arm: %v", k.key, err)
		}
		var ngxCounts map[string]float64
		var ngxDetail string
		if haveNginx {
			o.logf("arm: %s, nginx/OpenSSL armhf", k.key)
			ngxCounts, ngxDetail, err = countNginx(ctx, o, plugin, o.armN, chainFile, keyFile, ca, k.key, k.resumed)
			if err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("nginx %s under qemu-arm failed: %v", k.key, err))
				haveNginx = false
			} else {
				res.Notes = append(res.Notes, fmt.Sprintf("nginx %s: two identical base runs differed by %.3f M instructions in all, "+
					"%.2f%% of %d full handshakes", k.key, ngxCounts["spread"], 100*ngxCounts["spread"]/(ngxCounts["full"]*float64(o.armN)), o.armN))
			}
		}
		for _, m := range modes {
			ref := armReference[k.key+" "+m]
			res.Rows = append(res.Rows, armRow{Key: k.key, Mode: m, Go: goCounts[m], GoStd: stdCounts[m], Nginx: ngxCounts[m],
				RefGo: ref[0], RefNginx: ref[1], GoDetail: goDetail, NgxDetail: ngxDetail})
		}
	}
	return haveNginx, nil
}

// buildArmcost builds bench/armcost for GOARM=7, as the board's binary is
// built: with the armcrypto overlay (make build-arm), or with Go's crypto
// as it is (make build-arm-std) for the comparison.
func buildArmcost(ctx context.Context, o *options, bin string, overlay, nohash bool) error {
	return buildArm(ctx, o, bin, "./bench/armcost", overlay, nohash)
}

// armPlugin builds the armcost plugin (insncount.c) once per run.
func armPlugin(ctx context.Context, o *options) (string, error) {
	return buildPlugin(ctx, o, "insncount")
}

// buildPlugin builds the armcost tool's NAME.c into o.work, once per run
// (insncount, or insnprof: the per-block and per-process profile).
func buildPlugin(ctx context.Context, o *options, name string) (string, error) {
	plugin := filepath.Join(o.work, "lib"+name+".so")
	if _, err := os.Stat(plugin); err == nil {
		return plugin, nil
	}
	src := filepath.Join(o.armcostDir, name+".c")
	if out, err := exec.CommandContext(ctx, "gcc", "-O2", "-shared", "-fPIC", "-o", plugin, src, "-lpthread").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the armcost plugin from %s: %v %s", src, err, out)
	}
	return plugin, nil
}

// cryptoOverlay writes armcrypto's overlay once per run (o.work is new
// each time), for every build that takes it, and returns its folder.
func cryptoOverlay(ctx context.Context, o *options) (string, error) {
	dir := filepath.Join(o.work, "armcrypto")
	if _, err := os.Stat(filepath.Join(dir, "overlay.json")); err != nil {
		if out, err := exec.CommandContext(ctx, "go", "run", "./armcrypto", "-out", dir).CombinedOutput(); err != nil {
			return "", fmt.Errorf("the crypto overlay: %v %s", err, out)
		}
	}
	return dir, nil
}

// buildArm builds the package pkg for GOARM=7, with the ARM crypto
// overlay if overlay, without the store's digests if nohash.
func buildArm(ctx context.Context, o *options, bin, pkg string, overlay, nohash bool) error {
	args := []string{"build", "-trimpath", "-o", bin}
	if overlay {
		dir, err := cryptoOverlay(ctx, o)
		if err != nil {
			return err
		}
		args = append(args, "-modfile="+filepath.Join(dir, "go.mod"))
	}
	switch {
	case nohash:
		base := ""
		if overlay {
			base = filepath.Join(o.work, "armcrypto", "overlay.json")
		}
		file, err := nohashOverlay(o.work, base)
		if err != nil {
			return err
		}
		args = append(args, "-overlay="+file)
	case overlay:
		args = append(args, "-overlay="+filepath.Join(o.work, "armcrypto", "overlay.json"))
	}
	build := exec.CommandContext(ctx, "go", append(args, pkg)...)
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm", "GOARM=7", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s for GOARM=7 (overlay %v, without digests %v): %v %s", pkg, overlay, nohash, err, out)
	}
	return nil
}

// armBulkBlock counts HTTPS downloads per MiB for both builds and nginx,
// with each suite.
func armBulkBlock(ctx context.Context, o *options, res *armResult, plugin, bin, binStd string, haveNginx bool) error {
	box, err := armBox(ctx, o, "ecdsa-p256")
	if err != nil {
		return err
	}
	chainFile, keyFile, ca, err := boxFiles(box)
	if err != nil {
		return err
	}
	o.logf("arm: HTTPS downloads, %d MiB per suite, both builds", armBulkMiB)
	fast, chosen, err := countGoBulk(ctx, o, plugin, bin, box)
	if err != nil {
		return fmt.Errorf("bonesync: %w", err)
	}
	std, chosenStd, err := countGoBulk(ctx, o, plugin, binStd, box)
	if err != nil {
		return fmt.Errorf("bonesync (Go's crypto): %w", err)
	}
	var ngx map[string]float64
	var chosenNgx string
	if haveNginx {
		o.logf("arm: HTTPS downloads, nginx")
		if ngx, chosenNgx, err = countNginxBulk(ctx, o, plugin, chainFile, keyFile, ca); err != nil {
			res.Notes = append(res.Notes, "nginx downloads under qemu-arm failed: "+err.Error())
		}
	}
	for _, k := range bulkKinds {
		http := "HTTP/2"
		if k.HTTP1 {
			http = "HTTP/1.1"
		}
		res.Bulk = append(res.Bulk, armBulk{Suite: k.Suite, HTTP: http, Go: fast[k.String()], GoStd: std[k.String()], Ngx: ngx[k.Suite]})
	}
	res.ChosenGo, res.ChosenStd, res.ChosenNgx = chosen, chosenStd, chosenNgx
	o.logf("arm: SFTP connections and put and get, %d MiB, chacha20-poly1305@openssh.com, both builds and sshd", armBulkMiB)
	key, err := armClient(o)
	if err != nil {
		return err
	}
	for _, b := range []struct {
		bin  string
		into *map[string]float64
	}{{bin, &res.SFTP}, {binStd, &res.SFTPStd}} {
		if *b.into, err = countGoSFTP(ctx, o, plugin, b.bin, box, key); err != nil {
			return fmt.Errorf("SFTP: %w", err)
		}
	}
	if res.SFTPSshd, err = countSshdSFTP(ctx, o, key); err != nil {
		res.Notes = append(res.Notes, "sshd under qemu-arm not counted: "+err.Error())
	}
	return nil
}

// armLoad is the client side of a count: armWarm full handshakes, mark(1),
// n full handshakes if full, mark(2), n resumed ones if resumed, mark(3).
// It returns what the last connection negotiated.
func armLoad(addr string, file []byte, n int, full, resumed bool, mark func(int) error) (string, error) {
	var src sources
	plain, cached := tlsClient(false), tlsClient(true)
	var detail string
	run := func(c conn, count int, wantResumed bool) error {
		for range count {
			out, err := c(src.next())
			if err != nil {
				return err
			}
			if out.resumed != wantResumed {
				return fmt.Errorf("resumed = %v, want %v", out.resumed, wantResumed)
			}
			detail = out.detail
		}
		return nil
	}
	plainConn, cachedConn := httpsGet(addr, plain, file), httpsGet(addr, cached, file)
	if err := run(plainConn, armWarm-1, false); err != nil {
		return "", fmt.Errorf("warm-up: %w", err)
	}
	if err := run(cachedConn, 1, false); err != nil {
		return "", fmt.Errorf("warm-up: %w", err)
	}
	if err := mark(1); err != nil {
		return "", err
	}
	if full {
		if err := run(plainConn, n, false); err != nil {
			return "", fmt.Errorf("full handshakes: %w", err)
		}
	}
	if err := mark(2); err != nil {
		return "", err
	}
	if resumed {
		if err := run(cachedConn, n, true); err != nil {
			return "", fmt.Errorf("resumed handshakes: %w", err)
		}
	}
	return detail, mark(3)
}

// countGo runs bench/armcost under qemu-arm and reads the plugin's counts
// between the markers the server executes when it is quiescent.
func countGo(ctx context.Context, o *options, plugin, bin, box string, ca []byte, resumed bool) (map[string]float64, string, error) {
	a, err := startArmServer(ctx, o, plugin, bin, box)
	if err != nil {
		return nil, "", err
	}
	defer a.close()
	detail, err := armLoad(a.tlsAddr, ca, o.armN, true, resumed, func(i int) error { return a.say(fmt.Sprint("mark ", i)) })
	if err != nil {
		return nil, "", err
	}
	marks, err := a.marks()
	if err != nil {
		return nil, "", err
	}
	if marks[2] == 0 || (resumed && marks[3] == 0) {
		return nil, "", fmt.Errorf("no marker counts in %s", a.log)
	}
	counts := map[string]float64{"full": marks[2] / float64(o.armN) / 1e6}
	if resumed {
		counts["resumed"] = marks[3] / float64(o.armN) / 1e6
	}
	return counts, detail, nil
}

var totalLine = regexp.MustCompile(`(?m)^total (\d+)$`)

// countNginx counts nginx by difference, since it executes no markers: the
// whole run (start, warm-up, the counted handshakes, exit) minus the same
// run without the counted handshakes, divided by their number. Counts
// repeat to within 0.1%, so start and exit cancel out.
func countNginx(ctx context.Context, o *options, plugin string, n int, chainFile, keyFile string, ca []byte, key string, resumed bool) (map[string]float64, string, error) {
	type kind struct {
		name          string
		full, resumed bool
	}
	// The base run twice: how far two identical runs differ is the
	// method's own uncertainty, reported beside the counts.
	runs := []kind{{"base", false, false}, {"base2", false, false}, {"full", true, false}}
	if resumed {
		runs = append(runs, kind{"resumed", false, true})
	}
	totals := map[string]float64{}
	var detail string
	for _, r := range runs {
		t, d, err := nginxRun(ctx, o, plugin, n, chainFile, keyFile, ca, key+"-"+r.name, r.full, r.resumed)
		if err != nil {
			return nil, "", fmt.Errorf("%s run: %w", r.name, err)
		}
		totals[r.name] = t
		if d != "" {
			detail = d
		}
	}
	counts := map[string]float64{}
	for _, r := range runs[2:] {
		counts[r.name] = (totals[r.name] - totals["base"]) / float64(n) / 1e6
	}
	counts["spread"] = math.Abs(totals["base2"]-totals["base"]) / 1e6
	return counts, detail, nil
}

// nginxRun is one nginx run under qemu-arm: one process (master_process
// off), then a SIGTERM once it has no connection left; the plugin prints
// the total at exit.
func nginxRun(ctx context.Context, o *options, plugin string, n int, chainFile, keyFile string, ca []byte, name string, full, resumed bool) (float64, string, error) {
	s, log, err := startArmNginx(ctx, o, plugin, filepath.Join(o.work, "arm-nginx-"+name), chainFile, keyFile, ca)
	if err != nil {
		return 0, "", err
	}
	defer s.stop()
	detail, err := armLoad(s.addr, ca, n, full, resumed, func(int) error { return nil })
	if err != nil {
		return 0, "", fmt.Errorf("%w%s", err, s.tail())
	}
	t, err := stopArmNginx(s, log)
	return t, strings.TrimSpace(detail), err
}

// startArmNginx runs Debian's armhf nginx under qemu-arm with the plugin,
// one process (master_process off), serving dir/www on a free port; the
// plugin's counts go to the returned log. One successful connect is the
// readiness check, the same in every run.
func startArmNginx(ctx context.Context, o *options, plugin, dir, chainFile, keyFile string, ca []byte) (*server, string, error) {
	return startArmNginxListen(ctx, o, plugin, dir, "", chainFile, keyFile, ca)
}

// startArmNginxListen is startArmNginx with listen's further parameters
// (" http2").
func startArmNginxListen(ctx context.Context, o *options, plugin, dir, listen, chainFile, keyFile string, ca []byte) (*server, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	conf, err := writeNginxListen(dir, 1, "master_process off;", listen, port, chainFile, keyFile, ca)
	if err != nil {
		return nil, "", err
	}
	log := filepath.Join(dir, "plugin.log")
	s := &server{name: "nginx (armhf)", addr: fmt.Sprintf("127.0.0.1:%d", port),
		logs: []string{filepath.Join(dir, "error.log"), filepath.Join(dir, "stderr.log")}}
	s.cmd = exec.Command("qemu-arm", "-cpu", "cortex-a8", "-L", o.sysroot, "-plugin", plugin, "-d", "plugin", "-D", log,
		filepath.Join(o.sysroot, "usr/sbin/nginx"), "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"), "-g", "daemon off;")
	if s.cmd.Stderr, err = os.Create(filepath.Join(dir, "stderr.log")); err != nil {
		return nil, "", err
	}
	if err := start(ctx, s, func() error { return dialable(s.addr) }); err != nil {
		return nil, "", err
	}
	return s, log, nil
}

// stopArmNginx ends the run once nginx has no connection left (a SIGTERM;
// the plugin prints the total at exit) and returns the total.
func stopArmNginx(s *server, log string) (float64, error) {
	time.Sleep(300 * time.Millisecond) // the last close
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		return 0, errors.New("nginx did not exit on SIGTERM")
	}
	b, err := os.ReadFile(log)
	if err != nil {
		return 0, err
	}
	m := totalLine.FindAllStringSubmatch(string(b), -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("no total in %s%s", log, s.tail())
	}
	return strconv.ParseFloat(m[len(m)-1][1], 64)
}
