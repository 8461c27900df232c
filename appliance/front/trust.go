package front

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/bonesync/bonesync/appliance/welcome"
)

// The CA in the forms devices take, all over plain HTTP too (a device needs
// them before it can trust HTTPS): PEM (/ca.crt: Linux, Android, Firefox),
// DER (/ca.der: Windows, and Android's installer), and an Apple
// configuration profile (/bonesync.mobileconfig: iOS, iPadOS, macOS).
//
// The profile also sets up the box's calendars and contacts (CalDAV and
// CardDAV accounts; the device asks for the user name and password) at the
// name the device used to fetch it, on the HTTPS port: httpsPort, or the
// request's own port when that is HTTPS ("").
func trustRoutes(rs *Routes, c CA, httpsPort string) {
	forms := &caForms{}
	for _, f := range []struct {
		path, file, ctype string
		body              func(der []byte, r *http.Request) []byte
	}{
		{"/ca.crt", "bonesync-ca.crt", "application/x-x509-ca-cert", func([]byte, *http.Request) []byte { return forms.pem(c) }},
		{"/ca.der", "bonesync-ca.cer", "application/x-x509-ca-cert", func(der []byte, _ *http.Request) []byte { return der }},
		{"/bonesync.mobileconfig", "bonesync.mobileconfig", "application/x-apple-aspen-config", func(der []byte, r *http.Request) []byte {
			host, port := davHost(r, httpsPort)
			return welcome.MobileConfig(der, host, port)
		}},
	} {
		rs.Public("GET "+f.path, func(w http.ResponseWriter, r *http.Request) {
			der := c.CACert().Raw
			w.Header().Set("Content-Type", f.ctype)
			w.Header().Set("Content-Disposition", `attachment; filename="`+f.file+`"`)
			w.Write(f.body(der, r))
		})
	}
}

// caForms keeps the CA certificate's PEM form for the certificate it
// was made from: /ca.crt is what the first-hour checks and some clients
// fetch on every connection, and encoding it each time was a tenth of
// the board's instructions a connection beyond the TLS handshake.
type caForms struct {
	mu   sync.Mutex
	cert *x509.Certificate
	text []byte
}

func (f *caForms) pem(c CA) []byte {
	cert := c.CACert()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cert != cert {
		f.cert, f.text = cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	}
	return f.text
}

// davHost is the host name and HTTPS port the device reached the box by.
func davHost(r *http.Request, httpsPort string) (string, int) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = strings.Trim(r.Host, "[]"), ""
	}
	if httpsPort != "" || port == "" {
		port = httpsPort
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 {
		n = 443
	}
	if host == "" || strings.ContainsAny(host, "/\\@ <>&\"'") {
		return "", 0
	}
	return host, n
}
