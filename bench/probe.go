package main

// The Monitor's view: `bonesync probe`'s measurement (appliance/probe) of
// bonesync's HTTPS and SFTP beside nginx and OpenSSH's sshd, at 1, 10, 50
// and 100 users connecting at once from one address, each three times in
// turn: connect, handshake and first-byte p50/p95/max and failures, and the
// box's own prediction from its measurement of itself.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bonesync/bonesync/appliance/probe"
)

type probeResult struct {
	Runs []probeRun
	Err  string
}

type probeRun struct {
	Who    string
	Result *probe.Result
}

// probeConf lifts bonesync's per-address flood limits above the top
// level (100 users), so that from one address the levels measure the
// servers, not the limits (nginx has none; sshd's MaxStartups 64 counts
// only the connections it has accepted).
const probeConf = `
waiting_per_address = 128
https_connections_per_address = 256
ssh_connections_per_address = 256
`

func probeBlock(ctx context.Context, o *options, prepared string) probeResult {
	var res probeResult
	if err := probeRun1(ctx, o, prepared, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

func probeRun1(ctx context.Context, o *options, prepared string, res *probeResult) error {
	dir := filepath.Join(o.work, "probe-box")
	if err := boxLike(ctx, prepared, dir); err != nil {
		return err
	}
	conf := filepath.Join(dir, "bonesync.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	f.WriteString(probeConf)
	f.Close()
	st := filepath.Join(dir, "state")
	file, err := os.ReadFile(filepath.Join(st, "ca.crt"))
	if err != nil {
		return err
	}
	ngx, err := startNginx(ctx, filepath.Join(o.work, "nginx-probe"), filepath.Join(st, "tls.crt"), filepath.Join(st, "tls.key"), file)
	if err != nil {
		return err
	}
	defer ngx.stop()
	_, hostKey, err := sshdHostKey()
	if err != nil {
		return err
	}
	sshdDir := filepath.Join(o.work, "sshd-probe")
	os.MkdirAll(sshdDir, 0o755)
	sshd, err := startSSHD(ctx, sshdDir, hostKey)
	if err != nil {
		return err
	}
	defer sshd.stop()
	bs, sftpAddr, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return err
	}
	defer bs.stop()
	report := "https://" + bs.addr + "/report.json"
	for _, t := range []struct{ who, url string }{
		{"bonesync HTTPS", "https://" + bs.addr + "/"},
		{"nginx", "https://" + ngx.addr + "/"},
		{"bonesync SFTP", "sftp://" + sftpAddr},
		{"sshd", "sftp://" + sshd.addr},
	} {
		o.logf("probe: %s", t.who)
		opts := probe.Options{Target: t.url, Users: []int{1, 10, 50, 100}, Rounds: 3}
		if strings.HasPrefix(t.who, "bonesync") {
			opts.ReportURL = report
		} else {
			opts.ReportURL = "http://127.0.0.1:1/none" // a peer has no prediction
		}
		r, err := probe.Run(ctx, opts)
		if err != nil {
			return fmt.Errorf("probe %s: %w", t.who, err)
		}
		res.Runs = append(res.Runs, probeRun{Who: t.who, Result: r})
	}
	return nil
}

func (p *probeResult) markdown(w io.Writer) {
	fmt.Fprintf(w, "## From a laptop: `bonesync probe` at 1, 10, 50 and 100 users at once\n\n")
	if p.Err != "" {
		fmt.Fprintf(w, "Failed: %s\n\n", p.Err)
	}
	fmt.Fprintf(w, "Each user connects three times in turn, all users at once, from one address (loopback), on the same cores as "+
		"the servers; milliseconds from the start of each connection. HTTPS: TLS 1.3, a full handshake each time, one GET of `/`; "+
		"SFTP: to the end of the key exchange (the login offers no method), the first byte being the banner. bonesync's per-address "+
		"flood limits (16 handshakes waiting by default) are lifted above 100 for this block, so the levels measure the servers, not the limits; "+
		"with the defaults, 50 and 100 users from one address that has not logged in are closed beyond 16, as a flood is.\n\n")
	fmt.Fprintf(w, "| server | users | connect p95 | handshake p50 / p95 / max | first byte p95 | failed | handshake p95 ratio |\n|---|---:|---:|---:|---:|---:|---:|\n")
	peer := map[string]*probe.Result{}
	for _, r := range p.Runs {
		if !strings.HasPrefix(r.Who, "bonesync") {
			peer[r.Result.Proto] = r.Result
		}
	}
	for _, r := range p.Runs {
		for i, l := range r.Result.Levels {
			rat := ""
			if pr, ok := peer[r.Result.Proto]; ok && strings.HasPrefix(r.Who, "bonesync") && i < len(pr.Levels) {
				rat = ratio(l.Handshake.P95, pr.Levels[i].Handshake.P95)
			}
			fmt.Fprintf(w, "| %s | %d | %.1f | %.1f / %.1f / %.1f | %.1f | %d of %d | %s |\n", r.Who, l.Users, l.Connect.P95,
				l.Handshake.P50, l.Handshake.P95, l.Handshake.Max, l.FirstByte.P95, l.Failures, l.Users*r.Result.Rounds, rat)
		}
	}
	for _, r := range p.Runs {
		if pr := r.Result.Prediction; pr != nil {
			fmt.Fprintf(w, "\n%s: the box predicted, measuring itself, p95 %.1f ms with 1 client and %.1f ms with %d (key %s, its own loopback).",
				r.Who, pr.P95At1, pr.P95AtN, pr.Concurrency, pr.Key)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}
