package web

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"html"
	"net/http"
)

// The CA in the forms devices take, all over plain HTTP too (a device needs
// them before it can trust HTTPS): PEM (/ca.crt: Linux, Android, Firefox),
// DER (/ca.der: Windows, and Android's installer), and an Apple
// configuration profile (/bonesync.mobileconfig: iOS, iPadOS, macOS).
func trustRoutes(mux *http.ServeMux, c Content) {
	for _, f := range []struct {
		path, file, ctype string
		body              func(der []byte) []byte
	}{
		{"/ca.crt", "bonesync-ca.crt", "application/x-x509-ca-cert", func([]byte) []byte { return c.CAPEM() }},
		{"/ca.der", "bonesync-ca.cer", "application/x-x509-ca-cert", func(der []byte) []byte { return der }},
		{"/bonesync.mobileconfig", "bonesync.mobileconfig", "application/x-apple-aspen-config", MobileConfig},
	} {
		mux.HandleFunc("GET "+f.path, func(w http.ResponseWriter, r *http.Request) {
			der, err := caDER(c)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", f.ctype)
			w.Header().Set("Content-Disposition", `attachment; filename="`+f.file+`"`)
			w.Write(f.body(der))
		})
	}
}

func caDER(c Content) ([]byte, error) {
	b, _ := pem.Decode(c.CAPEM())
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("the CA certificate is not PEM")
	}
	return b.Bytes, nil
}

// MobileConfig is an Apple configuration profile that installs the CA
// certificate der as a trusted root (payload com.apple.security.root). It
// is not signed: the device says so, and the person compares the
// fingerprint the box's page and console show. Its identifiers come from
// the certificate, so the same CA is the same profile.
func MobileConfig(der []byte) []byte {
	name := "bonesync local CA"
	if cert, err := x509.ParseCertificate(der); err == nil && cert.Subject.CommonName != "" {
		name = cert.Subject.CommonName
	}
	sum := sha256.Sum256(der)
	id := fmt.Sprintf("%x", sum[:8])
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>PayloadContent</key>
	<array>
		<dict>
			<key>PayloadCertificateFileName</key>
			<string>bonesync-ca.cer</string>
			<key>PayloadContent</key>
			<data>%s</data>
			<key>PayloadDescription</key>
			<string>Trusts the certificate authority of your bonesync box, which can vouch only for the box's own names and private addresses.</string>
			<key>PayloadDisplayName</key>
			<string>%s</string>
			<key>PayloadIdentifier</key>
			<string>org.bonesync.ca.%s</string>
			<key>PayloadType</key>
			<string>com.apple.security.root</string>
			<key>PayloadUUID</key>
			<string>%s</string>
			<key>PayloadVersion</key>
			<integer>1</integer>
		</dict>
	</array>
	<key>PayloadDisplayName</key>
	<string>%s</string>
	<key>PayloadIdentifier</key>
	<string>org.bonesync.profile.%s</string>
	<key>PayloadRemovalDisallowed</key>
	<false/>
	<key>PayloadType</key>
	<string>Configuration</string>
	<key>PayloadUUID</key>
	<string>%s</string>
	<key>PayloadVersion</key>
	<integer>1</integer>
</dict>
</plist>
`, base64.StdEncoding.EncodeToString(der), html.EscapeString(name), id, uuidFrom(sum[:], 1), html.EscapeString(name), id, uuidFrom(sum[:], 2))
	return b.Bytes()
}

// uuidFrom is a name-based UUID (version 5 layout) from a hash and a salt.
func uuidFrom(sum []byte, salt byte) string {
	h := sha256.Sum256(append(append([]byte{}, sum...), salt))
	u := h[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%X-%X-%X-%X-%X", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
