package welcome

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"html"
	"strings"
)

// MobileConfig is an Apple configuration profile that installs the CA
// certificate der as a trusted root (payload com.apple.security.root) and,
// with a host, CalDAV and CardDAV accounts for it. It is not signed: the
// device says so, and the person compares the fingerprint the box's page
// and console show. Its identifiers come from the certificate, so the same
// CA is the same profile.
func MobileConfig(der []byte, host string, port int) []byte {
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
		</dict>%s
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
`, base64.StdEncoding.EncodeToString(der), html.EscapeString(name), id, uuidFrom(sum[:], 1), accounts(host, port, id, sum[:]), html.EscapeString(name), id, uuidFrom(sum[:], 2))
	return b.Bytes()
}

// accounts are the profile's CalDAV and CardDAV payloads for host:port.
func accounts(host string, port int, id string, sum []byte) string {
	if host == "" {
		return ""
	}
	var b strings.Builder
	for i, kind := range []struct{ prefix, typ, what string }{
		{"CalDAV", "com.apple.caldav.account", "calendars"},
		{"CardDAV", "com.apple.carddav.account", "contacts"},
	} {
		fmt.Fprintf(&b, `
		<dict>
			<key>%[1]sAccountDescription</key>
			<string>bonesync %[3]s</string>
			<key>%[1]sHostName</key>
			<string>%[4]s</string>
			<key>%[1]sPort</key>
			<integer>%[5]d</integer>
			<key>%[1]sUseSSL</key>
			<true/>
			<key>PayloadDisplayName</key>
			<string>bonesync %[3]s</string>
			<key>PayloadIdentifier</key>
			<string>org.bonesync.%[3]s.%[6]s</string>
			<key>PayloadType</key>
			<string>%[2]s</string>
			<key>PayloadUUID</key>
			<string>%[7]s</string>
			<key>PayloadVersion</key>
			<integer>1</integer>
		</dict>`, kind.prefix, kind.typ, kind.what, html.EscapeString(host), port, id, uuidFrom(append([]byte(host), sum...), byte(3+i)))
	}
	return b.String()
}

// uuidFrom is a name-based UUID (version 5 layout) from a hash and a salt.
func uuidFrom(sum []byte, salt byte) string {
	h := sha256.Sum256(append(append([]byte{}, sum...), salt))
	u := h[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%X-%X-%X-%X-%X", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
