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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

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
}

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
}

type sample struct {
	connect, handshake, first time.Duration
	err                       error
}

// Run probes o.Target at each level in turn.
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
	r := &Result{Target: o.Target, Rounds: o.Rounds}
	var one func(context.Context) sample
	switch u.Scheme {
	case "https":
		r.Proto = "HTTPS"
		one = httpsSample(u, o)
	case "sftp", "ssh":
		r.Proto = "SFTP"
		one = sshSample(u, o)
	default:
		return nil, fmt.Errorf("%s: the probe speaks https:// and sftp://", o.Target)
	}
	r.Prediction, r.Note = predict(ctx, u, o, r.Proto)
	for _, n := range o.Users {
		if n <= 0 {
			return nil, fmt.Errorf("%d users: the levels are positive numbers", n)
		}
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.Levels = append(r.Levels, level(ctx, n, o.Rounds, one))
	}
	return r, nil
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
				}
				l.Failures++
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
// kept), one GET of the URL's path and its first byte.
func httpsSample(u *url.URL, o Options) func(context.Context) sample {
	addr := hostPort(u, "443")
	cfg := &tls.Config{ServerName: u.Hostname(), RootCAs: o.RootCAs, InsecureSkipVerify: o.RootCAs == nil,
		NextProtos: []string{"http/1.1"}}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: bonesync-probe\r\nConnection: close\r\n\r\n"
	return connected(addr, o.Timeout, func(ctx context.Context, conn net.Conn, t0 time.Time) (s sample) {
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return sample{err: fmt.Errorf("TLS handshake: %w", err)}
		}
		s.handshake = time.Since(t0)
		if _, err := io.WriteString(tc, req); err != nil {
			return sample{err: err}
		}
		var b [1]byte
		if _, err := io.ReadFull(tc, b[:]); err != nil {
			return sample{err: fmt.Errorf("the response: %w", err)}
		}
		s.first = time.Since(t0)
		return s
	})
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
			return sample{err: err}
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
func sshSample(u *url.URL, o Options) func(context.Context) sample {
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
			Timeout: o.Timeout,
		}
		c, _, _, err := ssh.NewClientConn(fc, addr, cfg)
		if c != nil {
			c.Close()
		}
		if kexDone == 0 {
			if err == nil {
				err = errors.New("no key exchange")
			}
			return sample{err: fmt.Errorf("SSH handshake: %w", err)}
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

// predict reads a bonesync box's public report: what it measured itself.
func predict(ctx context.Context, u *url.URL, o Options, proto string) (*Prediction, string) {
	ru := o.ReportURL
	if ru == "" {
		if proto != "HTTPS" {
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
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.RootCAs, InsecureSkipVerify: o.RootCAs == nil}}}
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
	rows, d := rep.TLS, rep.Choice.TLS
	if proto == "SFTP" {
		rows, d = rep.SSH, rep.Choice.SSH
	}
	for _, row := range rows {
		if string(row.Key) != d.Key {
			continue
		}
		p := &Prediction{Key: d.Key, Concurrency: rep.Policy.Concurrency, Measured: rep.Machine.Time,
			TargetMs: rep.Policy.TargetMs}
		if row.Full1 != nil {
			p.P95At1 = row.Full1.Latency.P95
		}
		if row.FullN != nil {
			p.P95AtN = row.FullN.Latency.P95
		}
		return p, ""
	}
	return nil, "no prediction: the report has no row for its chosen key"
}

// Text writes the result as a table and a bar chart of the p95s, for a
// terminal 80 columns wide.
func (r *Result) Text(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "%s probe of %s: each user makes %d connections in turn, all users at once; milliseconds\n\n", r.Proto, r.Target, r.Rounds)
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
	for _, l := range r.Levels {
		fmt.Fprintf(b, "%5d  %-22s  %-22s  %-22s  %d of %d\n", l.Users, trip(l.Connect), trip(l.Handshake), trip(l.FirstByte), l.Failures, l.Users*r.Rounds)
	}
	failed := false
	for _, l := range r.Levels {
		if l.Failures > 0 {
			fmt.Fprintf(b, "  at %d users, the first failure: %s\n", l.Users, l.Failure)
			failed = true
		}
	}
	if failed && r.Prediction != nil {
		b.WriteString("  A bonesync box lets 16 handshakes from one address wait at once (waiting_per_address) and closes\n" +
			"  the rest, as it would a flood, unless the address logged in within the last 30 days: from one\n" +
			"  laptop that has not, the higher levels meet that limit.\n")
	}
	// The chart: handshake p95 per level, one row each, scaled to the
	// largest (prediction included).
	top := 0.0
	for _, l := range r.Levels {
		top = max(top, l.Handshake.P95)
	}
	if p := r.Prediction; p != nil {
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
	for _, l := range r.Levels {
		if l.Handshake.N > 0 {
			fmt.Fprintf(b, "%5d %-6s %-*s %.1f\n", l.Users, plural(l.Users), width, bar(l.Handshake.P95), l.Handshake.P95)
		}
	}
	if p := r.Prediction; p != nil {
		fmt.Fprintf(b, "\nThe box predicted, measuring itself (%s, on its own loopback, key %s):\n", p.Measured.Format("2006-01-02 15:04"), p.Key)
		fmt.Fprintf(b, "%5d %-6s %-*s %.1f\n", 1, plural(1), width, bar(p.P95At1), p.P95At1)
		fmt.Fprintf(b, "%5d %-6s %-*s %.1f (its target %.0f ms)\n", p.Concurrency, plural(p.Concurrency), width, bar(p.P95AtN), p.P95AtN, p.TargetMs)
		b.WriteString("What the probe adds is the network between, and this machine's own share of the work.\n")
	} else if r.Note != "" {
		fmt.Fprintf(b, "\n%s\n", r.Note)
	}
	return b.Flush()
}

func plural(n int) string {
	if n == 1 {
		return "user"
	}
	return "users"
}
