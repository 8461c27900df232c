package main

// The copy off the box: `bonesync copy run` (rclone's sync and crypt,
// linked in) of a user's tree to OpenSSH's SFTP server, twice (the second
// with nothing changed), beside Debian's rclone doing the same work by
// hand (`rclone sync` through a crypt remote to the same server): wall
// time, CPU per MiB, peak resident set. Then, where the engine's code
// runs on the board, ARM instructions per MiB and per unchanged file
// under the armcost proxy, bonesync's armv7 build beside Debian's armhf
// rclone on a smaller tree.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

const copyUser = "copier"

// copyRun is one run's cost.
type copyRun struct {
	Who, What string
	Wall, CPU time.Duration
	MaxRSS    int64 // kB
}

type copyResult struct {
	Files    int
	Bytes    int64
	Rclone   string // Debian's rclone, the peer
	Runs     []copyRun
	ARMFiles int
	ARMBytes int64
	ARM      []armCopy
	Notes    []string
	Err      string
}

// armCopy is one program's count under qemu-arm: million instructions
// per MiB for the first run, per file for the unchanged one.
type armCopy struct {
	Who                string
	PerMiB, PerFile    float64
	First, Second, Nil float64 // million instructions: the runs, and a start that does nothing
}

func copiesBlock(ctx context.Context, o *options, dir string) copyResult {
	res := copyResult{Files: o.copyFiles, Bytes: o.copyBytes}
	if err := copiesRun(ctx, o, dir, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

// copyTree writes n files of about total bytes in all (random, so no
// compression helps) under root, 100 to a folder, with dates in the past.
func copyTree(root string, n int, total int64) error {
	rng := mrand.New(mrand.NewPCG(24, 1))
	avg := total / int64(n)
	buf := make([]byte, 2*avg)
	old := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var written int64
	for i := range n {
		size := avg/2 + rng.Int64N(avg+1) // avg/2 .. 3avg/2
		if i == n-1 {
			size = max(0, total-written)
		}
		size = min(size, int64(len(buf)))
		rand.Read(buf[:size])
		p := filepath.Join(root, fmt.Sprintf("folder%03d", i/100), fmt.Sprintf("file%05d.bin", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, buf[:size], 0o644); err != nil {
			return err
		}
		when := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, when, when)
		written += size
	}
	return nil
}

func copiesRun(ctx context.Context, o *options, prepared string, res *copyResult) error {
	work := filepath.Join(o.work, "copies")
	os.MkdirAll(work, 0o755)
	// A box of its own: the prepared state (keys, report) without the
	// files other blocks left, so the run copies this block's tree only.
	dir := filepath.Join(work, "box")
	st, files, err := copyBox(ctx, o, prepared, dir)
	if err != nil {
		return err
	}
	// The tree is uploaded to the box with rclone over WebDAV, as a sync
	// client would, so the store has each file's digests and date (the
	// upload is not measured).
	tree := filepath.Join(files, copyUser)
	local := filepath.Join(work, "tree")
	o.logf("copies: writing %d files, %d MiB, and uploading them", res.Files, res.Bytes>>20)
	if err := copyTree(local, res.Files, res.Bytes); err != nil {
		return err
	}
	res.Rclone = rcloneVersion(ctx, "rclone")
	if err := uploadTree(ctx, o, dir, local); err != nil {
		return err
	}
	os.RemoveAll(local)

	// OpenSSH's sshd, the target: the box's own key (bonesync copy key)
	// and rclone's in its authorized_keys.
	_, hostPEM, err := sshdHostKey()
	if err != nil {
		return err
	}
	boxKey, err := exec.CommandContext(ctx, o.bonesync, "copy", "-state", st, "key").Output()
	if err != nil {
		return fmt.Errorf("bonesync copy key: %w", err)
	}
	rcloneKey, rclonePub, err := clientKeyFile(work)
	if err != nil {
		return err
	}
	sshdDir := filepath.Join(work, "sshd")
	os.MkdirAll(sshdDir, 0o755)
	sshd, err := startSSHD(ctx, sshdDir, hostPEM)
	if err != nil {
		return err
	}
	defer sshd.stop()
	if err := os.WriteFile(filepath.Join(sshdDir, "authorized_keys"), append(append(boxKey, '\n'), rclonePub...), 0o644); err != nil {
		return err
	}
	_, port, _ := strings.Cut(sshd.addr, ":")

	// bonesync copy run, twice.
	conf := filepath.Join(work, "copy.conf")
	target := filepath.Join(work, "target-bonesync")
	os.WriteFile(conf, fmt.Appendf(nil, "copy_target = sftp://root@127.0.0.1:%s%s\n", port, target), 0o644)
	bonesync := func(what string) error {
		return res.timedRun(ctx, o, "bonesync copy run", what, exec.Command(o.bonesync, "copy", "-state", st, "-config", conf, "-files", files, "run"))
	}
	if err := bonesync("first copy"); err != nil {
		return err
	}
	if err := bonesync("nothing changed"); err != nil {
		return err
	}

	// Debian's rclone, the same tree through a crypt remote to the same
	// server.
	pass, err := exec.CommandContext(ctx, "rclone", "obscure", "bench-copy-password").Output()
	if err != nil {
		return fmt.Errorf("rclone obscure: %w", err)
	}
	env := append(os.Environ(), "RCLONE_CONFIG=/dev/null",
		"RCLONE_CONFIG_TGT_TYPE=sftp", "RCLONE_CONFIG_TGT_HOST=127.0.0.1", "RCLONE_CONFIG_TGT_PORT="+port,
		"RCLONE_CONFIG_TGT_USER=root", "RCLONE_CONFIG_TGT_KEY_FILE="+rcloneKey,
		// The SFTP options bonesync sets: no shell commands on the target
		// (else rclone probes for one, 25 s here), no remote hash check.
		"RCLONE_CONFIG_TGT_SHELL_TYPE=none", "RCLONE_CONFIG_TGT_DISABLE_HASHCHECK=true",
		"RCLONE_CONFIG_CR_TYPE=crypt", "RCLONE_CONFIG_CR_REMOTE=tgt:"+filepath.Join(work, "target-rclone"),
		"RCLONE_CONFIG_CR_PASSWORD="+strings.TrimSpace(string(pass)))
	peer := func(what string) error {
		cmd := exec.Command("rclone", "sync", tree, "cr:current/files/"+copyUser)
		cmd.Env = env
		return res.timedRun(ctx, o, "rclone sync (Debian's)", what, cmd)
	}
	if err := peer("first copy"); err != nil {
		return err
	}
	if err := peer("nothing changed"); err != nil {
		return err
	}
	if err := copiesS3(ctx, o, work, st, files, tree, string(pass), res); err != nil {
		res.Notes = append(res.Notes, "the S3 runs failed: "+err.Error())
	}
	if o.arm {
		if err := copiesARM(ctx, o, work, port, rcloneKey, string(pass), res); err != nil {
			res.Notes = append(res.Notes, "the ARM count failed: "+err.Error())
		}
	}
	return nil
}

// timedRun runs cmd under GNU time (timed) as who's run "what", and
// keeps its cost in res.Runs.
func (res *copyResult) timedRun(ctx context.Context, o *options, who, what string, cmd *exec.Cmd) error {
	r, out, err := timed(ctx, cmd)
	if err != nil {
		return fmt.Errorf("%s (%s): %v\n%s", who, what, err, lastBytes(out, 2000))
	}
	r.Who, r.What = who, what
	res.Runs = append(res.Runs, r)
	o.logf("copies: %s, %s: %v wall, %v CPU, %.0f MiB peak", who, what, r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), mib(r.MaxRSS))
	return nil
}

// copiesS3 runs the same copies to an S3-compatible store (rclone's serve
// s3, scripts/s3server, on loopback): bonesync through its MinIO-client
// backend, Debian's rclone through its own S3 type.
func copiesS3(ctx context.Context, o *options, work, st, files, tree, pass string, res *copyResult) error {
	bin := filepath.Join(work, "s3server")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./scripts/s3server").CombinedOutput(); err != nil {
		return fmt.Errorf("building the S3 server: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	const id, secret = "bench-key", "bench-secret-0123456789"
	data := filepath.Join(work, "s3data")
	os.MkdirAll(data, 0o755)
	srv := exec.CommandContext(ctx, bin, "serve", "s3", "--addr", addr, "--auth-key", id+","+secret,
		"--config", "/dev/null", data)
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	for i := 0; dialable(addr) != nil; i++ {
		if i == 100 {
			return fmt.Errorf("the S3 server did not listen on %s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	conf := filepath.Join(work, "copy-s3.conf")
	os.WriteFile(conf, fmt.Appendf(nil, "copy_target = s3+http://%s@%s/bench/bonesync\ncopy_target_password = %s\n", id, addr, secret), 0o600)
	for _, what := range []string{"first copy, S3", "nothing changed, S3"} {
		if err := res.timedRun(ctx, o, "bonesync copy run", what, exec.Command(o.bonesync, "copy", "-state", st, "-config", conf, "-files", files, "run")); err != nil {
			return err
		}
	}
	// Not AWS_CA_BUNDLE: Debian's rclone 1.60 fails with it set.
	env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AWS_CA_BUNDLE=") }),
		"RCLONE_CONFIG=/dev/null", "RCLONE_CONFIG_TGT_TYPE=s3", "RCLONE_CONFIG_TGT_PROVIDER=Other",
		"RCLONE_CONFIG_TGT_ENDPOINT=http://"+addr, "RCLONE_CONFIG_TGT_ACCESS_KEY_ID="+id,
		"RCLONE_CONFIG_TGT_SECRET_ACCESS_KEY="+secret,
		"RCLONE_CONFIG_CR_TYPE=crypt", "RCLONE_CONFIG_CR_REMOTE=tgt:bench/rclone",
		"RCLONE_CONFIG_CR_PASSWORD="+strings.TrimSpace(pass))
	for _, what := range []string{"first copy, S3", "nothing changed, S3"} {
		cmd := exec.Command("rclone", "sync", tree, "cr:current/files/"+copyUser)
		cmd.Env = env
		if err := res.timedRun(ctx, o, "rclone sync (Debian's)", what, cmd); err != nil {
			return err
		}
	}
	return nil
}

// copyBox makes dir a box like prepared (boxLike) with the account
// copyUser, and returns its state and files folders.
func copyBox(ctx context.Context, o *options, prepared, dir string) (st, files string, err error) {
	if err := boxLike(ctx, prepared, dir); err != nil {
		return "", "", err
	}
	st = filepath.Join(dir, "state")
	files = filepath.Join(st, "files") // the default: the server is started without -files
	add := exec.CommandContext(ctx, o.bonesync, "user", "-state", st, "-files", files, "add", copyUser)
	add.Stdin = strings.NewReader(syncPass + "\n")
	if out, err := add.CombinedOutput(); err != nil && !strings.Contains(string(out), "exists") {
		return "", "", fmt.Errorf("user add: %v %s", err, out)
	}
	return st, files, nil
}

// boxLike makes dir a box like prepared, its state (keys, report,
// accounts) and config, without the files other blocks left in its state.
func boxLike(ctx context.Context, prepared, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(filepath.Join(prepared, "state"))
	if err != nil {
		return err
	}
	from := []string{filepath.Join(prepared, "bonesync.conf")}
	for _, e := range entries {
		if e.Name() != "files" {
			from = append(from, filepath.Join(prepared, "state", e.Name()))
		}
	}
	for i, f := range from {
		to := filepath.Join(dir, "state")
		if i == 0 {
			to = dir
		}
		if out, err := exec.CommandContext(ctx, "cp", "-a", f, to).CombinedOutput(); err != nil {
			return fmt.Errorf("copy the prepared %s: %v %s", f, err, out)
		}
	}
	return nil
}

// uploadTree puts the local tree into copyUser's files through the box's
// WebDAV, with rclone (the owncloud dialect: dates by X-OC-Mtime).
func uploadTree(ctx context.Context, o *options, dir, local string) error {
	bs, _, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return err
	}
	defer bs.stop()
	pass, err := exec.CommandContext(ctx, "rclone", "obscure", syncPass).Output()
	if err != nil {
		return fmt.Errorf("rclone obscure: %w", err)
	}
	up := exec.CommandContext(ctx, "rclone", "copy", local, ":webdav:", "--transfers", "4", "--no-check-certificate",
		"--webdav-url", "https://"+bs.addr+"/remote.php/dav/files/"+copyUser, "--webdav-vendor", "owncloud",
		"--webdav-user", copyUser, "--webdav-pass", strings.TrimSpace(string(pass)))
	if out, err := up.CombinedOutput(); err != nil {
		return fmt.Errorf("rclone copy to the box: %v\n%s", err, lastBytes(string(out), 2000))
	}
	return nil
}

// timed runs cmd under GNU time and returns its wall time, CPU (user and
// system) and peak resident set. (The kernel's accounting seen from here
// would not do for the peak: a child started by vfork is charged the
// resident set of this process, which holds the tree it wrote, at exec.)
func timed(ctx context.Context, cmd *exec.Cmd) (copyRun, string, error) {
	var out strings.Builder
	report := filepath.Join(os.TempDir(), fmt.Sprintf("bench-time-%d", time.Now().UnixNano()))
	defer os.Remove(report)
	cmd.Args = append([]string{"/usr/bin/time", "-o", report, "-f", "%e %U %S %M"}, cmd.Args...)
	cmd.Path = "/usr/bin/time"
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return copyRun{}, "", err
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	stop()
	b, rerr := os.ReadFile(report)
	var wall, user, sys float64
	var rss int64
	if _, serr := fmt.Sscanf(lastLine(string(b)), "%f %f %f %d", &wall, &user, &sys, &rss); serr != nil && err == nil {
		err = fmt.Errorf("GNU time's report %q: %v %v", b, serr, rerr)
	}
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	return copyRun{Wall: sec(wall), CPU: sec(user + sys), MaxRSS: rss}, out.String(), err
}

// clientKeyFile writes an ed25519 key for rclone in OpenSSH's format and
// returns its path and its authorized_keys line.
func clientKeyFile(dir string) (string, []byte, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", nil, err
	}
	pemKey, err := openSSHKey(priv)
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(dir, "rclone_ed25519")
	if err := os.WriteFile(p, pemKey, 0o600); err != nil {
		return "", nil, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", nil, err
	}
	return p, ssh.MarshalAuthorizedKey(sp), nil
}

func rcloneVersion(ctx context.Context, bin string) string {
	b, _ := exec.CommandContext(ctx, bin, "version").Output()
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}

// sysrootVersion is a package's version in the armhf sysroot's VERSIONS.
func sysrootVersion(sysroot, pkg string) string {
	b, _ := os.ReadFile(filepath.Join(sysroot, "VERSIONS"))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, pkg+" "); ok {
			return v
		}
	}
	return "version unknown"
}

// lastBytes is the end of a command's output, for an error message.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

var insnTotal = regexp.MustCompile(`total (\d+)`)

// lastTotal is the plugin log's last total, in millions.
func lastTotal(log string) (float64, error) {
	b, err := os.ReadFile(log)
	if err != nil {
		return 0, err
	}
	m := insnTotal.FindAllStringSubmatch(string(b), -1)
	if m == nil {
		return 0, fmt.Errorf("no instruction total in %s", log)
	}
	n, _ := strconv.ParseFloat(m[len(m)-1][1], 64)
	return n / 1e6, nil
}

// copiesARM counts, under qemu-arm, bonesync's armv7 build (with the
// ARM crypto overlay, as the board runs it) copying a smaller tree to the
// same sshd twice, and Debian's armhf rclone doing the same by hand; a
// start that does nothing (version) is taken off each.
func copiesARM(ctx context.Context, o *options, work, port, rcloneKey, pass string, res *copyResult) error {
	plugin, err := armPlugin(ctx, o)
	if err != nil {
		return err
	}
	bin := filepath.Join(work, "bonesync-armv7")
	o.logf("copies: building bonesync for GOARM=7 with the ARM crypto overlay")
	if err := buildArm(ctx, o, bin, "./appliance", true, false); err != nil {
		return err
	}
	res.ARMFiles, res.ARMBytes = o.copyFiles/20, o.copyBytes/20
	dir := filepath.Join(work, "arm")
	st, files, err := copyBox(ctx, o, filepath.Join(work, "box"), dir)
	if err != nil {
		return err
	}
	// Written in place (no server runs on this state): the store has no
	// digests for these files, so this run's digest list is empty.
	tree := filepath.Join(files, copyUser)
	if err := copyTree(tree, res.ARMFiles, res.ARMBytes); err != nil {
		return err
	}
	key, err := exec.CommandContext(ctx, o.bonesync, "copy", "-state", st, "key").Output()
	if err != nil {
		return err
	}
	auth := filepath.Join(work, "sshd", "authorized_keys")
	had, _ := os.ReadFile(auth)
	if err := os.WriteFile(auth, append(had, key...), 0o644); err != nil {
		return err
	}
	conf := filepath.Join(dir, "copy.conf")
	os.WriteFile(conf, fmt.Appendf(nil, "copy_target = sftp://root@127.0.0.1:%s%s\n", port, filepath.Join(dir, "target-bonesync")), 0o644)
	count := func(env []string, args ...string) (float64, error) {
		log := filepath.Join(dir, fmt.Sprintf("plugin-%d.log", time.Now().UnixNano()))
		q := append([]string{"-cpu", "cortex-a8", "-plugin", plugin, "-d", "plugin", "-D", log}, args...)
		cmd := exec.CommandContext(ctx, "qemu-arm", q...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("qemu-arm %s: %v\n%s", strings.Join(args, " "), err, lastBytes(string(out), 2000))
		}
		return lastTotal(log)
	}
	mibs := float64(res.ARMBytes) / (1 << 20)
	o.logf("copies: bonesync under qemu-arm, %d files, %d MiB", res.ARMFiles, res.ARMBytes>>20)
	b := armCopy{Who: "bonesync copy run (armv7, ARM crypto)"}
	if b.Nil, err = count(os.Environ(), bin, "version"); err != nil {
		return err
	}
	run := []string{bin, "copy", "-state", st, "-config", conf, "-files", files, "run"}
	if b.First, err = count(os.Environ(), run...); err != nil {
		return err
	}
	if b.Second, err = count(os.Environ(), run...); err != nil {
		return err
	}
	b.PerMiB, b.PerFile = (b.First-b.Nil)/mibs, (b.Second-b.Nil)*1e6/float64(res.ARMFiles)
	res.ARM = append(res.ARM, b)

	rclone := filepath.Join(o.sysroot, "usr/bin/rclone")
	if _, err := os.Stat(rclone); err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("Debian's armhf rclone not counted: not in the sysroot %s (bench/armhf-sysroot.sh puts it there)", o.sysroot))
		return nil
	}
	o.logf("copies: Debian's armhf rclone under qemu-arm")
	env := append(os.Environ(), "RCLONE_CONFIG=/dev/null",
		"RCLONE_CONFIG_TGT_TYPE=sftp", "RCLONE_CONFIG_TGT_HOST=127.0.0.1", "RCLONE_CONFIG_TGT_PORT="+port,
		"RCLONE_CONFIG_TGT_USER=root", "RCLONE_CONFIG_TGT_KEY_FILE="+rcloneKey,
		// The SFTP options bonesync sets: no shell commands on the target
		// (else rclone probes for one, 25 s here), no remote hash check.
		"RCLONE_CONFIG_TGT_SHELL_TYPE=none", "RCLONE_CONFIG_TGT_DISABLE_HASHCHECK=true",
		"RCLONE_CONFIG_CR_TYPE=crypt", "RCLONE_CONFIG_CR_REMOTE=tgt:"+filepath.Join(dir, "target-rclone"),
		"RCLONE_CONFIG_CR_PASSWORD="+strings.TrimSpace(pass))
	r := armCopy{Who: "rclone sync (Debian's armhf " + sysrootVersion(o.sysroot, "rclone") + ")"}
	if r.Nil, err = count(env, "-L", o.sysroot, rclone, "version"); err != nil {
		return err
	}
	sync := []string{"-L", o.sysroot, rclone, "sync", tree, "cr:current/files/" + copyUser}
	if r.First, err = count(env, sync...); err != nil {
		return err
	}
	if r.Second, err = count(env, sync...); err != nil {
		return err
	}
	r.PerMiB, r.PerFile = (r.First-r.Nil)/mibs, (r.Second-r.Nil)*1e6/float64(res.ARMFiles)
	res.ARM = append(res.ARM, r)
	return nil
}

// markdown writes the copy block.
func (c *copyResult) markdown(w io.Writer) {
	fmt.Fprintf(w, "## Copies off the box: bonesync copy run beside rclone sync, to OpenSSH's SFTP server and to an S3 store\n\n")
	if c.Err != "" {
		fmt.Fprintf(w, "Failed: %s\n\n", c.Err)
	}
	fmt.Fprintf(w, "%d files, %d MiB in all (random bytes, 100 to a folder), encrypted (rclone's crypt) to sshd on loopback. "+
		"The tree is uploaded to the box over WebDAV first (not measured), so the store has each file's digest. The peer is %s, by hand: `rclone sync` of the same folder through a crypt remote, with the SFTP options bonesync "+
		"sets (shell_type none, disable_hashcheck). bonesync also writes the user's digest list and calendars' zip, and opens "+
		"several crypt remotes a run (current files, extra, old), each a 16 MiB scrypt of the password. The S3 runs go to rclone's `serve s3` on loopback "+
		"(scripts/s3server): bonesync through the MinIO client, rclone through its own S3 type. CPU is user and system time of the process; the peak is its resident set.\n\n", c.Files, c.Bytes>>20, c.Rclone)
	fmt.Fprintf(w, "| run | who | wall | CPU | CPU per MiB | peak resident | ratio (CPU) |\n|---|---|---:|---:|---:|---:|---:|\n")
	peer := map[string]copyRun{}
	for _, r := range c.Runs {
		if !strings.HasPrefix(r.Who, "bonesync") {
			peer[r.What] = r
		}
	}
	for _, r := range c.Runs {
		rat := ""
		if p, ok := peer[r.What]; ok && strings.HasPrefix(r.Who, "bonesync") {
			rat = ratio(float64(r.CPU), float64(p.CPU))
		}
		fmt.Fprintf(w, "| %s | %s | %.1f s | %.1f s | %.1f ms | %.1f MiB | %s |\n", r.What, r.Who, r.Wall.Seconds(), r.CPU.Seconds(),
			ms(r.CPU)/(float64(c.Bytes)/(1<<20)), mib(r.MaxRSS), rat)
	}
	if len(c.ARM) > 0 {
		fmt.Fprintf(w, "\nUnder the armcost proxy (qemu-arm, Cortex-A8 model), %d files, %d MiB written in place (no digests stored: bonesync's digest list is empty), a start that does nothing taken off:\n\n", c.ARMFiles, c.ARMBytes>>20)
		fmt.Fprintf(w, "| who | first copy, M instructions per MiB | nothing changed: M instructions (per file) |\n|---|---:|---:|\n")
		for _, a := range c.ARM {
			fmt.Fprintf(w, "| %s | %.1f | %.0f (%.0f) |\n", a.Who, a.PerMiB, a.Second-a.Nil, a.PerFile)
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "\n%s\n", n)
	}
	fmt.Fprintln(w)
}
