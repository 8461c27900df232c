package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/probe"
)

// probeCmd is `bonesync probe URL`, on a laptop: connect, handshake and
// first-byte times at 1, 10, 50 and 100 users at once, against this box
// or any HTTPS or SFTP server, beside what a bonesync box predicted.
func probeCmd(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bonesync probe", flag.ContinueOnError)
	var errs strings.Builder
	fs.SetOutput(&errs)
	users := fs.String("users", "1,10,50,100", "the numbers of users connecting at once, a level each")
	rounds := fs.Int("rounds", 3, "connections each user makes in turn, per level")
	caFile := fs.String("ca", "", "check the HTTPS server's certificate against this CA (PEM); default: not checked (the probe sends no secret)")
	reportURL := fs.String("report", "", "a bonesync box's report.json, for its prediction (default: the HTTPS target's)")
	timeout := fs.Duration("timeout", 30*time.Second, "the longest one connection may take")
	token := fs.String("token", "", "a pass from the box's admin page (Benchmark, Probe from a laptop): this machine passes the box's per-address limits for 10 minutes (or $BONESYNC_PROBE_TOKEN)")
	compare := fs.Bool("compare", false, "run the levels again with each key the box serves (its chosen one and the other family's), each beside its prediction")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: bonesync %s\n", subcommandUsage("probe"))
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return usagef("%s (bonesync probe -h lists its flags)", strings.TrimSpace(errs.String()))
	}
	if fs.NArg() != 1 {
		return usagef("bonesync probe takes one URL: https://HOST[:PORT][/PATH] or sftp://HOST[:PORT]")
	}
	if *token == "" {
		*token = os.Getenv("BONESYNC_PROBE_TOKEN") // kept out of the process list
	}
	o := probe.Options{Target: fs.Arg(0), Rounds: *rounds, Timeout: *timeout, ReportURL: *reportURL, Token: *token, Compare: *compare}
	for _, s := range strings.Split(*users, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return usagef("-users %q: positive numbers, comma-separated", *users)
		}
		o.Users = append(o.Users, n)
	}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return err
		}
		o.RootCAs = x509.NewCertPool()
		if !o.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: no PEM certificate in it", *caFile)
		}
	}
	r, err := probe.Run(ctx, o)
	if err != nil {
		return err
	}
	return r.Text(stdout)
}
