// Command bonesync is the whole userland of the bonesync appliance: on first
// start it makes its own certificate authority, measures what TLS and SSH
// handshakes cost on this machine, picks its keys from that, and serves.
//
//	bonesync [serve] [flags]   start (the default)
//	bonesync bench [flags]     measure again, choose again, print the report
//	bonesync report [flags]    print the stored report
//	bonesync user add|passwd|del|list|key add ...
//	bonesync version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/boot"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/server"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/sysd"
)

func main() {
	if os.Getpid() == 1 {
		if Version != "" {
			boot.Version = Version
		}
		boot.Main() // the whole userland of the board; never returns (its server says slowPathNote)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The server's log lines carry their level (sysd.NewLogger: a syslog
	// priority under the journal).
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bonesync: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// usageError is a command line that makes no sense: exit status 2, as
// for any Unix tool.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitCode is 0 for success, 2 for a usage error, 1 for any other failure.
func exitCode(err error) int {
	var u usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// Version is the release, as the .deb carries it: the Makefile sets it
// with -X main.Version=$(VERSION).
var Version string

// armcryptoBuilt is set by a file armcrypto's overlay adds (make
// build-arm): the build has the ARM crypto fast paths.
var armcryptoBuilt bool

// slowPathNote says, once as the server or a benchmark starts, that an ARM build made
// without the overlay (a plain go build, or make build-arm-std) runs Go's
// own crypto: the slow path on the board's 32-bit core.
func slowPathNote(w io.Writer) {
	if runtime.GOARCH == "arm" && !armcryptoBuilt {
		fmt.Fprintln(w, "bonesync: this ARM build has Go's own crypto, not armcrypto's fast paths (X25519, P-256, "+
			"Poly1305, ChaCha20, SHA-1): handshakes and transfers cost more of the board's core; "+
			"make build-arm builds the board's binary with them (docs/benchmarks.md)")
	}
}

// subcommands are the commands that take flags, with the flags each takes.
var subcommands = map[string][]string{
	"serve":        {"state", "config", "files", "files-gone", "listen", "quick", "hostname", "refresh", "boot", "board"},
	"bench":        {"state", "config", "quick"},
	"report":       {"state"},
	"user":         {"state", "files"},
	"check-config": {"state", "config"},
	"backup":       {"state", "files"},
	"restore":      {"state", "files"},
	"copy":         {"state", "config", "files"},
	"probe":        {}, // its own flags: probecmd.go
}

// flags are shared by the subcommands.
type flags struct {
	state, config, files string
	filesGone            string            // why the files cannot be served (PID 1: the data disk is unplugged)
	addrs                map[string]string // by port name (listen.Ports)
	quick                bool
	refresh              time.Duration
	hostname             string
	boot                 string   // the card's boot partition (updates)
	board                string   // the board PID 1 runs on
	args                 []string // the user command's own arguments
}

// parse reads a subcommand's flags (only its own: see subcommands). -h
// prints them and returns flag.ErrHelp; a bad flag is a usageError.
func parse(name string, args []string, stdout io.Writer) (*flags, error) {
	fs := flag.NewFlagSet("bonesync "+name, flag.ContinueOnError)
	var errs strings.Builder
	fs.SetOutput(&errs)
	fs.Usage = func() {}
	f := &flags{}
	// Under systemd, StateDirectory= and ConfigurationDirectory= decide.
	defState, defConfigDir := sysd.Dirs()
	if defState == "" {
		defState = "/var/lib/bonesync"
		// In a checkout where make run made its state (and no service's
		// state is on this machine): that one, so that the commands the
		// console prints work as printed.
		if _, err := os.Stat(defState); err != nil {
			if _, err := os.Stat(filepath.Join(makeRunState, "bonesync.conf")); err == nil {
				defState = makeRunState
			}
		}
	}
	takes := func(flag string) bool { return slices.Contains(subcommands[name], flag) }
	f.refresh = 30 * time.Second
	if takes("state") {
		fs.StringVar(&f.state, "state", defState, "state directory: CA, keys, decision, report")
	} else {
		f.state = defState
	}
	if takes("config") {
		fs.StringVar(&f.config, "config", "", "config file (default: bonesync.conf in the state directory)")
	}
	if takes("files") {
		fs.StringVar(&f.files, "files", "", "the users' files (default: files in the state directory)")
	}
	if takes("files-gone") {
		fs.StringVar(&f.filesGone, "files-gone", "", "serve no files, answering 503 with this reason (PID 1 passes it while the data disk is unplugged)")
	}
	if takes("listen") {
		f.addrs = map[string]string{}
		for _, p := range listen.Ports {
			fs.Func(p.Name, fmt.Sprintf("%s (default %q)", p.Usage, p.Default), func(v string) error { f.addrs[p.Name] = v; return nil })
		}
	}
	if takes("quick") {
		fs.BoolVar(&f.quick, "quick", false, fmt.Sprintf("benchmark on the small budget (%v)", provision.QuickBudget))
	}
	if takes("hostname") {
		fs.StringVar(&f.hostname, "hostname", "", "the box's name, in place of the config's (PID 1 passes the name it won on the network)")
		fs.DurationVar(&f.refresh, "refresh", 30*time.Second, "how often the server looks for a new address, decision or keys")
	}
	if takes("boot") {
		fs.StringVar(&f.boot, "boot", "", "the card's boot partition, where /admin/update writes (PID 1 passes it)")
	}
	if takes("board") {
		fs.StringVar(&f.board, "board", "", "the board this runs on (PID 1 passes it)")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: bonesync %s\n", subcommandUsage(name))
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usagef("%s (bonesync %s -h lists its flags)", strings.TrimSpace(errs.String()), name)
	}
	f.args = fs.Args()
	if len(f.args) > 0 && name != "user" && name != "backup" && name != "restore" && name != "copy" {
		return nil, usagef("unexpected arguments: %v", f.args)
	}
	if f.config == "" {
		f.config = filepath.Join(f.state, "bonesync.conf")
		if defConfigDir == "" {
			if _, err := os.Stat(debianConfig); err == nil {
				// Installed from the .deb, run by hand: its conffile.
				f.config = debianConfig
			}
		} else {
			f.config = filepath.Join(defConfigDir, "bonesync.conf")
		}
	}
	if f.files == "" {
		f.files = filepath.Join(f.state, "files")
	}
	return f, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		switch a := args[0]; {
		case a == "-h" || a == "-help" || a == "--help" || a == "help":
			if len(args) > 1 { // bonesync help user
				if subcommands[args[1]] == nil {
					return usagef("no help on %q: it is not a command (bonesync help lists them)", args[1])
				}
				if args[1] == "probe" {
					return probeCmd(ctx, []string{"-h"}, stdout)
				}
				_, err := parse(args[1], []string{"-h"}, stdout)
				return helped(err)
			}
			fmt.Fprint(stdout, usage)
			return nil
		case a == "-version" || a == "--version" || a == "version":
			fmt.Fprintln(stdout, version())
			return nil
		case a != "" && a[0] != '-':
			cmd, args = a, args[1:]
		}
	}
	switch cmd {
	case "bench-client":
		// The benchmark's load generator, started by the benchmark itself.
		return measure.ServeClient(ctx, stdin, stdout)
	case "probe":
		return probeCmd(ctx, args, stdout)
	case "config-example":
		// Every setting, commented out at its default: the file on the card
		// and in /etc/bonesync.
		fmt.Fprint(stdout, config.Example())
		return nil
	}
	if subcommands[cmd] == nil {
		return usagef("unknown command %q (bonesync help lists them)", cmd)
	}
	if cmd == "user" {
		// Flags first, then the user command: bonesync user -state DIR add bob
		args = reorderUserArgs(args)
	}
	f, err := parse(cmd, args, stdout)
	if err != nil {
		return helped(err)
	}
	if cmd == "user" {
		if err := checkUserWords(f.args); err != nil {
			return err
		}
	}
	if cmd != "serve" && cmd != "check-config" {
		// Only the server makes a state directory: a typo in -state must not
		// quietly make an empty one and list no users.
		if _, err := os.Stat(f.state); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no state directory at %s (start `bonesync serve` first, or pass -state DIR)", f.state)
		} else if err != nil {
			return fmt.Errorf("%w (the state directory is the service's: try sudo)", err)
		}
	}
	switch cmd {
	case "serve":
		slowPathNote(stderr)
		return server.Run(ctx, server.Options{
			State: f.state, Config: f.config, Files: f.files, FilesGone: f.filesGone, Addrs: f.addrs, Quick: f.quick,
			Hostname: f.hostname, Refresh: f.refresh, Boot: f.boot, Board: f.board,
			Version: releaseVersion(), LoadGenerator: loadGenerator, Stdout: stdout, Stderr: stderr, Program: program(),
		})
	case "bench":
		slowPathNote(stderr)
		return rebench(ctx, f, stdout, stderr)
	case "report":
		return printReport(f, stdout)
	case "user":
		return userCmd(f, stdin, stdout, stderr)
	case "check-config":
		return checkConfig(f.config, stdout)
	case "backup":
		return backupCalendars(f, stdout, stderr)
	case "restore":
		return restoreCalendars(f, stdout)
	case "copy":
		return copyCmd(ctx, f, stdin, stdout, stderr)
	}
	return nil
}

// makeRunState is the state directory make run uses.
const makeRunState = "./var"

// program is this binary as the person typed it ("out/bonesync"), for the
// commands printed for them; "bonesync" when it was found on the PATH.
func program() string {
	if p := os.Args[0]; strings.Contains(p, "/") && !filepath.IsAbs(p) {
		return p
	}
	return "bonesync"
}

// debianConfig is the .deb's conffile, the service's config.
const debianConfig = "/etc/bonesync/bonesync.conf"

// checkUserWords refuses an unknown `bonesync user` command as a usage
// error, before anything is opened.
func checkUserWords(args []string) error {
	if len(args) == 0 || !slices.Contains([]string{"add", "passwd", "del", "list", "quota", "key"}, args[0]) {
		return usagef("usage: bonesync user add|passwd|del|list|quota|key add ... (bonesync user -h)")
	}
	return nil
}

// helped turns the -h of a subcommand into success: its flags were printed.
func helped(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// subcommandUsage is the usage lines of one subcommand, for its -h.
func subcommandUsage(name string) string {
	var lines []string
	for _, l := range strings.Split(usage, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "bonesync" && (f[1] == name || name == "serve" && f[1] == "[serve]") {
			lines = append(lines, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "bonesync")))
		}
	}
	if len(lines) == 0 {
		return name + " [flags]"
	}
	return strings.Join(lines, "\n       bonesync ")
}

// checkConfig is `bonesync check-config`, like `sshd -t`: every problem
// of the file, and a failure if there is any.
func checkConfig(path string, stdout io.Writer) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no config file at %s (-config FILE)", path)
	}
	_, probs := config.Load(path)
	for _, p := range probs {
		fmt.Fprintln(stdout, p)
	}
	if len(probs) > 0 {
		return fmt.Errorf("%s: %d problems", path, len(probs))
	}
	fmt.Fprintf(stdout, "%s: OK\n", path)
	return nil
}

const usage = `usage:
  bonesync [serve] [-state DIR] [-config FILE] [-files DIR] [-https ADDR] [-http ADDR] [-ssh ADDR] [-quick]
  bonesync bench   [-state DIR] [-config FILE] [-quick]     measure again and choose again
  bonesync report  [-state DIR]                              print the stored report
  bonesync user [-state DIR] add NAME                        new user (password from the terminal or stdin)
  bonesync user [-state DIR] passwd NAME                     change a password
  bonesync user [-state DIR] del NAME                        remove a user (their files stay)
  bonesync user [-state DIR] list
  bonesync user [-state DIR] quota NAME SIZE                 limit a user's files, calendars and contacts (50G, 500M, 1T or none)
  bonesync user [-state DIR] key add NAME FILE               add SSH public keys (authorized_keys format; - for stdin)
  bonesync check-config [-config FILE]                       check a config file, as sshd -t does
  bonesync backup [-state DIR] USER [FILE]                   a user's calendars (.ics) and address books (.vcf) in one zip
  bonesync restore [-state DIR] USER FILE                    read such a zip back (objects with the same UID are replaced)
  bonesync copy [-state DIR] [-config FILE] run              copy everyone's files, calendars and contacts to copy_target, encrypted
  bonesync copy [-state DIR] [-config FILE] key              the box's SSH public key, for an SFTP target's authorized_keys
  bonesync copy [-state DIR] [-config FILE] accept-key [FP]  pin the SFTP target's new host key, fingerprint FP, that the last run refused
  bonesync copy [-state DIR] [-config FILE] restore          bring a copy back (its password from stdin)
  bonesync probe [-users 1,10,50,100] [-token PASS] URL      from a laptop: connect and first-byte times at once, https:// or sftp://
  bonesync config-example                                    print a config file with every setting
  bonesync version                                           also --version
  bonesync help [COMMAND]                                    also -h; COMMAND -h lists its flags
`

// rebench is `bonesync bench`: measure again, choose again, print the
// report. The running server takes the new decision at its next look.
func rebench(ctx context.Context, f *flags, stdout, stderr io.Writer) error {
	o, err := server.Provisioning(server.Options{State: f.state, Config: f.config, Quick: f.quick, LoadGenerator: loadGenerator},
		sysd.NewLogger(stderr))
	if err != nil {
		return err
	}
	o.Rebench = true
	box, err := provision.Ensure(ctx, o)
	if err != nil {
		return err
	}
	o.Clock.Save()
	return box.Report.Console(stdout)
}

func printReport(f *flags, stdout io.Writer) error {
	dir := &state.Dir{Path: f.state}
	b, err := dir.Read(state.Report)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no report in %s yet: start bonesync or run `bonesync bench`", f.state)
	}
	if err != nil {
		return err
	}
	r, err := report.Parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w (run `bonesync bench` to measure again)", dir.Join(state.Report), err)
	}
	return r.Console(stdout)
}

// loadGenerator starts this same binary as the benchmark's client process.
func loadGenerator(ctx context.Context) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	cmd := exec.CommandContext(ctx, exe, "bench-client")
	cmd.Stderr = os.Stderr
	return cmd
}

// releaseVersion is the version /status.json and the pages report: the
// release as the .deb and the update bundles carry it, else the build's
// (bonesync (devel) and its revision).
func releaseVersion() string {
	if Version != "" {
		return Version
	}
	return version()
}

func version() string {
	if Version != "" {
		return "bonesync " + Version
	}
	v := "bonesync (devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v = "bonesync " + s.Value
			}
		}
		v += " " + bi.GoVersion
	}
	return v
}
