// Package server is the composition root of `bonesync serve`: Run binds
// the ports, makes sure the box has its CA, keys and decision (package
// provision), builds the shared services once (services.go), then runs the
// protocols and the background jobs under one group with one shutdown
// path (jobs.go). It holds no protocol and no policy of its own: a new
// protocol is its package, its port (package listen) and its line in
// parts.
package server

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/sysd"
)

// Options are the server's command line.
type Options struct {
	State, Config, Files string
	// Addrs are where the ports listen, by port name (listen.Ports);
	// systemd's sockets, when it passes them, win.
	Addrs map[string]string
	// Quick benchmarks on the small budget.
	Quick bool
	// Hostname replaces the config's (PID 1 passes the name it won).
	Hostname string
	// Refresh is how often a new address, decision or keys is looked for.
	Refresh time.Duration
	// Boot is the card's boot partition (updates), "" off a card.
	Boot string
	// Board is the board PID 1 runs on, "" on a PC or a Debian install.
	Board   string
	Version string
	// LoadGenerator starts the benchmark's client process.
	LoadGenerator  func(ctx context.Context) *exec.Cmd
	Stdout, Stderr io.Writer
}

// Run serves until ctx ends or a part fails, then stops every part.
func Run(ctx context.Context, o Options) error {
	var recent sysd.Recent
	log := sysd.NewLoggerKeeping(o.Stderr, &recent)
	lns, err := listen.Open(o.Addrs)
	if err != nil {
		return err
	}
	defer lns.Close()
	p, err := Provisioning(o, log)
	if err != nil {
		return err
	}
	p.URLs = URLs(p.Config.Hostname, o.Board != "", lns)
	box, err := provision.Ensure(ctx, p)
	if err != nil {
		return err
	}
	if box.Benchmarked {
		box.Report.Console(o.Stdout)
	} else {
		io.WriteString(o.Stdout, report.Summary(box.Report))
	}
	saveClock(p.Clock, log)
	limitMemory()
	s, err := open(o, p, box, lns, log, &recent)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.firstLogin(); err != nil {
		return err
	}
	parts, err := s.parts(lns)
	if err != nil {
		return err
	}
	log.Info("serving HTTPS, HTTP and SFTP", "https", lns.HTTPS.Addr(), "http", lns.HTTP.Addr(), "sftp", lns.SSH.Addr())
	sysd.Ready()
	sysd.Status(fmt.Sprintf("serving with %s (HTTPS) and %s (SFTP)", box.Choice.TLS.Key, box.Choice.SSH.Key))
	return s.stop(runParts(ctx, parts, log))
}
