package web

import (
	"net"
	"net/http"
	"strings"

	"github.com/bonesync/bonesync/appliance/report"
)

// Content is what the pages show; it is read per request, so a reissued
// certificate or a new report shows at once.
type Content interface {
	CAPEM() []byte
	Report() *report.Report
}

// HTTPS returns the handler for the HTTPS listener; dav, if not nil, serves
// the users' files under DAVPrefix and where the ownCloud and Nextcloud
// clients look for them, and with sys /status.json and /admin/update.
func HTTPS(c Content, dav *DAV, sys *System) http.Handler {
	mux := http.NewServeMux()
	if dav != nil {
		mux.Handle(DAVPrefix, dav)
		mux.Handle(DAVPrefix+"/", dav)
		dav.Nextcloud(mux)
		if dav.Calendars != nil {
			dav.Calendars.Routes(mux)
		}
		if dav.Browser != nil {
			dav.Browser.Routes(mux)
		}
		if sys != nil {
			systemRoutes(mux, dav, sys)
		}
	}
	trustRoutes(mux, c, "")
	mux.HandleFunc("GET /report.json", func(w http.ResponseWriter, r *http.Request) {
		// Anyone gets the public report; a logged-in user (Basic
		// credentials, checked as WebDAV checks them) the full one.
		rep := c.Report().Public()
		if _, _, hasAuth := r.BasicAuth(); hasAuth && dav != nil {
			if _, ok := dav.login(w, r); !ok {
				return
			}
			rep = c.Report()
		}
		b, err := rep.JSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'")
		c.Report().Public().Page(w)
	})
	return secure(mux)
}

// secure adds the headers every HTTPS response should carry.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// HTTP returns the handler for the plain-HTTP listener: the CA certificate
// (it is public, and a phone needs it before it can trust HTTPS) and a
// redirect to HTTPS for everything else. httpsPort is the HTTPS listener's
// port ("443" is left out of the URL). WebDAV paths get dav's own answer
// (401: passwords are taken over TLS only) rather than a redirect that a
// client might follow with its password.
func HTTP(c Content, httpsPort string, dav *DAV) http.Handler {
	mux := http.NewServeMux()
	if dav != nil {
		for _, p := range []string{DAVPrefix, DAVPrefix + "/", "/remote.php/", "/ocs/"} {
			mux.Handle(p, dav)
		}
	}
	trustRoutes(mux, c, httpsPort)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
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
	return mux
}
