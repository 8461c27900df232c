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
	"log/slog"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/sysd"
)

// Run serves until ctx ends or a part fails, then stops every part.
func Run(ctx context.Context, o Options) error {
	var recent sysd.Recent
	log := sysd.NewLoggerKeeping(o.Stderr, &recent)
	// What a library writes with the standard log package or slog's
	// default (rclone's copies, net/http's HTTP/2 debugging) goes through
	// the same handler as ours, cut and escaped, not raw to stderr.
	slog.SetDefault(log)
	// One server to a state directory, before any port is taken: a second
	// one is told which process serves it.
	dir, err := state.Open(o.State)
	if err != nil {
		return err
	}
	release, err := dir.Serving()
	if err != nil {
		return err
	}
	defer release()
	lns := o.Listeners
	if lns == nil {
		if lns, err = listen.Open(o.Addrs); err != nil {
			return err
		}
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
	budget.LimitRuntime()
	var s *services
	if o.FilesGone != "" {
		s, err = openWithoutFiles(o, p, box, log)
	} else {
		s, err = open(o, p, box, lns, log, &recent)
	}
	if err != nil {
		return err
	}
	defer s.close()
	parts, err := s.parts(lns)
	if err != nil {
		s.stop(true, nil) // nothing ran: the store closes cleanly
		return err
	}
	log.Info("serving HTTPS, HTTP and SFTP", "https", lns.HTTPS.Addr(), "http", lns.HTTP.Addr(), "sftp", lns.SSH.Addr())
	sysd.Ready(lns.Addrs())
	if o.FilesGone != "" {
		log.Warn("serving no files", "why", o.FilesGone)
		sysd.Status("no files: " + o.FilesGone)
	} else {
		sysd.Status(fmt.Sprintf("serving with %s (HTTPS) and %s (SFTP)", box.Choice.TLS.Key, box.Choice.SSH.Key))
	}
	return s.stop(runParts(ctx, parts, stopGrace, log))
}
