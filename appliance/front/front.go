// Package front is the box's web front: the HTTPS server, which mounts the
// routes of each protocol handed to it (files, calendars, the web pages,
// admin...) behind the headers every answer carries, and the plain-HTTP
// server, which welcomes a newcomer with the CA and the steps to trust it,
// offers the CA in the forms devices take and redirects everything else to
// HTTPS. Around them: the TLS configuration (tls.go),
// listeners that finish TLS handshakes off the accept path and cap
// connections per address (listener.go), the CA downloads (trust.go), and
// one shutdown (Server.Run). It knows no protocol.
package front

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
)

// CA is the box's CA as it is now: read per request, so that a reissued
// one is served at once (its forms are made once per certificate:
// caForms).
type CA interface {
	CACert() *x509.Certificate
}

// Mount is one protocol's part of the HTTPS server: it registers its
// routes, each with the access it asks (Routes.Handle).
type Mount interface {
	Routes(rs *Routes)
}

// PlainMount is a Mount that answers some of its paths on the plain-HTTP
// port too (a refusal, rather than a redirect a client might follow with
// its password).
type PlainMount interface {
	PlainRoutes(rs *Routes)
}

// HTTPS is the handler of the HTTPS port: HTTPSRoutes, each answer with
// the headers HTTPS answers carry. Large writes draw from mem (nil:
// unbounded).
func HTTPS(ca CA, plainPort string, mem Memory, door Door, mounts ...Mount) http.Handler {
	return secure(HTTPSRoutes(ca, plainPort, door, mounts...), mem)
}

// HTTPSRoutes are the HTTPS port's routes: the CA downloads, the welcome
// page's steps at /trust (plainPort: the plain-HTTP listener's port, for
// the CA's address there), and every mount's routes, each checked by door
// as it was declared.
func HTTPSRoutes(ca CA, plainPort string, door Door, mounts ...Mount) *Routes {
	rs := NewRoutes(door)
	trustRoutes(rs, ca, "")
	rs.Public("GET /trust", welcomePage(ca, "", plainPort))
	for _, m := range mounts {
		m.Routes(rs)
	}
	return rs
}

// secure adds the headers every HTTPS response should carry, and over
// HTTP/2 gives a copied body in large writes (bigWrites).
func secure(h http.Handler, mem Memory) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.ProtoMajor == 2 {
			w = bigWrites{ResponseWriter: w, mem: mem}
		}
		h.ServeHTTP(w, r)
	})
}

// HTTP is the handler of the plain-HTTP port: the welcome page at / (the
// CA, its fingerprint and the steps to trust it, welcome.go), the CA
// certificate (it is public, and a phone needs it before it can trust
// HTTPS), the plain routes of the mounts that have them, and a redirect to
// HTTPS for everything else. httpsPort is the HTTPS listener's port ("443" is left
// out of the URL); door refuses the plain routes' requests (no password
// is taken in clear).
func HTTP(ca CA, httpsPort string, door Door, mounts ...Mount) http.Handler {
	rs := NewRoutes(door)
	for _, m := range mounts {
		if p, ok := m.(PlainMount); ok {
			p.PlainRoutes(rs)
		}
	}
	trustRoutes(rs, ca, httpsPort)
	rs.Public("GET /{$}", welcomePage(ca, httpsPort, ""))
	rs.Public("/", func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		} else {
			host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]") // "[::1]" without a port
		}
		if host == "" || strings.ContainsAny(host, "/\\@ ") {
			http.Error(w, "bad Host header", http.StatusBadRequest)
			return
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if httpsPort != "443" {
			host += ":" + httpsPort
		}
		code := http.StatusMovedPermanently
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			code = http.StatusPermanentRedirect
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), code)
	})
	return rs
}

// MaxHeaderBytes bounds a request's headers, over HTTP/1.1 and HTTP/2:
// net/http's default of 1 MB let 50 clients sending 500 KB user names in
// Basic credentials at once hold 80 MB while their headers were parsed
// (each one read, then copied as a string, then decoded). 64 KiB is more
// than nginx takes by default (32 KB, 8 KB a line; Apache 8 KB a line);
// a longer request is answered 431 before any handler, the login door
// among them, sees it.
const MaxHeaderBytes = 64 << 10

// Grace is how long a stop waits for the requests still running.
const Grace = 5 * time.Second

// ErrCut is Run's answer when requests were still running Grace after the
// stop and were cut: a change may have been cut between its steps.
var ErrCut = errors.New("requests still running at the stop were cut")

// Server is the two web servers on their listeners.
type Server struct {
	// HTTPS is served with TLS on Handshakes' terms.
	HTTPS      net.Listener
	TLS        *tls.Config
	Handshakes Handshakes
	Handler    http.Handler
	// HTTP is served in clear, with at most PlainLimits' connections
	// per address.
	HTTP        net.Listener
	PlainLimits guard.Limits
	Plain       http.Handler
	Log         *slog.Logger
}

// httpServer is the net/http server of one listener: its timeouts, its
// bound on headers, and its errors in the log.
func httpServer(h http.Handler, log *slog.Logger, name string) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 20 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: MaxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(log.With("listener", name).Handler(), slog.LevelWarn)}
}

// Run serves until ctx ends or a server fails. Then both stop taking
// connections and wait up to Grace for the requests running. It returns
// the failure, if any, and ErrCut (alone, or joined to the failure) if
// requests had to be cut.
func (s *Server) Run(ctx context.Context) error {
	servers := []*http.Server{httpServer(s.Handler, s.Log, "https"), httpServer(s.Plain, s.Log, "http")}
	hctx, stopHandshakes := context.WithCancel(ctx)
	defer stopHandshakes()
	lns := []net.Listener{
		HandshakeListener(hctx, s.HTTPS, s.TLS, s.Handshakes),
		AdmitListener(s.HTTP, guard.NewAdmission("http", s.PlainLimits, s.Log)),
	}
	failed := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			if err := srv.Serve(lns[i]); !errors.Is(err, http.ErrServerClosed) {
				failed <- fmt.Errorf("%s: %w", []string{"https", "http"}[i], err)
			}
		}()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-failed:
	}
	stopHandshakes()
	sctx, cancel := context.WithTimeout(context.Background(), Grace)
	defer cancel()
	for _, srv := range servers {
		if serr := srv.Shutdown(sctx); serr != nil {
			// Requests still running after the grace: cut them, so that
			// the stop finishes, and say so.
			s.Log.Warn("requests still running at the stop are cut", "err", serr)
			srv.Close()
			switch {
			case err == nil:
				err = ErrCut
			case !errors.Is(err, ErrCut):
				err = errors.Join(err, ErrCut)
			}
		}
	}
	return err
}
