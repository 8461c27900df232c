// Package welcome is what a newcomer meets before trusting the box: the
// page that offers the CA, its fingerprint to compare and the steps to
// trust it on each kind of device (served at http://BOX/ and /trust, and
// the start page of the USB drive), and the CA as an Apple configuration
// profile.
package welcome

import (
	"html/template"
	"io"

	"github.com/bonesync/bonesync/appliance/report"
)

// Page is what the page shows.
type Page struct {
	// CAFiles is where the CA's files are, as a prefix of ca.crt, ca.der
	// and bonesync.mobileconfig: "/" on the box's own page, "" beside the
	// page on the USB drive.
	CAFiles string
	// CAURL is http://HOST[:PORT]/ca.crt, for the steps typed in a terminal.
	CAURL string
	// HTTPS is https://HOST[:PORT], the way in.
	HTTPS string
	// Fingerprint is the CA's SHA-256, as pki.Fingerprint writes it.
	Fingerprint string
	// Addresses are the ways to the box, listed when there are some (the
	// USB drive's page, which no browser reached through one of them).
	Addresses []Address
}

// Address is one way to the box.
type Address struct {
	What string // "Windows, over USB"
	URL  string // https://192.168.7.2/
}

// Write writes the page.
func Write(w io.Writer, p Page) error {
	return page.Execute(w, p)
}

var page = template.Must(template.New("welcome").Funcs(template.FuncMap{"fingerprint": report.FingerprintHTML}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Welcome to bonesync</title>
<style>
:root{color-scheme:light dark;--fg:#1c1917;--bg:#fafaf9;--card:#fff;--line:#d6d3d1;--accent:#1f6f5c;--muted:#57534e}
@media (prefers-color-scheme:dark){:root{--fg:#eeece9;--bg:#161615;--card:#201f1e;--line:#3d3a37;--accent:#4cc29f;--muted:#b5b0aa}}
body{font-family:system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:1rem;color:var(--fg);background:var(--bg);line-height:1.45}
a{color:var(--accent)}section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.5rem 1rem;margin:1rem 0}
pre{background:var(--bg);border:1px solid var(--line);padding:.6rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
code{word-break:break-all}.fp{word-break:normal;overflow-wrap:normal}dt{font-weight:bold;margin-top:.75rem}dd{margin:0}.hint{color:var(--muted)}
.go{display:inline-block;margin:.25rem .5rem .25rem 0;padding:.5rem .9rem;border-radius:6px;background:var(--accent);color:var(--bg);text-decoration:none;font-weight:bold}
</style></head><body>
<h1>Welcome to bonesync</h1>
<p>This box keeps your household's files, calendars and contacts. It speaks only over encrypted connections,
vouched for by a certificate authority (CA) of its own, made on this box: install that CA on each device once, and
browsers and apps trust the box from then on, with no warning.</p>
<section>
<h2>1. Download the CA</h2>
<p><a class="go" href="{{.CAFiles}}ca.crt" download>ca.crt</a><a class="go" href="{{.CAFiles}}ca.der" download>ca.der (Windows)</a><a class="go" href="{{.CAFiles}}bonesync.mobileconfig">bonesync.mobileconfig (iPhone, iPad, Mac)</a></p>
<p>Its fingerprint (SHA-256), to compare with what your device shows and with the box's serial console:</p>
<p><code id="fingerprint">{{fingerprint .Fingerprint}}</code></p>
<p class="hint">The CA can vouch only for this box's own names and private addresses, for nothing else on the internet.</p>
</section>
<section>
<h2>2. Trust it on your device</h2>
<dl>
<dt id="linux-chrome">Chrome or Chromium on Linux</dt>
<dd>They keep their own list (in <code>~/.pki/nssdb</code>), not the system's. In a terminal (package <code>libnss3-tools</code> has <code>certutil</code>):
<pre data-steps="linux-chrome">curl -fsSo bonesync-ca.crt {{.CAURL}}
mkdir -p ~/.pki/nssdb
test -e ~/.pki/nssdb/cert9.db || certutil -d sql:$HOME/.pki/nssdb -N --empty-password
certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n bonesync -i bonesync-ca.crt</pre>
then close every Chrome window and open it again. Or: Settings, Privacy and security, Security, Manage certificates,
Authorities, Import <code>ca.crt</code>, and tick "Trust this certificate for identifying websites".</dd>
<dt id="linux">Linux: the system, curl, rclone, sync clients</dt>
<dd><pre data-steps="linux">curl -fsSo bonesync-ca.crt {{.CAURL}}
sudo cp bonesync-ca.crt /usr/local/share/ca-certificates/bonesync.crt
sudo update-ca-certificates</pre>
(Debian, Ubuntu; Fedora: <code>/etc/pki/ca-trust/source/anchors/</code> and <code>sudo update-ca-trust</code>). Chrome and
Firefox do not read this list: see their own steps.</dd>
<dt id="firefox">Firefox (any computer)</dt>
<dd>Settings, Privacy &amp; Security, Certificates, View Certificates, Authorities, Import <code>ca.crt</code>, tick
"Trust this CA to identify websites".</dd>
<dt id="windows">Windows (Edge, Chrome, Explorer)</dt>
<dd>Download <code>ca.der</code>, open it, Install Certificate, Local Machine, "Place all certificates in the following
store", Browse, Trusted Root Certification Authorities, Finish.</dd>
<dt id="mac">Mac (Safari, Chrome, Finder, Calendar)</dt>
<dd>Download <code>bonesync.mobileconfig</code>; System Settings, Privacy &amp; Security, Profiles: install it. (Or open
<code>ca.crt</code> in Keychain Access, System keychain, and set "When using this certificate" to Always Trust.)</dd>
<dt id="ios">iPhone, iPad</dt>
<dd>Open <code>bonesync.mobileconfig</code> in Safari and allow the download; Settings, Profile Downloaded, Install.
Then Settings, General, About, Certificate Trust Settings: turn on full trust for it.</dd>
<dt id="android">Android</dt>
<dd>Download <code>ca.crt</code>; Settings, Security (More security settings), Encryption &amp; credentials, Install a
certificate, CA certificate. Chrome, DAVx5 and the Nextcloud app trust it then; Firefox after Settings, About Firefox
(tap the logo five times), Secret settings, "Use third party CA certificates".</dd>
</dl>
</section>
<section>
<h2>3. Come in</h2>
<p><a class="go" href="{{.HTTPS}}/files/">Your files</a><a class="go" href="{{.HTTPS}}/">The box's status</a></p>
{{with .Addresses}}<p>The box's addresses:</p>
<dl id="addresses">{{range .}}<dt>{{.What}}</dt><dd><a href="{{.URL}}">{{.URL}}</a></dd>{{end}}</dl>{{end}}
<p class="hint">The first password for the user admin is where the box was started: on a board, its serial console and
FIRST-LOGIN.txt on the card's boot partition (unless admin_password was set in bonesync.conf); on a computer, the
terminal or the journal. The status page has the steps for calendar and contact apps.</p>
</section>
</body></html>
`))
