package main

import (
	"context"
	"debug/elf"
	"encoding/pem"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// The product counted: the board's binary (`make build-arm`'s output),
// the real `bonesync serve` on a real state directory, under qemu-arm
// with the counting plugin and GOMAXPROCS=1, as the board runs it. It
// executes no markers, so it is counted as nginx is, by the difference of
// whole runs: start, the same warm-up, the counted work or none, then
// SIGTERM and the plugin's total at exit. What a connection leaves to the
// collector and the runtime is in the count, at the rhythm the serving
// box's heap sets. The base run idles as long as the counted run took,
// so that the server's own timers cancel out too.

// armServeMiB and armServeBaseMiB are the bulk sizes: the row is the
// difference per MiB, so the connection and login cancel out.
const armServeMiB, armServeBaseMiB = 16, 1

// armServeRow is one row of the product's table, million instructions
// per connection or per MiB.
type armServeRow struct {
	Row, Peer        string
	Serve, PeerCount float64
	Spread           float64 // how far two identical base runs differed, per unit
	GC               float64 // of Serve, the collector's (collectorShare; 0: not taken)
}

// armServeUser is the account the counted clients use.
const armServeUser, armServePassword = "bench", "bench-password"

// armServeState prepares a state directory for key: pinned keys as in
// the other blocks, a first `bonesync bench` (native), the user bench
// with the client's key, and the bulk files put through a native serve,
// so that the store knows them as it knows any upload.
func armServeState(ctx context.Context, o *options, key string, client *sshClientKey) (string, error) {
	dir := filepath.Join(o.work, "arm-serve-"+key)
	if err := prepareUserBox(ctx, o, dir, key, client); err != nil {
		return "", err
	}
	s, _, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return "", err
	}
	defer s.stop()
	body := bulkBodyMiB(armServeMiB)
	for name, b := range map[string][]byte{"big.bin": body, "base.bin": body[:armServeBaseMiB<<20], "tiny.bin": []byte("tiny\n")} {
		f := filepath.Join(o.work, "serve-"+name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return "", err
		}
		out, err := exec.CommandContext(ctx, "curl", "-sk", "--fail", "-u", armServeUser+":"+armServePassword, "-T", f,
			"https://"+s.addr+"/dav/"+name).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("PUT %s: %v %s", name, err, out)
		}
	}
	return dir, nil
}

// bulkBodyMiB is bulkBody's bytes, n MiB of them.
func bulkBodyMiB(n int) []byte {
	b := make([]byte, n<<20)
	for i := 0; i < len(b); i += armBulkMiB << 20 {
		copy(b[i:], bulkBody())
	}
	return b
}

// serveRunWith is one whole run of the board's binary under qemu-arm on a
// copy of the state in dir: load runs once it serves (with its HTTPS and
// SSH addresses), then it idles for idle, then SIGTERM. It returns the
// plugin's total and how long load took.
func serveRunWith(ctx context.Context, o *options, plugin, bin string, env []string, dir, name string, idle time.Duration, load func(https, ssh string) error) (float64, time.Duration, error) {
	name = strings.NewReplacer("/", "", " ", "-", "'", "").Replace(name)
	run := filepath.Join(o.work, "arm-serve-run-"+name)
	os.RemoveAll(run)
	if out, err := exec.CommandContext(ctx, "cp", "-a", dir, run).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("copy the state: %v %s", err, out)
	}
	log := filepath.Join(run, "plugin.log")
	argv := []string{"qemu-arm", "-cpu", "cortex-a8", "-plugin", plugin, "-d", "plugin", "-D", log, bin}
	s, sshAddr, err := startServe(ctx, run, argv, append([]string{"GOMAXPROCS=1"}, env...), 5*time.Minute)
	if err != nil {
		return 0, 0, err
	}
	defer s.stop()
	t0 := time.Now()
	if err := load(s.addr, sshAddr); err != nil {
		return 0, 0, fmt.Errorf("%s: %w%s", name, err, s.tail())
	}
	took := time.Since(t0)
	time.Sleep(idle)
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(2 * time.Minute):
		return 0, 0, fmt.Errorf("%s: bonesync serve did not stop on SIGTERM%s", name, s.tail())
	}
	b, err := os.ReadFile(log)
	if err != nil {
		return 0, 0, err
	}
	m := totalLine.FindAllStringSubmatch(string(b), -1)
	if len(m) == 0 {
		return 0, 0, fmt.Errorf("%s: no total in %s%s", name, log, s.tail())
	}
	total, err := strconv.ParseFloat(m[len(m)-1][1], 64)
	return total, took, err
}

// serveCounter counts the board's binary with the profiling plugin
// (insnprof: the same totals as insncount, and the instructions of every
// translated block), naming the blocks by the symbols of a build of the
// same code with its symbols kept (make build-arm strips them; the text
// is checked to be byte for byte the same), for the collector's share.
type serveCounter struct {
	o      *options
	plugin string
	syms   []sym // nil: the collector's share is not taken
}

func newServeCounter(ctx context.Context, o *options) (*serveCounter, error) {
	plugin, err := buildPlugin(ctx, o, "insnprof")
	if err != nil {
		return nil, err
	}
	c := &serveCounter{o: o, plugin: plugin}
	// make build-arm again, its symbols kept (armsize.go).
	bin, err := armSymsBinary(ctx, o)
	if err != nil {
		return nil, err
	}
	same, err := sameText(o.bonesyncARM, bin)
	if err != nil || !same {
		o.logf("arm serve: no collector's share: %s and %s differ in their text (%v)", o.bonesyncARM, bin, err)
		return c, nil
	}
	if c.syms, err = readSyms(ctx, bin); err != nil {
		return nil, err
	}
	return c, nil
}

// sameText reports whether two ELF files' .text sections lie at the
// same address with the same length: the same functions in the same
// places. (Their bytes differ in the literal pools, which hold addresses
// of data: the symbol table and the overlay's paths move the data, not
// the code.)
func sameText(a, b string) (bool, error) {
	var secs [2]*elf.Section
	for i, f := range []string{a, b} {
		e, err := elf.Open(f)
		if err != nil {
			return false, err
		}
		defer e.Close()
		if secs[i] = e.Section(".text"); secs[i] == nil {
			return false, fmt.Errorf("%s has no .text", f)
		}
	}
	return secs[0].Addr == secs[1].Addr && secs[0].Size == secs[1].Size, nil
}

// countPair counts one row: the run with the counted work (measured) and
// two base runs that idle as long, per unit of n, how far the bases
// differed, and the collector's share of the row (0 if not taken).
func (c *serveCounter) countPair(ctx context.Context, dir, name string, n float64, measured, base func(https, ssh string) error) (per, spread, gc float64, err error) {
	var totals [3]float64
	var profiles [3]map[string]float64
	var took time.Duration
	for i, load := range []func(string, string) error{measured, base, base} {
		run := fmt.Sprint(name, "-", i)
		prof := filepath.Join(c.o.work, "prof-"+strings.NewReplacer("/", "", " ", "-", "'", "").Replace(run))
		idle := took
		var t time.Duration
		if totals[i], t, err = serveRunWith(ctx, c.o, c.plugin, c.o.bonesyncARM, []string{"PROF_OUT=" + prof}, dir, run, idle, load); err != nil {
			return 0, 0, 0, err
		}
		if i == 0 {
			took = t
		}
		files, _ := filepath.Glob(prof + ".*")
		if c.syms != nil && len(files) == 1 {
			if profiles[i], err = readProfile(files[0], c.syms); err != nil {
				return 0, 0, 0, err
			}
		}
		for _, f := range files {
			os.Remove(f) // a few MB each
		}
	}
	c.o.logf("arm serve: %s: %.1f M, bases %.1f and %.1f M (idle %v)", name, totals[0]/1e6, totals[1]/1e6, totals[2]/1e6, took.Round(time.Second))
	if profiles[0] != nil && profiles[1] != nil && profiles[2] != nil {
		mean := map[string]float64{}
		for _, p := range profiles[1:] {
			for k, v := range p {
				mean[k] += v / 2
			}
		}
		gc = collectorShare(profiles[0], mean, n) / 1e6
	}
	return (totals[0] - (totals[1]+totals[2])/2) / n / 1e6, math.Abs(totals[1]-totals[2]) / n / 1e6, gc, nil
}

// armServeBlock counts the product's rows beside the peers' counts that
// the rest of the ARM block made (nginx's handshakes and downloads,
// sshd's SFTP).
func armServeBlock(ctx context.Context, o *options, plugin string, res *armResult) error {
	client, err := armClient(o)
	if err != nil {
		return err
	}
	res.ServeN = o.armServeN
	count, err := newServeCounter(ctx, o)
	if err != nil {
		return err
	}
	for _, key := range []string{"ecdsa-p256", "rsa-2048"} {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		dir, err := armServeState(ctx, o, key, client)
		if err != nil {
			return fmt.Errorf("%s state: %w", key, err)
		}
		ca, err := os.ReadFile(filepath.Join(dir, "state", "ca.crt"))
		if err != nil {
			return err
		}
		if o.armPart("serve") {
			if err := armServeHandshakes(ctx, o, plugin, count, dir, key, ca, res); err != nil {
				return err
			}
		}
		if key != "ecdsa-p256" {
			continue
		}
		if o.armPart("serve-profiles") {
			if err := armServeProfiles(ctx, o, dir, ca, client, res); err != nil {
				return err
			}
		}
		if o.armPart("serve") {
			if err := armServeBulk(ctx, o, plugin, count, dir, client, res); err != nil {
				return err
			}
		}
	}
	return nil
}

// armServeHandshakes counts full connections with key, and resumed ones
// for P-256, beside nginx's counts of the same run.
func armServeHandshakes(ctx context.Context, o *options, plugin string, count *serveCounter, dir, key string, ca []byte, res *armResult) error {
	n := o.armServeN
	o.logf("arm serve: %s handshakes, %d a run, the board's binary", key, n)
	load := func(full, resumed bool) func(string, string) error {
		return func(https, _ string) error {
			_, err := armLoad(https, ca, n, full, resumed, func(int) error { return nil })
			return err
		}
	}
	modes := []string{"full"}
	if key == "ecdsa-p256" {
		modes = append(modes, "resumed")
	}
	// nginx with the very chain and key the box serves (its own CA's
	// chain, 2.1 KB, as in the harness's breakdown): the Certificate
	// message is hashed and encrypted on both sides alike.
	var ngx map[string]float64
	if _, err := os.Stat(filepath.Join(o.sysroot, "usr/sbin/nginx")); err == nil {
		st := filepath.Join(dir, "state")
		o.logf("arm serve: %s, nginx with the box's chain", key)
		if ngx, _, err = countNginx(ctx, o, plugin, n, filepath.Join(st, "tls.crt"), filepath.Join(st, "tls.key"), ca, "serve-"+key, len(modes) > 1); err != nil {
			return fmt.Errorf("nginx with the box's chain: %w", err)
		}
	}
	for _, m := range modes {
		per, spread, gc, err := count.countPair(ctx, dir, key+"-"+m, float64(n), load(m == "full", m == "resumed"), load(false, false))
		if err != nil {
			return err
		}
		res.Serve = append(res.Serve, armServeRow{Row: fmt.Sprintf("%s %s connection", key, m), Serve: per, Spread: spread, GC: gc,
			Peer: "nginx, the same chain", PeerCount: ngx[m]})
	}
	return nil
}

// armServeBulk counts downloads over HTTPS and SFTP transfers per MiB:
// the big file's run less the base file's.
func armServeBulk(ctx context.Context, o *options, plugin string, count *serveCounter, dir string, client *sshClientKey, res *armResult) error {
	url := func(https, name string) string { return "https://" + https + "/dav/" + name }
	per := float64(armServeMiB - armServeBaseMiB)
	chacha := armSuites[0]
	for _, k := range []bulkKind{{chacha, true}, {chacha, false}} {
		get := func(name string) func(string, string) error {
			return func(https, _ string) error {
				if _, err := curlGet(ctx, url(https, "tiny.bin"), chacha, true, k.curlArgs()...); err != nil { // the login's hash
					return err
				}
				got, err := curlGet(ctx, url(https, name), chacha, true, k.curlArgs()...)
				if err == nil && got != chacha {
					err = fmt.Errorf("suite %s, want %s", got, chacha)
				}
				return err
			}
		}
		o.logf("arm serve: download %s", k)
		v, spread, gc, err := count.countPair(ctx, dir, "get-"+strings.ReplaceAll(k.String(), "/", ""), per, get("big.bin"), get("base.bin"))
		if err != nil {
			return err
		}
		row := armServeRow{Row: "download per MiB, " + k.String(), Serve: v, Spread: spread, GC: gc}
		if _, err := os.Stat(filepath.Join(o.sysroot, "usr/sbin/nginx")); err == nil {
			row.Peer = "nginx, " + map[bool]string{true: "HTTP/1.1", false: "HTTP/2"}[k.HTTP1] + ", the same chain"
			if row.PeerCount, err = countNginxServeBulk(ctx, o, plugin, dir, k); err != nil {
				return fmt.Errorf("nginx downloads: %w", err)
			}
		}
		res.Serve = append(res.Serve, row)
	}
	keyFile, err := client.privateFile(o.work)
	if err != nil {
		return err
	}
	upload := filepath.Join(o.work, "serve-big.bin")
	uploadBase := filepath.Join(o.work, "serve-base.bin")
	o.logf("arm serve: sshd with OpenSSH's sftp client")
	osh, err := countSshdOpenSSH(ctx, o, client)
	if err != nil {
		res.Notes = append(res.Notes, "sshd with OpenSSH's sftp not counted: "+err.Error())
	}
	type way struct {
		name, peer string
		do         func(sshAddr, verb, name string) error
		peerCount  map[string]float64
	}
	ways := []way{
		{"pkg/sftp", "sshd, pkg/sftp", func(sshAddr, verb, name string) error {
			c, err := net.Dial("tcp", sshAddr)
			if err != nil {
				return err
			}
			f := sftpGet(name, sizeOf(name))
			if verb == "put" {
				f = sftpPut("up-"+name, bulkBodyMiB(armServeMiB)[:sizeOf(name)])
			}
			return sftpSession(c, armServeUser, client, f)
		}, res.SFTPSshd},
		{"OpenSSH's sftp", "sshd, OpenSSH's sftp", func(sshAddr, verb, name string) error {
			cmd := "get " + name + " /dev/null"
			if verb == "put" {
				local := upload
				if name == "base.bin" {
					local = uploadBase
				}
				cmd = "put " + local + " up-" + name
			}
			return opensshSFTP(ctx, sshAddr, armServeUser, keyFile, cmd)
		}, osh},
	}
	for _, w := range ways {
		for _, verb := range []string{"get", "put"} {
			step := func(name string) func(string, string) error {
				return func(_, sshAddr string) error {
					if err := w.do(sshAddr, "get", "tiny.bin"); err != nil { // warm-up: a connection and login
						return err
					}
					return w.do(sshAddr, verb, name)
				}
			}
			o.logf("arm serve: SFTP %s with %s", verb, w.name)
			v, spread, gc, err := count.countPair(ctx, dir, "sftp-"+verb+"-"+strings.Fields(w.name)[0], per, step("big.bin"), step("base.bin"))
			if err != nil {
				return err
			}
			res.Serve = append(res.Serve, armServeRow{Row: fmt.Sprintf("SFTP %s per MiB, %s", verb, w.name), Serve: v, Spread: spread, GC: gc,
				Peer: w.peer, PeerCount: w.peerCount[verb]})
		}
	}
	return nil
}

func sizeOf(name string) int {
	switch name {
	case "big.bin":
		return armServeMiB << 20
	case "base.bin":
		return armServeBaseMiB << 20
	}
	return 5
}

// opensshSFTP runs OpenSSH's sftp client in batch mode as user with the
// key in keyFile, with the algorithms the other SSH counts use.
func opensshSFTP(ctx context.Context, addr, user, keyFile, command string) error {
	host, port, _ := net.SplitHostPort(addr)
	batch := keyFile + ".batch"
	if err := os.WriteFile(batch, []byte(command+"\n"), 0o600); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "sftp", "-q", "-b", batch, "-P", port, "-i", keyFile,
		"-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
		"-o", "Ciphers=chacha20-poly1305@openssh.com", "-o", "KexAlgorithms=curve25519-sha256",
		user+"@"+host).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sftp %q: %v %s", command, err, out)
	}
	return nil
}

// privateFile writes the client key's private half where OpenSSH's
// client reads it, once.
func (k *sshClientKey) privateFile(dir string) (string, error) {
	f := filepath.Join(dir, "client_ed25519")
	if _, err := os.Stat(f); err == nil {
		return f, nil
	}
	if k.private == nil {
		return "", fmt.Errorf("the client key's private half is not kept")
	}
	blk, err := ssh.MarshalPrivateKey(k.private, "")
	if err != nil {
		return "", err
	}
	return f, os.WriteFile(f, pem.EncodeToMemory(blk), 0o600)
}

// serveProfile is where the product's instructions go for one kind of
// work: the work's run less a base run idling as long, by function, per
// unit, from the profiling plugin, on the board's code built with its
// symbols (bin).
func serveProfile(ctx context.Context, o *options, bin, dir, what string, units float64, work, base func(https, ssh string) error) (armProfile, error) {
	plugin, err := buildPlugin(ctx, o, "insnprof")
	if err != nil {
		return armProfile{}, err
	}
	syms, err := readSyms(ctx, bin)
	if err != nil {
		return armProfile{}, err
	}
	var counts [2]map[string]float64
	var took time.Duration
	for i, load := range []func(string, string) error{work, base} {
		name := fmt.Sprintf("prof-%s-%d", strings.Fields(what)[0], i)
		prof := filepath.Join(o.work, name+".prof")
		idle := time.Duration(0)
		if i == 1 {
			idle = took
		}
		_, t, err := serveRunWith(ctx, o, plugin, bin, []string{"PROF_OUT=" + prof}, dir, name, idle, load)
		if err != nil {
			return armProfile{}, err
		}
		if i == 0 {
			took = t
		}
		files, _ := filepath.Glob(prof + ".*")
		if len(files) != 1 {
			return armProfile{}, fmt.Errorf("the profiling plugin wrote %d files for %s, want one", len(files), prof)
		}
		if counts[i], err = readProfile(files[0], syms); err != nil {
			return armProfile{}, err
		}
	}
	p := topFunctions("bonesync serve: "+what, counts[0], counts[1], units)
	p.GC = collectorShare(counts[0], counts[1], units)
	return p, nil
}

// collectorFuncs are the runtime's functions that mark and sweep: what a
// collection costs, beside the rest of the runtime (scheduler, maps,
// allocation).
var collectorFuncs = []string{"runtime.gc", "runtime.scan", "runtime.mark", "runtime.greyobject", "runtime.findObject",
	"runtime.sweep", "runtime.(*mspan).sweep", "runtime.(*gcWork)", "runtime.(*gcBits)", "runtime.tryDeferToSpanScan",
	"runtime.wbBuf", "runtime.bulkBarrier", "runtime.(*mheap).nextSpanForSweep", "runtime.(*sweepLocked)", "runtime.spanOf",
	"runtime.pcvalue", "runtime.step", "runtime.(*stkframe).getStackMap", "runtime.(*unwinder)", "runtime.funcInfo", "runtime.findfunc"}

// collectorShare is the collector's instructions per unit: the
// functions of collectorFuncs, the work's run less the base's. (Stack
// scanning walks the function tables, pcvalue and step, which a
// traceback does too; a serving box takes none.)
func collectorShare(work, base map[string]float64, units float64) float64 {
	var n float64
	for name, w := range work {
		for _, p := range collectorFuncs {
			if strings.HasPrefix(name, p) {
				n += w - base[name]
				break
			}
		}
	}
	return n / units
}

// armServeProfiles profiles the product's full P-256 connection and its
// SFTP put, with the collector's share of each.
func armServeProfiles(ctx context.Context, o *options, dir string, ca []byte, client *sshClientKey, res *armResult) error {
	bin := filepath.Join(o.work, "bonesync-armv7-syms")
	if _, err := os.Stat(bin); err != nil {
		if err := buildArm(ctx, o, bin, "./appliance", true, false); err != nil {
			return err
		}
	}
	n := o.armServeN
	handshakes := func(count int) func(string, string) error {
		return func(https, _ string) error {
			_, err := armLoad(https, ca, count, count > 0, false, func(int) error { return nil })
			return err
		}
	}
	put := func(name string) func(string, string) error {
		return func(_, sshAddr string) error {
			for _, f := range []func(*sftp.Client) error{sftpGet("tiny.bin", 5), sftpPut("up-"+name, bulkBodyMiB(armServeMiB)[:sizeOf(name)])} {
				c, err := net.Dial("tcp", sshAddr)
				if err != nil {
					return err
				}
				if err := sftpSession(c, armServeUser, client, f); err != nil {
					return err
				}
			}
			return nil
		}
	}
	download := func(name string) func(string, string) error {
		return func(https, _ string) error {
			for _, f := range []string{"tiny.bin", name} {
				if _, err := curlGet(ctx, "https://"+https+"/dav/"+f, armSuites[0], true, "--http2"); err != nil {
					return err
				}
			}
			return nil
		}
	}
	for _, k := range []struct {
		what       string
		units      float64
		work, base func(string, string) error
	}{
		{"full TLS 1.3 connection, ECDSA P-256, and a GET", float64(n), handshakes(n), handshakes(0)},
		{"HTTPS download per MiB over HTTP/2, ChaCha20-Poly1305", armServeMiB - armServeBaseMiB, download("big.bin"), download("base.bin")},
		{"SFTP put per MiB, pkg/sftp client", armServeMiB - armServeBaseMiB, put("big.bin"), put("base.bin")},
	} {
		o.logf("arm serve: profile of %s", k.what)
		p, err := serveProfile(ctx, o, bin, dir, k.what, k.units, k.work, k.base)
		if err != nil {
			return fmt.Errorf("profile of %s: %w", k.what, err)
		}
		res.Profiles = append(res.Profiles, p)
	}
	return nil
}

// countNginxServeBulk counts Debian's armhf nginx as the product's
// downloads are counted: the box's chain and key, a GET of armServeMiB
// less one of armServeBaseMiB, ChaCha20-Poly1305, over the kind's HTTP
// (nginx's listen gets http2 for HTTP/2), per MiB.
func countNginxServeBulk(ctx context.Context, o *options, plugin, dir string, k bulkKind) (float64, error) {
	st := filepath.Join(dir, "state")
	ca, err := os.ReadFile(filepath.Join(st, "ca.crt"))
	if err != nil {
		return 0, err
	}
	listen := ""
	if !k.HTTP1 {
		listen = " http2"
	}
	body := bulkBodyMiB(armServeMiB)
	var totals [2]float64
	for i, size := range []int{armServeMiB, armServeBaseMiB} {
		run := filepath.Join(o.work, fmt.Sprintf("arm-nginx-serve-bulk-%v-%d", k.HTTP1, size))
		if err := os.MkdirAll(filepath.Join(run, "www"), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(run, "www", "file.bin"), body[:size<<20], 0o644); err != nil {
			return 0, err
		}
		s, log, err := startArmNginxListen(ctx, o, plugin, run, listen, filepath.Join(st, "tls.crt"), filepath.Join(st, "tls.key"), ca)
		if err != nil {
			return 0, err
		}
		url := "https://" + s.addr + "/"
		// The warm-up, as the product's login, which says the protocol.
		out, err := exec.CommandContext(ctx, "curl", append([]string{"-sk", "-o", "/dev/null", "-w", "%{http_version}", "--tls13-ciphers", k.Suite},
			append(k.curlArgs(), url+"ca.crt")...)...).Output()
		if want := map[bool]string{true: "1.1", false: "2"}[k.HTTP1]; err == nil && string(out) != want {
			err = fmt.Errorf("nginx answered over HTTP %s, want %s", out, want)
		}
		if err == nil {
			var got string
			if got, err = curlGet(ctx, url+"file.bin", k.Suite, false, k.curlArgs()...); err == nil && got != k.Suite {
				err = fmt.Errorf("suite %s, want %s", got, k.Suite)
			}
		}
		if err != nil {
			s.stop()
			return 0, fmt.Errorf("%w%s", err, s.tail())
		}
		if totals[i], err = stopArmNginx(s, log); err != nil {
			return 0, err
		}
	}
	return (totals[0] - totals[1]) / float64(armServeMiB-armServeBaseMiB) / 1e6, nil
}
