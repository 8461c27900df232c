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
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/bench"
	"github.com/bonesync/bonesync/appliance/boot"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/sysd"
)

func main() {
	if os.Getpid() == 1 {
		boot.Main() // the whole userland of the board; never returns
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The server's log lines carry their level (sysd.NewLogger: a syslog
	// priority under the journal).
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bonesync: %v\n", err)
		os.Exit(1)
	}
}

// flags are shared by the subcommands.
type flags struct {
	state, config, files string
	https, http, ssh     string
	quick                bool
	refresh              time.Duration
	hostname             string
	args                 []string // the user command's own arguments
}

func parse(name string, args []string, stderr io.Writer) (*flags, error) {
	fs := flag.NewFlagSet("bonesync "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{}
	// Under systemd, StateDirectory= and ConfigurationDirectory= decide.
	defState, defConfigDir := sysd.Dirs()
	if defState == "" {
		defState = "/var/lib/bonesync"
	}
	fs.StringVar(&f.state, "state", defState, "state directory: CA, keys, decision, report")
	fs.StringVar(&f.config, "config", "", "config file (default: bonesync.conf in the state directory)")
	fs.StringVar(&f.files, "files", "", "the users' files (default: files in the state directory)")
	fs.StringVar(&f.https, "https", ":443", "HTTPS listen address")
	fs.StringVar(&f.http, "http", ":80", "plain-HTTP listen address (CA download and redirect only)")
	fs.StringVar(&f.ssh, "ssh", ":22", "SFTP listen address")
	fs.BoolVar(&f.quick, "quick", false, fmt.Sprintf("benchmark on the small budget (%v)", quickBudget()))
	fs.StringVar(&f.hostname, "hostname", "", "the box's name, in place of the config's (PID 1 passes the name it won on the network)")
	fs.DurationVar(&f.refresh, "refresh", 30*time.Second, "how often the server looks for a new address, decision or keys")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.args = fs.Args()
	if len(f.args) > 0 && name != "user" {
		return nil, fmt.Errorf("unexpected arguments: %v", f.args)
	}
	if f.config == "" {
		f.config = filepath.Join(f.state, "bonesync.conf")
		if defConfigDir != "" {
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
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "bench-client":
		// The benchmark's load generator, started by the benchmark itself.
		return bench.ServeClient(ctx, stdin, stdout)
	case "version":
		fmt.Fprintln(stdout, version())
		return nil
	case "config-example":
		// Every setting, commented out at its default: the file on the card
		// and in /etc/bonesync.
		fmt.Fprint(stdout, config.Example())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	if cmd == "user" {
		// Flags first, then the user command: bonesync user -state DIR add bob
		args = reorderUserArgs(args)
	}
	f, err := parse(cmd, args, stderr)
	if err != nil {
		return err
	}
	switch cmd {
	case "serve":
		return serve(ctx, f, stdout, stderr)
	case "bench":
		return rebench(ctx, f, stdout, stderr)
	case "report":
		return printReport(f, stdout)
	case "user":
		return userCmd(f, stdin, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q (want serve, bench, report, user or version)", cmd)
}

const usage = `usage:
  bonesync [serve] [-state DIR] [-config FILE] [-files DIR] [-https ADDR] [-http ADDR] [-ssh ADDR] [-quick]
  bonesync bench   [-state DIR] [-config FILE] [-quick]     measure again and choose again
  bonesync report  [-state DIR]                              print the stored report
  bonesync user [-state DIR] add NAME                        new user (password from the terminal or stdin)
  bonesync user [-state DIR] passwd NAME                     change a password
  bonesync user [-state DIR] del NAME                        remove a user (their files stay)
  bonesync user [-state DIR] list
  bonesync user [-state DIR] key add NAME FILE               add SSH public keys (authorized_keys format; - for stdin)
  bonesync config-example                                    print a config file with every setting
  bonesync version
`

// loadConfig reads the config file and reports its problems, never failing.
func loadConfig(path string, log *slog.Logger) config.Config {
	c, probs := config.Load(path)
	for _, p := range probs {
		log.Warn(fmt.Sprintf("config: %s", p))
	}
	return c
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

func version() string {
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
