package front

import (
	"net"
	"net/http"
	"strings"

	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/welcome"
)

// The welcome page: what a newcomer meets at http://BOX/, before any
// certificate warning. It offers the CA, its fingerprint to compare, and
// the steps to trust it on each kind of device, then the way in over
// HTTPS. It holds no secret and no software version (anyone on the network
// may read it). The HTTPS pages link to the same page at /trust, so there
// is one set of steps.

// welcomePage answers GET / on the plain port and GET /trust on HTTPS.
func welcomePage(ca CA, httpsPort, plainPort string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		host, port, ok := RequestHost(r)
		if !ok {
			http.Error(w, "bad Host header", http.StatusBadRequest)
			return
		}
		d := welcome.Page{CAFiles: "/", Fingerprint: pki.Fingerprint(ca.CACert())}
		if r.TLS == nil { // the ports as the device reached the box
			plainPort = port
		} else {
			httpsPort = port
		}
		d.CAURL = "http://" + JoinPort(host, plainPort, "80") + "/ca.crt"
		d.HTTPS = "https://" + JoinPort(host, httpsPort, "443")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("Cache-Control", "no-store")
		welcome.Write(w, d) // dropped: a write to a client that went
	}
}

// HTTPSHost is the host and port a browser reached the box's HTTPS by
// ("box.local:8443"; the port left out when it is 443), bonesync.local
// when the Host header is empty or odd: for the addresses the pages show.
func HTTPSHost(r *http.Request) string {
	host, port, ok := RequestHost(r)
	if !ok {
		return "bonesync.local"
	}
	return JoinPort(host, port, "443")
}

// RequestHost is the request's host name, bracketed if IPv6, and its port
// ("" if none); false for one that is empty or holds what no host name
// does.
func RequestHost(r *http.Request) (host, port string, ok bool) {
	host = r.Host
	if h, p, err := net.SplitHostPort(host); err == nil {
		host, port = h, p
	}
	host = strings.Trim(host, "[]")
	if host == "" || strings.ContainsAny(host, "/\\@ <>\"'&") || strings.ContainsAny(port, "/\\@ <>\"'&") {
		return "", "", false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host, port, true
}

// withPort is host with port, unless port is the scheme's own (or unknown).
func JoinPort(host, port, def string) string {
	if port == "" || port == def {
		return host
	}
	return host + ":" + port
}
