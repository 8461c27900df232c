package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/bench/flood"
)

// The abuse phase: each server under the floods of issue 10, one at a time,
// while one legitimate client from another address opens a connection after
// another (a full TLS handshake and GET, or an SSH key exchange up to a
// refused public key, as in the HTTPS and SSH blocks).
const (
	floodIdle   = 1000 // idle connections held from 127.0.0.2
	floodSlow   = 500  // connections sending a byte every 3 s from 127.0.0.2
	floodLogins = 20   // addresses guessing passwords at once
	// The distributed flood: so many addresses, each holding the per-address
	// caps (waiting_per_address) idle and slow, reconnecting at once.
	floodAddrs     = 64
	floodAddrIdle  = 8
	floodAddrSlow  = 8
	floodAddrRetry = 500 * time.Millisecond
	abuseUser      = "admin"
	// Hostile calendar PUTs (bonesync only: the peers have no CalDAV):
	// so many clients at once, each alternating an 800 KB object of
	// 40,000 nested components (refused before it is parsed) and the
	// largest object taken (1,000 components), over and over.
	floodCalendars       = 4
	calUser, calPassword = "hostile", "hostile-password"
)

// abuseRow is one server under one flood.
type abuseRow struct {
	Server, Flood string
	OK, Failed    int
	P95           time.Duration
	PeakPSSKB     int64  // of the server's process tree, sampled every 100 ms
	Guesses       int64  // failed logins tried, for the login flood
	Hostile       int64  // hostile calendar PUTs answered, for that flood
	PeakHWMKB     int64  // bonesync's own VmHWM over the phase (0: a peer's)
	Attack        string // the combined attack's answers, for that flood
}

type abuseResult struct {
	Rows []abuseRow
	Err  string
}

func abuseBlock(ctx context.Context, o *options, dir string) abuseResult {
	var res abuseResult
	if err := abuseRun(ctx, o, dir, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

func abuseRun(ctx context.Context, o *options, dir string, res *abuseResult) error {
	st := filepath.Join(dir, "state")
	file, err := os.ReadFile(filepath.Join(st, "ca.crt"))
	if err != nil {
		return err
	}
	ngx, err := startNginx(ctx, filepath.Join(o.work, "nginx-abuse"), filepath.Join(st, "tls.crt"), filepath.Join(st, "tls.key"), file)
	if err != nil {
		return err
	}
	defer ngx.stop()
	peer, err := startSSHPeer(ctx, o, "sshd-abuse")
	if err != nil {
		return err
	}
	sshd, client, hostPub := peer.sshd, peer.client, peer.hostPub
	defer sshd.stop()
	add := exec.CommandContext(ctx, o.bonesync, "user", "-state", st, "add", calUser)
	add.Stdin = strings.NewReader(calPassword + "\n")
	if out, err := add.CombinedOutput(); err != nil && !strings.Contains(string(out), "exists") {
		return fmt.Errorf("user add %s: %v %s", calUser, err, out)
	}
	bs, sftpAddr, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return err
	}
	defer bs.stop()
	targets := []abuseTarget{
		{"nginx", ngx, ngx.addr, httpsGet(ngx.addr, tlsClient(false), file), flood.TLSPrefix,
			func(ctx context.Context, from string) error {
				_, err := flood.WrongLogin(ctx, ngx.addr, from, abuseUser)
				return err
			}},
		{"bonesync HTTPS", bs, bs.addr, httpsGet(bs.addr, tlsClient(false), file), flood.TLSPrefix,
			func(ctx context.Context, from string) error {
				_, err := flood.WrongLogin(ctx, bs.addr, from, abuseUser)
				return err
			}},
		{"sshd", sshd, sshd.addr, sshLogin(sshd.addr, client, hostPub), flood.SSHPrefix,
			func(ctx context.Context, from string) error { return wrongPassword(sshd.addr, "root", from) }},
		{"bonesync SFTP", bs, sftpAddr, sshLogin(sftpAddr, client, hostPub), flood.SSHPrefix,
			func(ctx context.Context, from string) error { return wrongPassword(sftpAddr, abuseUser, from) }},
	}
	dur := o.dur
	// One rotation of the legitimate client's addresses for all phases:
	// each SSH connection ends in a refused key, which bonesync counts as
	// a failed login, and an address reused in the next phase would reach
	// the ban.
	src := &sources{}
	hostile := flood.Hostile{HTTPS: bs.addr, SSH: sftpAddr, User: calUser, Password: calPassword, First: 30000}
	for ti, t := range targets {
		floods := []string{"none", "idle+slow", "distributed", "logins"}
		if t.name == "bonesync HTTPS" {
			floods = append(floods, "calendars", "hostile")
		}
		for _, fl := range floods {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.logf("abuse: %s, flood %s, %v", t.name, fl, dur)
			fctx, stop := context.WithCancel(ctx)
			if t.s == bs {
				resetPeak(bs.pid())
			}
			var tally floodTally
			wait, err := startFlood(ctx, fctx, fl, t, 10000+ti*100, hostile, &tally)
			if err != nil {
				stop()
				return err
			}
			var peak atomic.Int64
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for fctx.Err() == nil {
					if kb := pssKB(t.s.pid()); kb > peak.Load() {
						peak.Store(kb)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
			r := drive(ctx, src, 1, dur, t.legit)
			var hwm int64
			if t.s == bs {
				hwm, _ = statusKB(filepath.Join("/proc", strconv.Itoa(bs.pid()), "status"), "VmHWM")
			}
			stop()
			if wait != nil {
				wait()
			}
			<-sampled
			row := abuseRow{Server: t.name, Flood: fl, OK: len(r.latencies), Failed: r.errors,
				P95: measure.Percentile(r.latencies, 95), PeakPSSKB: peak.Load(), Guesses: tally.guesses.Load(), Hostile: tally.puts.Load(),
				PeakHWMKB: hwm, Attack: tally.attack}
			res.Rows = append(res.Rows, row)
			o.logf("  %d ok, %d failed (%s), p95 %.1f ms, peak PSS %.1f MiB, VmHWM %.1f MB %s", row.OK, row.Failed, r.firstErr, ms(row.P95),
				mib(row.PeakPSSKB), float64(hwm)/1000, tally.attack)
			settle(t.s)
			time.Sleep(2 * time.Second) // the flood's connections closed on both sides
		}
	}
	return nil
}

// abuseTarget is one server's port under the floods, and its legitimate
// client.
type abuseTarget struct {
	name   string
	s      *server
	addr   string
	legit  conn
	prefix []byte
	guess  func(ctx context.Context, from string) error
}

// floodTally is what a flood counted: failed logins, calendar PUTs
// answered, the combined attack's answers.
type floodTally struct {
	guesses, puts atomic.Int64
	attack        string
}

// startFlood starts flood fl on t, to run until fctx ends; the hostile
// attack, from a process of its own, runs until wait. Guessers come from
// Loopback(first) onwards. wait waits for the flood's clients to end.
func startFlood(ctx, fctx context.Context, fl string, t abuseTarget, first int, hostile flood.Hostile, tally *floodTally) (wait func(), err error) {
	switch fl {
	case "calendars":
		return hostileCalendars(fctx, t.addr, &tally.puts), nil
	case "hostile":
		// Every attack of issue 36 at once, from a niced process of its
		// own (flood.Hostile, as TestSync/hostile runs it).
		if err := hostile.Prepare(fctx); err != nil {
			return nil, err
		}
		stopAttack, err := hostile.Attacker(ctx)
		if err != nil {
			return nil, err
		}
		time.Sleep(3 * time.Second) // the sessions opened, every part under way
		return func() {
			if c, err := stopAttack(); err != nil {
				tally.attack = err.Error()
			} else {
				tally.attack = c.String()
			}
		}, nil
	case "idle+slow":
		_, wait = flood.Hold{From: "127.0.0.2", To: t.addr, Idle: floodIdle, Slow: floodSlow, Prefix: t.prefix}.Run(fctx)
		time.Sleep(3 * time.Second) // all opened
		return wait, nil
	case "distributed":
		var waits []func()
		for i := 0; i < floodAddrs; i++ {
			_, w := flood.Hold{From: flood.Loopback(20000 + i), To: t.addr, Idle: floodAddrIdle, Slow: floodAddrSlow,
				Prefix: t.prefix, Retry: floodAddrRetry}.Run(fctx)
			waits = append(waits, w)
		}
		time.Sleep(5 * time.Second) // all opened
		return func() {
			for _, w := range waits {
				w()
			}
		}, nil
	case "logins":
		done := make(chan struct{})
		go func() {
			// Each target guesses from its own addresses: a ban earned at
			// one server must not carry to the next.
			tally.guesses.Store(flood.Logins(fctx, floodLogins, first, t.guess))
			close(done)
		}()
		time.Sleep(time.Second)
		return func() { <-done }, nil
	}
	return nil, nil
}

// hostileCalendars runs the calendar flood until ctx ends, counting the
// PUTs answered; the returned func waits for its clients.
func hostileCalendars(ctx context.Context, addr string, n *atomic.Int64) func() {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	home := "https://" + addr + "/remote.php/dav/calendars/" + calUser + "/"
	req, _ := http.NewRequestWithContext(ctx, "PROPFIND", home, nil) // makes the default calendar
	req.SetBasicAuth(calUser, calPassword)
	req.Header.Set("Depth", "1")
	if resp, err := c.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	nested := "BEGIN:VCALENDAR\r\n" + strings.Repeat("BEGIN:X\r\n", 40000) + strings.Repeat("END:X\r\n", 40000) + "END:VCALENDAR\r\n"
	var big strings.Builder
	big.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n")
	for i := range 999 {
		fmt.Fprintf(&big, "BEGIN:VEVENT\r\nUID:hostile\r\nDTSTAMP:20260101T000000Z\r\nRECURRENCE-ID:2026%02d%02dT100000Z\r\n"+
			"DTSTART:2026%02d%02dT100000Z\r\nSUMMARY:%d\r\nEND:VEVENT\r\n", 1+i%12, 1+i%28, 1+i%12, 1+i%28, i)
	}
	big.WriteString("END:VCALENDAR\r\n")
	done := make(chan struct{})
	for w := range floodCalendars {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; ctx.Err() == nil; i++ {
				body := nested
				if i%2 == 1 {
					body = big.String()
				}
				req, _ := http.NewRequestWithContext(ctx, "PUT", fmt.Sprintf("%spersonal/h%d.ics", home, w), strings.NewReader(body))
				req.SetBasicAuth(calUser, calPassword)
				req.Header.Set("Content-Type", "text/calendar")
				resp, err := c.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				n.Add(1)
			}
		}()
	}
	return func() {
		for range floodCalendars {
			<-done
		}
	}
}

// wrongPassword is an SSH login with a wrong password.
func wrongPassword(addr, user, from string) error {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: connTimeout}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(connTimeout))
	_, _, _, err = ssh.NewClientConn(nc, addr, &ssh.ClientConfig{User: user,
		Auth: []ssh.AuthMethod{ssh.Password("a wrong guess")}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	return err
}

// markdown writes the abuse section of the report.
func (a *abuseResult) markdown(w io.Writer) {
	fmt.Fprintf(w, "\n## Abuse: a legitimate client beside floods from other addresses\n\n")
	fmt.Fprintf(w, "Floods, one at a time: %d idle connections and %d sending a byte every 3 s, all from 127.0.0.2 "+
		"(each reopened a second after the server closes it); or, distributed, %d addresses each holding %d idle and %d slow "+
		"connections (bonesync's waiting_per_address), reopened %v after a close; or %d addresses each guessing a password over and over "+
		"(WebDAV Basic auth; SSH passwords); or, bonesync only, %d logged-in clients PUTting calendar objects at once, alternating 800 KB "+
		"of 40,000 nested components and the largest object taken (1,000 components); or, bonesync only, *hostile*: every attack of "+
		"docs/limits.md at once from a niced process of its own (`flood.Hostile`: %d TLS and %d SFTP sessions held, failed logins with 500 KB and 40 KB names "+
		"from %d addresses, previews of %d interlaced 16-bit 4-megapixel PNGs, %d PUTs at once of %d-property objects, a time-range query over a SECONDLY event). The legitimate client, from other addresses, opens one connection after another "+
		"for the phase: a full handshake and GET, or a key exchange up to a refused key.\n\n", floodIdle, floodSlow,
		floodAddrs, floodAddrIdle, floodAddrSlow, floodAddrRetry, floodLogins, floodCalendars,
		flood.HostileSessions, flood.HostileSFTP, flood.HostileNamers, flood.HostilePictures, flood.HostilePUTs, flood.HostileProperties)
	if a.Err != "" {
		fmt.Fprintf(w, "Failed: %s\n\n", a.Err)
	}
	fmt.Fprintf(w, "| server | flood | legitimate ok / failed | p95 | p95 / unloaded | peak PSS | VmHWM |\n|---|---|---:|---:|---:|---:|---:|\n")
	var base time.Duration
	for _, r := range a.Rows {
		if r.Flood == "none" {
			base = r.P95
		}
		flood := r.Flood
		if r.Guesses > 0 {
			flood += fmt.Sprintf(" (%d guesses)", r.Guesses)
		}
		if r.Hostile > 0 {
			flood += fmt.Sprintf(" (%d PUTs)", r.Hostile)
		}
		hwm := "—"
		if r.PeakHWMKB > 0 {
			hwm = fmt.Sprintf("%.1f MB", float64(r.PeakHWMKB)/1000)
		}
		fmt.Fprintf(w, "| %s | %s | %d / %d | %.1f ms | %s | %.1f MiB | %s |\n", r.Server, flood, r.OK, r.Failed, ms(r.P95),
			ratio(ms(r.P95), ms(base)), mib(r.PeakPSSKB), hwm)
	}
	for _, r := range a.Rows {
		if r.Attack != "" {
			fmt.Fprintf(w, "\nThe hostile phase's answers to the attack: %s.\n", r.Attack)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.TrimSpace(`nginx: its stock event loop with 2 workers of 1024 connections (the HTTPS block's config; the login flood meets auth_basic with a SHA-512-crypt hash).
sshd: MaxStartups 64 (the SSH block's config; Debian's default is 10:30:100), password logins on. bonesync: its defaults (README, "Abuse").`))
	fmt.Fprintln(w)
}
