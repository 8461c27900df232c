package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/web"
)

// refreshEvery is how often a running server looks for a changed address, a
// certificate near expiry, or a new decision from `bonesync bench`.
const refreshEvery = 30 * time.Second

func quickBudget() time.Duration { return provision.QuickBudget }

// setup opens the state directory and the clock floor and reads the config.
func setup(f *flags, stderr io.Writer) (provision.Options, error) {
	cfg := loadConfig(f.config, stderr)
	dir, err := state.Open(f.state)
	if err != nil {
		return provision.Options{}, err
	}
	clk, err := clock.New(clock.BuildTime(), state.TimeFile{Dir: dir})
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
	}
	if behind, by := clk.Behind(); behind {
		fmt.Fprintf(stderr, "clock: the system clock is %v behind the last known time; using %s until it is set\n",
			by.Round(time.Second), clk.Now().Format(time.RFC3339))
	}
	return provision.Options{
		State: dir, Config: cfg, Clock: clk, Quick: f.quick,
		Client: loadGenerator, URLs: urls(cfg.Hostname, f), Log: stderr,
	}, nil
}

func rebench(ctx context.Context, f *flags, stdout, stderr io.Writer) error {
	o, err := setup(f, stderr)
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

func serve(ctx context.Context, f *flags, stdout, stderr io.Writer) error {
	o, err := setup(f, stderr)
	if err != nil {
		return err
	}
	box, err := provision.Ensure(ctx, o)
	if err != nil {
		return err
	}
	if box.Benchmarked {
		box.Report.Console(stdout)
	} else {
		io.WriteString(stdout, report.Summary(box.Report))
	}
	if err := o.Clock.Save(); err != nil {
		fmt.Fprintf(stderr, "clock: %v\n", err)
	}
	cur := &current{box: box}

	httpsLn, err := net.Listen("tcp", f.https)
	if err != nil {
		return fmt.Errorf("HTTPS listener: %w", err)
	}
	httpLn, err := net.Listen("tcp", f.http)
	if err != nil {
		httpsLn.Close()
		return fmt.Errorf("HTTP listener: %w", err)
	}
	_, httpsPort, _ := net.SplitHostPort(httpsLn.Addr().String())
	tlsCfg := web.TLSConfig(cur.certificate, cur.postQuantum, o.Clock.Now)
	servers := []*http.Server{
		{Handler: web.HTTPS(cur), TLSConfig: tlsCfg, ReadHeaderTimeout: 20 * time.Second, ErrorLog: quietTLSLog(stderr)},
		{Handler: web.HTTP(cur, httpsPort), ReadHeaderTimeout: 20 * time.Second},
	}
	errc := make(chan error, 2)
	go func() { errc <- servers[0].Serve(tls.NewListener(httpsLn, tlsCfg)) }()
	go func() { errc <- servers[1].Serve(httpLn) }()
	fmt.Fprintf(stderr, "serving HTTPS on %s, HTTP on %s\n", httpsLn.Addr(), httpLn.Addr())

	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return shutdown(servers, o.Clock, stderr)
		case err := <-errc:
			shutdown(servers, o.Clock, stderr)
			return fmt.Errorf("server stopped: %w", err)
		case <-tick.C:
			o.Rebench, o.NoWait = false, true
			b, err := provision.Ensure(ctx, o)
			if errors.Is(err, state.ErrBusy) {
				continue // a `bonesync bench` is at work; look again next time
			}
			if err != nil {
				fmt.Fprintf(stderr, "refresh: %v (still serving the previous certificate)\n", err)
				continue
			}
			cur.set(b)
			if err := o.Clock.Save(); err != nil {
				fmt.Fprintf(stderr, "clock: %v\n", err)
			}
		}
	}
}

func shutdown(servers []*http.Server, clk *clock.Floor, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		s.Shutdown(ctx)
	}
	if err := clk.Save(); err != nil {
		fmt.Fprintf(stderr, "clock: %v\n", err)
	}
	return nil
}

// current holds what is being served, swapped by the refresh loop.
type current struct {
	mu  sync.RWMutex
	box *provision.Box
}

func (c *current) get() *provision.Box {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.box
}

func (c *current) set(b *provision.Box) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.box = b
}

func (c *current) certificate() *tls.Certificate {
	b := c.get()
	return b.Server.TLSCertificate(b.CA)
}

func (c *current) postQuantum() bool      { return c.get().Choice.TLSPostQuantum }
func (c *current) CAPEM() []byte          { return c.get().CA.PEM() }
func (c *current) Report() *report.Report { return c.get().Report }

// urls lists where the box can be reached, for the console and the page.
func urls(hostname string, f *flags) []string {
	_, port, err := net.SplitHostPort(f.https)
	if err != nil {
		return nil
	}
	suffix := ""
	if port != "443" {
		suffix = ":" + port
	}
	out := []string{fmt.Sprintf("https://%s.local%s/", hostname, suffix)}
	loopbackOnly := true
	for _, ip := range pki.InterfaceAddrs() {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		loopbackOnly = false
		host := ip.String()
		if ip.To4() == nil {
			host = "[" + host + "]"
		}
		out = append(out, fmt.Sprintf("https://%s%s/", host, suffix))
	}
	if loopbackOnly {
		out = append(out, fmt.Sprintf("https://localhost%s/", suffix))
	}
	return out
}

// quietTLSLog drops the "TLS handshake error" lines that every port scan and
// every browser that has not yet trusted the CA would otherwise print.
func quietTLSLog(w io.Writer) *log.Logger {
	return log.New(filterWriter{w}, "https: ", 0)
}

type filterWriter struct{ w io.Writer }

func (f filterWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("TLS handshake error")) {
		return len(p), nil
	}
	return f.w.Write(p)
}
