// Command bench puts bonesync beside the servers a user would pick instead,
// on this machine, in one run: nginx with OpenSSL for HTTPS and OpenSSH's
// sshd for SFTP, driven by the same Go load generator, and the ARM
// instructions per TLS handshake of both under qemu-arm as the proxy for the
// board. It reports ratios (bonesync / peer) from that one run, as markdown
// on stdout and in -out. Run from the repository root, as root (sshd needs
// it), after bench/deps.sh:
//
//	go run ./bench [-duration 10s] [-clients 8] [-keys ecdsa-p256,ecdsa-p384,rsa-2048]
//
// Steps, in order:
//  1. bonesync's state directories, one per key type, with the embedded
//     benchmark keys as its keys and a first `bonesync bench` (in parallel);
//  2. HTTPS for each key type: nginx and `bonesync serve`, full handshakes
//     then resumed ones, CPU and memory from /proc;
//  3. SSH: sshd and bonesync's SFTP listener, up to a refused login;
//  4. abuse: nginx, sshd and bonesync under idle, slow and login floods,
//     beside a legitimate client (abuse.go);
//  5. sync: an unchanged nextcloudcmd sync, PROPFIND beside Apache's
//     mod_dav, memory during PROPFIND Depth infinity, upload CPU with and
//     without digests (sync.go);
//  6. photos: previews of a 12-megapixel JPEG with and without an EXIF
//     thumbnail, beside djpeg (photos.go);
//  7. ARM instruction counts under qemu-arm with the armcost plugin;
//  8. the report.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/bench/flood"
)

func main() {
	flood.AttackIfAsked() // the process the abuse block's hostile phase starts
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// options are the flags.
type options struct {
	bonesync    string
	out         string
	work        string
	sysroot     string
	armcostDir  string
	keys        []string
	clients     int
	warm, dur   time.Duration
	armN        int
	armServeN   int           // connections a product count makes (armserve.go)
	bonesyncARM string        // the board's binary
	armOnly     string        // one part of the ARM block, or "" for all
	sshClient   *sshClientKey // the ARM block's SSH client key, once made (armClient)
	https, ssh  bool
	sync        bool
	photos      bool
	copies      bool
	probe       bool
	copyFiles   int
	copyBytes   int64
	baseline    string
	abuse       bool
	arm         bool
	keep        bool
	log         io.Writer
}

func (o *options) phase() phase {
	return phase{clients: o.clients, warm: o.warm, dur: o.dur, src: &sources{}}
}

func (o *options) logf(format string, args ...any) {
	fmt.Fprintf(o.log, "bench: "+format+"\n", args...)
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{log: stderr}
	var keyList string
	fs.StringVar(&o.bonesync, "bonesync", "out/bonesync", "the bonesync binary (built as make build does, through the crypto overlay, if missing)")
	fs.StringVar(&o.out, "out", "out/bench.md", "where to write the report too (markdown)")
	fs.StringVar(&keyList, "keys", "ecdsa-p256,ecdsa-p384,rsa-2048", "TLS key types to compare")
	fs.IntVar(&o.clients, "clients", 8, "clients connecting at once")
	fs.DurationVar(&o.dur, "duration", 10*time.Second, "measured time per phase")
	fs.DurationVar(&o.warm, "warmup", time.Second, "unmeasured load before each phase")
	fs.BoolVar(&o.https, "https", true, "compare HTTPS with nginx")
	fs.BoolVar(&o.ssh, "ssh", true, "compare SFTP's SSH handshake with sshd")
	fs.BoolVar(&o.abuse, "abuse", true, "abuse: idle, slow and login floods against nginx, sshd and bonesync")
	fs.BoolVar(&o.sync, "sync", true, "sync figures: nextcloudcmd, PROPFIND beside Apache's mod_dav, upload digests")
	fs.BoolVar(&o.photos, "photos", true, "photo figures: previews of a 12-megapixel JPEG beside djpeg")
	fs.BoolVar(&o.copies, "copies", true, "copies off the box: bonesync copy run beside rclone sync, to sshd")
	fs.BoolVar(&o.probe, "probe", true, "bonesync probe at 1, 10, 50, 100 users: bonesync beside nginx and sshd")
	fs.IntVar(&o.copyFiles, "copy-files", 10000, "files in the copied tree")
	copyMiB := fs.Int64("copy-mib", 1024, "MiB in the copied tree")
	fs.StringVar(&o.baseline, "baseline", "a3b639f", "git revision whose PROPFIND the sync figures compare with (\"\": none); a3b639f is main before the apps' properties")
	fs.BoolVar(&o.arm, "arm", true, "count ARM instructions per handshake under qemu-arm")
	fs.IntVar(&o.armN, "arm-n", 20, "handshakes counted per kind under qemu-arm (the harness's breakdown)")
	fs.IntVar(&o.armServeN, "arm-serve-n", 100, "connections counted per run of the board's binary under qemu-arm")
	fs.StringVar(&o.bonesyncARM, "bonesync-arm", "out/bonesync-armv7", "the board's binary, make build-arm's output (built with the armcrypto overlay if missing)")
	fs.StringVar(&o.armOnly, "arm-only", "", "only these parts of the ARM block, comma-separated: size (the board's binary's size and its largest modules), handshakes, bulk, uploads, serve (the board's binary), photos or profiles (for weighing a change to one)")
	fs.StringVar(&o.sysroot, "sysroot", "out/cache/bench-armhf/sysroot", "armhf sysroot with Debian's nginx (bench/armhf-sysroot.sh)")
	fs.StringVar(&o.armcostDir, "armcost", "../shared/tools/armcost", "the armcost tool (insncount.c)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (configs, logs, state)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	o.copyBytes = *copyMiB << 20
	for _, k := range strings.Split(keyList, ",") {
		if k = strings.TrimSpace(k); k != "" {
			o.keys = append(o.keys, k)
		}
	}
	if o.clients < 1 || o.dur <= 0 || o.armN < 1 || o.copyFiles < 20 || o.copyBytes < 20<<20 {
		return nil, errors.New("-clients, -duration and -arm-n must be positive, -copy-files at least 20 and -copy-mib 20")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if _, err := os.Stat("bench/armcost/main.go"); err != nil {
		return errors.New("run from the repository root: go run ./bench")
	}
	for _, p := range []*string{&o.bonesync, &o.sysroot, &o.armcostDir} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	if os.Geteuid() != 0 && o.ssh {
		return errors.New("run as root: sshd needs it (or pass -ssh=false)")
	}
	if o.work, err = os.MkdirTemp("", "bonesync-bench-"); err != nil {
		return err
	}
	// nginx's workers run as nobody and must reach the files it serves.
	if err := os.Chmod(o.work, 0o755); err != nil {
		return err
	}
	if o.keep {
		o.logf("work directory: %s", o.work)
	} else {
		defer os.RemoveAll(o.work)
	}
	if err := ensureBinary(ctx, o); err != nil {
		return err
	}
	r := &results{Started: time.Now(), Clients: o.clients, Warm: o.warm, Dur: o.dur, Machine: thisMachine(o)}
	var failed []string

	if o.https || o.ssh || o.sync || o.abuse || o.photos || o.copies || o.probe {
		keyTypes := o.keys
		if !o.https {
			keyTypes = []string{"ecdsa-p256"}
		}
		o.logf("preparing bonesync state directories (%s): a first `bonesync bench` each", strings.Join(keyTypes, ", "))
		dirs, err := prepareAll(ctx, o, keyTypes)
		if err != nil {
			return err
		}
		if o.https {
			for _, k := range o.keys {
				h := httpsBlock(ctx, o, k, dirs[k])
				if h.Err != "" {
					failed = append(failed, "https "+k)
					o.logf("https %s failed: %s", k, h.Err)
				}
				if b, err := os.ReadFile(filepath.Join(dirs[k], "state", "ca.crt")); err == nil {
					r.FileBytes = len(b)
				}
				r.HTTPS = append(r.HTTPS, h)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
		if o.ssh {
			s := sshBlock(ctx, o, dirs[keyTypes[0]])
			if s.Err != "" {
				failed = append(failed, "ssh")
				o.logf("ssh failed: %s", s.Err)
			}
			r.SSH = &s
		}
		if o.abuse && ctx.Err() == nil {
			a := abuseBlock(ctx, o, dirs[keyTypes[0]])
			if a.Err != "" {
				failed = append(failed, "abuse")
				o.logf("abuse failed: %s", a.Err)
			}
			r.Abuse = &a
		}
		if o.sync && ctx.Err() == nil {
			s := syncBlock(ctx, o, dirs[keyTypes[0]])
			if s.Err != "" {
				failed = append(failed, "sync")
				o.logf("sync failed: %s", s.Err)
			}
			r.Sync = &s
		}
		if o.photos && ctx.Err() == nil {
			p := photosBlock(ctx, o, dirs[keyTypes[0]])
			if p.Err != "" {
				failed = append(failed, "photos")
				o.logf("photos failed: %s", p.Err)
			}
			r.Photos = &p
		}
		if o.copies && ctx.Err() == nil {
			c := copiesBlock(ctx, o, dirs[keyTypes[0]])
			if c.Err != "" {
				failed = append(failed, "copies")
				o.logf("copies failed: %s", c.Err)
			}
			r.Copies = &c
		}
		if o.probe && ctx.Err() == nil {
			p := probeBlock(ctx, o, dirs[keyTypes[0]])
			if p.Err != "" {
				failed = append(failed, "probe")
				o.logf("probe failed: %s", p.Err)
			}
			r.Probe = &p
		}
	}
	if o.arm && ctx.Err() == nil {
		a := armBlock(ctx, o)
		if a.Err != "" {
			failed = append(failed, "arm")
			o.logf("arm failed: %s", a.Err)
		}
		r.ARM = &a
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.Took = time.Since(r.Started)

	var md strings.Builder
	r.markdown(&md)
	io.WriteString(stdout, md.String())
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, []byte(md.String()), 0o644); err != nil {
		return err
	}
	o.logf("report written to %s", o.out)
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s (see the report)", strings.Join(failed, ", "))
	}
	return nil
}

// ensureBinary builds bonesync as `make build` would (through the crypto
// overlay, without the build stamp) if the binary is missing.
func ensureBinary(ctx context.Context, o *options) error {
	if _, err := os.Stat(o.bonesync); err == nil {
		return nil
	}
	o.logf("building %s (the crypto overlay)", o.bonesync)
	dir, err := cryptoOverlay(ctx, o)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-modfile="+filepath.Join(dir, "go.mod"),
		"-overlay="+filepath.Join(dir, "overlay.json"), "-o", o.bonesync, "./appliance")
	cmd.Stdout, cmd.Stderr = o.log, o.log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build bonesync: %w", err)
	}
	return nil
}

// ensureARMBinary builds the board's binary, as make build-arm does
// (GOARM=7, the armcrypto overlay), if it is missing.
func ensureARMBinary(ctx context.Context, o *options) error {
	if _, err := os.Stat(o.bonesyncARM); err == nil {
		return nil
	}
	o.logf("building %s (GOARM=7, the armcrypto overlay)", o.bonesyncARM)
	return buildArm(ctx, o, o.bonesyncARM, "./appliance", true, false)
}
