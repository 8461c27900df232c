package main

// The Monitor's view: `bonesync probe`'s measurement (appliance/probe) of
// bonesync's HTTPS and SFTP beside nginx and OpenSSH's sshd, at 1, 10, 50
// and 100 users connecting at once from one address, each three times in
// turn: connect, handshake and first-byte p50/p95/max and failures, and the
// box's own prediction from its measurement of itself.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

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

// probeAdmin is the admin password the block sets, to make a probe pass
// on the admin page as the owner does: with it, one address passes the
// box's per-address limits (which nginx does not have; sshd's MaxStartups
// 64 counts only the connections it has accepted), and the levels
// measure the servers, not the limits.
const probeAdmin = "probe-admin-password"

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
	// The admin's password as an owner sets it before the first start
	// (admin_password, which the box takes and blanks).
	conf := filepath.Join(dir, "bonesync.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\nadmin_password = %q\n", probeAdmin)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the admin's password in %s: %w", conf, err)
	}
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
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(file)
	pass, err := probePass(ctx, "https://"+bs.addr, roots)
	if err != nil {
		return err
	}
	for _, t := range []struct{ who, url string }{
		{"bonesync HTTPS", "https://" + bs.addr + "/"},
		{"nginx", "https://" + ngx.addr + "/"},
		{"bonesync SFTP", "sftp://" + sftpAddr},
		{"sshd", "sftp://" + sshd.addr},
	} {
		o.logf("probe: %s", t.who)
		opts := probe.Options{Target: t.url, Users: []int{1, 10, 50, 100}, Rounds: 3}
		if strings.HasPrefix(t.who, "bonesync") {
			opts.ReportURL, opts.Token = report, pass
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
		"SFTP: to the end of the key exchange (the login offers no method), the first byte being the banner. bonesync runs with its "+
		"default limits (16 connections waiting in their handshake per address) and the probe shows a pass made on its admin page "+
		"(`bonesync probe -token`), which lets this one address past them for 10 minutes, so the levels measure the servers, not the limits; "+
		"without it, 50 and 100 users from one address are closed beyond 16, as a flood is. Failures are counted by cause.\n\n")
	fmt.Fprintf(w, "| server | users | connect p95 | handshake p50 / p95 / max | first byte p95 | failed (by cause) | handshake p95 ratio |\n|---|---:|---:|---:|---:|---:|---:|\n")
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
			fmt.Fprintf(w, "| %s | %d | %.1f | %.1f / %.1f / %.1f | %.1f | %d of %d%s | %s |\n", r.Who, l.Users, l.Connect.P95,
				l.Handshake.P50, l.Handshake.P95, l.Handshake.Max, l.FirstByte.P95, l.Failures, l.Users*r.Result.Rounds, byCause(l), rat)
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

// byCause is a level's failures by cause, " (3 timed out)"; "" for none.
func byCause(l probe.Level) string {
	var parts []string
	for c, n := range l.Causes {
		parts = append(parts, fmt.Sprintf("%d %s", n, c))
	}
	if len(parts) == 0 {
		return ""
	}
	slices.Sort(parts)
	return " (" + strings.Join(parts, ", ") + ")"
}

// probePass logs in to the box at base as its admin and makes a probe
// pass on the admin page, as the owner does.
func probePass(ctx context.Context, base string, roots *x509.CertPool) (string, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer c.CloseIdleConnections()
	csrf := regexp.MustCompile(`name="csrf" (?:value|content)="([^"]+)"`)
	page := func(method, path string, form url.Values) (string, error) {
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(form.Encode()))
		if err != nil {
			return "", err
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s %s: %s", method, path, resp.Status)
		}
		return string(b), err
	}
	login, err := page("GET", "/login", nil)
	m := csrf.FindStringSubmatch(login)
	if err != nil || m == nil {
		return "", fmt.Errorf("the login page: %v", err)
	}
	admin, err := page("POST", "/login", url.Values{"csrf": {m[1]}, "username": {"admin"}, "password": {probeAdmin}, "next": {"/admin/"}})
	if m = csrf.FindStringSubmatch(admin); err != nil || m == nil {
		return "", fmt.Errorf("log in as the admin: %v", err)
	}
	done, err := page("POST", "/admin/", url.Values{"csrf": {m[1]}, "action": {"probe-pass"}})
	t := regexp.MustCompile(`bonesync probe -token ([A-Z2-7]+) `).FindStringSubmatch(done)
	if err != nil || t == nil {
		return "", fmt.Errorf("the admin page's probe pass: %v", err)
	}
	return t[1], nil
}
