// Package probe measures a server from outside, as a household's devices
// meet it: how long connecting, the handshake and the first byte take when
// 1, 10, 50 and 100 users connect at once, over HTTPS or SFTP, and what
// fails. It is `bonesync probe URL` on a laptop, against this box or any
// other HTTPS or SFTP server (nginx, OpenSSH's sshd), and beside the figures
// it puts what a bonesync box predicted for itself when it last measured
// itself, at its first start or a "measure again" (its public report.json).
package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/report"
)

// Options say what to probe and how hard.
type Options struct {
	// Target is https://HOST[:PORT][/PATH] or sftp://HOST[:PORT].
	Target string
	// Users are the numbers of users connecting at once, a level each
	// (default 1, 10, 50, 100).
	Users []int
	// Rounds is how many connections each user makes in turn (default 3).
	Rounds int
	// Timeout bounds one connection (default 30 s).
	Timeout time.Duration
	// RootCAs checks the HTTPS server's certificate; nil: not checked
	// (the probe sends no secret: one GET, or an SSH login with none).
	RootCAs *x509.CertPool
	// ReportURL is where a bonesync box's public report is read for its
	// prediction; "" takes https://HOST[:PORT]/report.json of an HTTPS
	// target, and none for SFTP.
	ReportURL string
	// Token is a pass from a bonesync box's admin page: shown first, it
	// lets this machine past the box's per-address limits for a while.
	// "": none (the box's limits hold, as for anyone).
	Token string
	// AllowURL is where the pass is shown; "" takes the HTTPS target's
	// host, or ReportURL's for an SFTP target.
	AllowURL string
	// Compare runs the levels once per key the box serves (its chosen
	// key, then the other family's, from its report), each beside its
	// own prediction.
	Compare bool
}

// Level is one number of users' figures, in milliseconds from the start of
// each connection.
type Level struct {
	Users     int
	Connect   measure.Stats // TCP connected
	Handshake measure.Stats // TLS or SSH key exchange done
	FirstByte measure.Stats // HTTPS: the response's first byte; SFTP: the server's banner
	Failures  int
	Failure   string // the first one's error
	// Causes count the failures by cause (TurnedAway, TimedOut, ...),
	// Examples hold the first error of each.
	Causes   map[string]int
	Examples map[string]string
}

// The causes of a failed connection, as the table names them.
const (
	TurnedAway  = "turned away"     // closed before its handshake, or 429: the server's limits
	TimedOut    = "timed out"       // no answer within the timeout
	NoConnect   = "no connection"   // the TCP connection failed
	Handshake   = "handshake error" // TLS or SSH refused or failed
	ServerError = "server error"    // an HTTP 5xx answer
)

// Prediction is what the box measured itself (at its first start, or its
// last "measure again"), on its
// own loopback: the chosen key's p95 connect+handshake with one client
// and with Concurrency at once.
type Prediction struct {
	Key            string
	Concurrency    int
	P95At1, P95AtN float64 // ms
	Measured       time.Time
	TargetMs       float64
}

// Result is a whole probe.
type Result struct {
	Target     string
	Proto      string // "HTTPS" or "SFTP"
	Rounds     int
	Levels     []Level
	Prediction *Prediction // nil: not a bonesync box, or its report unread
	Note       string      // why there is no prediction
	// Allowance is what the box's pass let through (Options.Token); nil:
	// none was shown.
	Allowance *Allowance
	// Compared are the runs per key the box serves (Options.Compare).
	Compared []KeyRun
}

// KeyRun is the levels with one of the box's keys, beside its prediction.
type KeyRun struct {
	Key        string // as the box's report names it ("ecdsa-p256")
	How        string // what held the client to it
	Levels     []Level
	Prediction *Prediction
}

// Allowance is what a bonesync box's pass let this machine do
// (status.ProbeAllowance, as JSON).
type Allowance struct {
	Address     string    `json:"address"`
	Until       time.Time `json:"until"`
	Connections int       `json:"connections"`
}

type sample struct {
	connect, handshake, first time.Duration
	err                       error
	cause                     string // what err came of (TurnedAway...)
}

// failed is a sample that failed of cause.
func failed(cause string, err error) sample {
	if timedOut(err) {
		cause = TimedOut
	}
	return sample{err: err, cause: cause}
}

// timedOut says whether err is a deadline's.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// closedEarly says whether err is the server closing the connection on
// us: what a server's limits do to a connection they will not serve.
func closedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Run probes o.Target at each level in turn; with o.Compare, again once
// per key the box serves.
func Run(ctx context.Context, o Options) (*Result, error) {
	u, err := url.Parse(o.Target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not https://HOST[:PORT][/PATH] or sftp://HOST[:PORT]", o.Target)
	}
	if len(o.Users) == 0 {
		o.Users = []int{1, 10, 50, 100}
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	for _, n := range o.Users {
		if n <= 0 {
			return nil, fmt.Errorf("%d users: the levels are positive numbers", n)
		}
	}
	r := &Result{Target: o.Target, Rounds: o.Rounds}
	switch u.Scheme {
	case "https":
		r.Proto = "HTTPS"
	case "sftp", "ssh":
		r.Proto = "SFTP"
	default:
		return nil, fmt.Errorf("%s: the probe speaks https:// and sftp://", o.Target)
	}
	if o.Token != "" {
		if r.Allowance, err = allow(ctx, u, o); err != nil {
			return nil, err
		}
	}
	rep, note := readReport(ctx, u, o)
	r.Prediction, r.Note = predict(rep, r.Proto, ""), note
	if r.Prediction == nil && r.Note == "" {
		r.Note = "no prediction: the report has no row for its chosen key"
	}
	if r.Levels, err = levels(ctx, o, sampler(u, o, r.Proto, "")); err != nil {
		return r, err
	}
	if !o.Compare {
		return r, nil
	}
	if rep == nil {
		return r, fmt.Errorf("comparing the box's keys needs its report: %s", note)
	}
	for _, key := range servedKeys(rep, r.Proto) {
		run := KeyRun{Key: key, How: holdTo(r.Proto), Prediction: predict(rep, r.Proto, key)}
		if run.Levels, err = levels(ctx, o, sampler(u, o, r.Proto, key)); err != nil {
			return r, err
		}
		r.Compared = append(r.Compared, run)
	}
	return r, nil
}

// levels runs o's levels in turn with one.
func levels(ctx context.Context, o Options, one func(context.Context) sample) ([]Level, error) {
	var out []Level
	for _, n := range o.Users {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out = append(out, level(ctx, n, o.Rounds, one))
	}
	return out, nil
}

// level runs n users at once, each making rounds connections in turn; they
// start together, as the users of a household at the hour a sync runs.
func level(ctx context.Context, n, rounds int, one func(context.Context) sample) Level {
	samples := make([][]sample, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range rounds {
				samples[i] = append(samples[i], one(ctx))
			}
		}()
	}
	close(start)
	wg.Wait()
	l := Level{Users: n}
	var c, h, f []float64
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, user := range samples {
		for _, s := range user {
			if s.err != nil {
				if l.Failures == 0 {
					l.Failure = s.err.Error()
					l.Causes, l.Examples = map[string]int{}, map[string]string{}
				}
				l.Failures++
				if l.Causes[s.cause]++; l.Examples[s.cause] == "" {
					l.Examples[s.cause] = s.err.Error()
				}
				continue
			}
			c, h, f = append(c, ms(s.connect)), append(h, ms(s.handshake)), append(f, ms(s.first))
		}
	}
	l.Connect, l.Handshake, l.FirstByte = measure.Summarise(c), measure.Summarise(h), measure.Summarise(f)
	return l
}

func hostPort(u *url.URL, port string) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// httpsSample is one connection: TCP, a full TLS handshake (no session
// kept), one GET of the URL's path and its first byte, and its status: a
// 429 is the server's limits, a 5xx the server's error. suites, if any,
// hold the handshake to TLS 1.2 and those suites (which name the
// certificate's key: Compare).
func httpsSample(u *url.URL, o Options, suites []uint16) func(context.Context) sample {
	addr := hostPort(u, "443")
	cfg := &tls.Config{ServerName: u.Hostname(), RootCAs: o.RootCAs, InsecureSkipVerify: o.RootCAs == nil,
		NextProtos: []string{"http/1.1"}}
	if suites != nil {
		cfg.MaxVersion, cfg.CipherSuites = tls.VersionTLS12, suites
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: bonesync-probe\r\nConnection: close\r\n\r\n"
	return connected(addr, o.Timeout, func(ctx context.Context, conn net.Conn, t0 time.Time) (s sample) {
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			cause := Handshake
			if closedEarly(err) {
				cause = TurnedAway
			}
			return failed(cause, fmt.Errorf("TLS handshake: %w", err))
		}
		s.handshake = time.Since(t0)
		if _, err := io.WriteString(tc, req); err != nil {
			return failed(ServerError, err)
		}
		br := bufio.NewReader(tc)
		if _, err := br.Peek(1); err != nil {
			return failed(ServerError, fmt.Errorf("the response: %w", err))
		}
		s.first = time.Since(t0)
		line, err := br.ReadString('\n')
		if err != nil {
			return failed(ServerError, fmt.Errorf("the response's status: %w", err))
		}
		switch code := statusCode(line); {
		case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
			return failed(TurnedAway, fmt.Errorf("the server answered %s", strings.TrimSpace(line)))
		case code >= 500 || code == 0:
			return failed(ServerError, fmt.Errorf("the server answered %q", strings.TrimSpace(line)))
		}
		return s
	})
}

// statusCode is the code of an HTTP/1.1 status line (0: none).
func statusCode(line string) int {
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// connected is a sample that dials addr, all of it within timeout, and
// hands the connection and its start to rest; it adds the connect time.
func connected(addr string, timeout time.Duration, rest func(ctx context.Context, conn net.Conn, t0 time.Time) sample) func(context.Context) sample {
	return func(ctx context.Context) sample {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		t0 := time.Now()
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return failed(NoConnect, err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(timeout))
		connect := time.Since(t0)
		s := rest(ctx, conn, t0)
		s.connect = connect
		return s
	}
}

// sshSample is one connection: TCP, the server's banner (its first byte),
// and the key exchange, ending at the login, where the probe offers no
// credentials (method "none", which no server counts as a failed login).
// hostKeys, if any, are the host key algorithms offered (Compare).
func sshSample(u *url.URL, o Options, hostKeys []string) func(context.Context) sample {
	addr := hostPort(u, "22")
	return connected(addr, o.Timeout, func(_ context.Context, conn net.Conn, t0 time.Time) (s sample) {
		fc := &firstRead{Conn: conn, t0: t0}
		var kexDone time.Duration
		cfg := &ssh.ClientConfig{
			User: "bonesync-probe",
			HostKeyCallback: func(string, net.Addr, ssh.PublicKey) error {
				kexDone = time.Since(t0) // the server's signature checked: the exchange is done
				return nil
			},
			Timeout:           o.Timeout,
			HostKeyAlgorithms: hostKeys,
		}
		c, _, _, err := ssh.NewClientConn(fc, addr, cfg)
		if c != nil {
			c.Close()
		}
		if kexDone == 0 {
			if err == nil {
				err = errors.New("no key exchange")
			}
			cause := Handshake
			if closedEarly(err) {
				cause = TurnedAway
			}
			return failed(cause, fmt.Errorf("SSH handshake: %w", err))
		}
		s.handshake, s.first = kexDone, fc.first
		return s
	})
}

// firstRead notes when the first bytes arrived.
type firstRead struct {
	net.Conn
	t0    time.Time
	first time.Duration
}

func (f *firstRead) Read(b []byte) (int, error) {
	n, err := f.Conn.Read(b)
	if n > 0 && f.first == 0 {
		f.first = time.Since(f.t0)
	}
	return n, err
}

// readReport reads a bonesync box's public report: what it measured
// itself. nil, and why not, when there is none.
func readReport(ctx context.Context, u *url.URL, o Options) (*report.Report, string) {
	ru := o.ReportURL
	if ru == "" {
		if u.Scheme != "https" {
			return nil, "no prediction: for an SFTP target, -report https://HOST[:PORT]/report.json names the box's report"
		}
		ru = "https://" + u.Host + "/report.json"
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ru, nil)
	if err != nil {
		return nil, "no prediction: " + err.Error()
	}
	client := o.client()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, "no prediction: " + err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Sprintf("no prediction: reading %s: %v", ru, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Sprintf("no prediction: %s answered %s (not a bonesync box?)", ru, resp.Status)
	}
	rep, err := report.Parse(body)
	if err != nil {
		return nil, "no prediction: " + ru + " is not a bonesync report: " + err.Error()
	}
	return rep, ""
}

// client is the probe's HTTPS client for the box's report and its pass.
func (o Options) client() *http.Client {
	return &http.Client{Timeout: o.Timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.RootCAs, InsecureSkipVerify: o.RootCAs == nil}}}
}

// predict is what the box's report says of key ("": its chosen one) for
// proto: its p95 with one client and with its Concurrency at once; nil
// when the report has no such row.
func predict(rep *report.Report, proto, key string) *Prediction {
	if rep == nil {
		return nil
	}
	rows, chosen := rep.TLS, rep.Choice.TLS.Key
	if proto == "SFTP" {
		rows, chosen = rep.SSH, rep.Choice.SSH.Key
	}
	if key == "" {
		key = chosen
	}
	for _, row := range rows {
		if string(row.Key) != key {
			continue
		}
		p := &Prediction{Key: key, Concurrency: rep.Policy.Concurrency, Measured: rep.Machine.Time,
			TargetMs: rep.Policy.TargetMs}
		if row.Full1 != nil {
			p.P95At1 = row.Full1.Latency.P95
		}
		if row.FullN != nil {
			p.P95AtN = row.FullN.Latency.P95
		}
		return p
	}
	return nil
}

// servedKeys are the keys the box serves for proto: its chosen one, then
// the other family's, which clients without the first get.
func servedKeys(rep *report.Report, proto string) []string {
	one, other := rep.Choice.TLS.Key, rep.Choice.TLSOther.Key
	if proto == "SFTP" {
		one, other = rep.Choice.SSH.Key, rep.Choice.SSHOther.Key
	}
	if other == "" {
		return []string{one}
	}
	return []string{one, other}
}

// sampler is one connection of proto, held to key when key is set: over
// HTTPS, TLS 1.2 with the suites of key's family (the one version in which
// a client names the certificate's key); over SSH, key's host key
// algorithms.
func sampler(u *url.URL, o Options, proto, key string) func(context.Context) sample {
	if proto == "SFTP" {
		var algos []string
		if t, ok := keys.Lookup(keys.Name(key)); ok {
			algos = t.SSHSignatures
		}
		return sshSample(u, o, algos)
	}
	return httpsSample(u, o, familySuites(key))
}

// familySuites are the TLS 1.2 suites that take a certificate of key's
// family; nil for none or the box's choice.
func familySuites(key string) []uint16 {
	t, ok := keys.Lookup(keys.Name(key))
	switch {
	case !ok:
		return nil
	case t.Family == "rsa":
		return []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}
	default:
		return []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
	}
}

// holdTo says how the client was held to one key of the box's.
func holdTo(proto string) string {
	if proto == "SFTP" {
		return "its host key algorithms only"
	}
	return "TLS 1.2 with its family's suites only"
}

// allow shows the box the pass (Options.Token) and reads what it lets
// through.
func allow(ctx context.Context, u *url.URL, o Options) (*Allowance, error) {
	au := o.AllowURL
	if au == "" {
		base := u
		if u.Scheme != "https" {
			ru, err := url.Parse(o.ReportURL)
			if o.ReportURL == "" || err != nil {
				return nil, errors.New("the pass: for an SFTP target, -report https://HOST[:PORT]/report.json names the box that takes it")
			}
			base = ru
		}
		au = "https://" + base.Host + "/probe/allow"
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, au, nil)
	if err != nil {
		return nil, fmt.Errorf("the pass: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+o.Token)
	client := o.client()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the pass: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // dropped: a short body says what it can
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the pass: %s answered %s: %s", au, resp.Status, strings.TrimSpace(string(body)))
	}
	var a Allowance
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("the pass: %s: %w", au, err)
	}
	return &a, nil
}

// Text writes the result as a table and a bar chart of the p95s, for a
// terminal 80 columns wide, then the runs per key (Compare).
func (r *Result) Text(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "%s probe of %s: each user makes %d connection(s) in turn, all users at once; milliseconds\n", r.Proto, r.Target, r.Rounds)
	if a := r.Allowance; a != nil {
		fmt.Fprintf(b, "The box let %s past its per-address limits until %s, for %d connections (a pass from its admin page).\n",
			a.Address, a.Until.Local().Format("15:04"), a.Connections)
	}
	b.WriteString("\n")
	r.table(b, r.Levels)
	r.failures(b, r.Levels)
	r.chart(b, r.Levels, r.Prediction)
	if r.Prediction == nil && r.Note != "" {
		fmt.Fprintf(b, "\n%s\n", r.Note)
	}
	for _, run := range r.Compared {
		fmt.Fprintf(b, "\n%s with the box's %s key (the client held to %s):\n", r.Proto, run.Key, run.How)
		r.table(b, run.Levels)
		r.failures(b, run.Levels)
		r.chart(b, run.Levels, run.Prediction)
	}
	return b.Flush()
}

// table writes one run's levels.
func (r *Result) table(b *bufio.Writer, levels []Level) {
	first := "first byte"
	if r.Proto == "SFTP" {
		first = "banner"
	}
	fmt.Fprintf(b, "%5s  %-22s  %-22s  %-22s  %s\n", "users", "connect p50/p95/max", "handshake p50/p95/max", first+" p50/p95/max", "failed")
	trip := func(s measure.Stats) string {
		if s.N == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f/%.1f/%.1f", s.P50, s.P95, s.Max)
	}
	for _, l := range levels {
		fmt.Fprintf(b, "%5d  %-22s  %-22s  %-22s  %d of %d\n", l.Users, trip(l.Connect), trip(l.Handshake), trip(l.FirstByte), l.Failures, l.Users*r.Rounds)
	}
}

// causes are the failures' causes in the order the table says them.
var causes = []string{TurnedAway, TimedOut, NoConnect, Handshake, ServerError}

// failures writes the failures by cause at each level, and says what is
// known of the causes seen: only what is true of this target.
func (r *Result) failures(b *bufio.Writer, levels []Level) {
	seen := map[string]bool{}
	for _, l := range levels {
		if l.Failures == 0 {
			continue
		}
		var parts []string
		for _, c := range causes {
			if n := l.Causes[c]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, c))
				seen[c] = true
			}
		}
		fmt.Fprintf(b, "  at %d %s: %s\n", l.Users, plural(l.Users), strings.Join(parts, ", "))
		for _, c := range causes {
			if e := l.Examples[c]; e != "" {
				fmt.Fprintf(b, "    %s, the first: %s\n", c, e)
			}
		}
	}
	if seen[TurnedAway] {
		switch {
		case r.Prediction == nil:
			b.WriteString("  Turned away: the server closed these before their handshake, or answered 429 or 503: its limits.\n")
		case r.Allowance == nil:
			b.WriteString("  Turned away: a bonesync box serves so many connections from one address at once, and lets so many\n" +
				"  wait in their handshake (https_connections_per_address, ssh_connections_per_address and\n" +
				"  waiting_per_address in its config); it closes the rest, as it would a flood from one machine. To\n" +
				"  measure the box rather than that limit, make a pass on its admin page (Benchmark, Probe from a\n" +
				"  laptop) and run: bonesync probe -token PASS ...\n")
		default:
			b.WriteString("  Turned away although the pass was shown: its allowance ran out (connections or time), or the\n" +
				"  box's limits for all addresses together held (512 handshakes waiting per port, and the bans of\n" +
				"  addresses that failed logins), or it answered 503 while its memory was taken.\n")
		}
	}
	if seen[TimedOut] {
		b.WriteString("  Timed out: no answer within -timeout; the server or the network did not keep up.\n")
	}
}

// chart writes the handshake p95 per level, scaled to the largest,
// beside the prediction if there is one.
func (r *Result) chart(b *bufio.Writer, levels []Level, p *Prediction) {
	top := 0.0
	for _, l := range levels {
		top = max(top, l.Handshake.P95)
	}
	if p != nil {
		top = max(top, p.P95At1, p.P95AtN)
	}
	const width = 50
	bar := func(v float64) string {
		if top == 0 {
			return ""
		}
		return strings.Repeat("#", max(int(v/top*width+0.5), 1))
	}
	fmt.Fprintf(b, "\nhandshake p95 (connect included)\n")
	for _, l := range levels {
		if l.Handshake.N > 0 {
			fmt.Fprintf(b, "%5d %-6s %-*s %.1f\n", l.Users, plural(l.Users), width, bar(l.Handshake.P95), l.Handshake.P95)
		}
	}
	if p != nil {
		fmt.Fprintf(b, "\nThe box predicted, measuring itself (%s, on its own loopback, key %s):\n", p.Measured.Format("2006-01-02 15:04"), p.Key)
		fmt.Fprintf(b, "%5d %-6s %-*s %.1f\n", 1, plural(1), width, bar(p.P95At1), p.P95At1)
		fmt.Fprintf(b, "%5d %-6s %-*s %.1f (its target %.0f ms)\n", p.Concurrency, plural(p.Concurrency), width, bar(p.P95AtN), p.P95AtN, p.TargetMs)
		b.WriteString("What the probe adds is the network between, and this machine's own share of the work.\n")
	}
}

func plural(n int) string {
	if n == 1 {
		return "user"
	}
	return "users"
}
