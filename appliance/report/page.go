package report

import (
	"html/template"
	"io"
	"strings"
)

// Page writes the HTTPS status page: the summary, the console table and the
// charts, all inline.
//
// caURL is where the CA is served over plain HTTP, as the box listens
// ("http://bonesync.local/ca.crt", "http://localhost:8080/ca.crt"): the
// page names it for a device that does not trust the box yet.
//
// server is the box's HTTPS address as the reader reached it
// ("https://bonesync.local", "https://localhost:8443"); "" takes the
// report's first URL.
func (r *Report) Page(w io.Writer, caURL, server string) error {
	var table strings.Builder
	r.Console(&table)
	for _, u := range r.URLs {
		if server == "" && strings.HasPrefix(u, "https://") && strings.Count(u, "/") == 3 {
			server = strings.TrimSuffix(u, "/")
		}
	}
	if server == "" {
		server = "https://bonesync.local"
	}
	data := struct {
		R                  *Report
		Server, Host       string
		CAURL, Welcome     string
		Table              string
		TLSChart, SSHChart template.HTML
	}{
		R:        r,
		CAURL:    caURL,
		Welcome:  strings.TrimSuffix(caURL, "ca.crt"),
		Server:   server,
		Host:     strings.TrimPrefix(server, "https://"),
		Table:    table.String(),
		TLSChart: template.HTML(ChartChosen("TLS handshake latency by server key (log scale; chosen in bold)", r.TLS, r.Policy.TargetMs, r.Policy.Concurrency, r.Choice.TLS.Key)),
		SSHChart: template.HTML(ChartChosen("SSH handshake latency by host key (log scale; chosen in bold)", r.SSH, r.Policy.TargetMs, r.Policy.Concurrency, r.Choice.SSH.Key)),
	}
	return page.Execute(w, data)
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bonesync on {{.Host}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#222}
pre{background:#f6f6f6;padding:.75rem;overflow-x:auto;font-size:.8rem}
code{word-break:break-all}.warn{color:#a00}
dt{font-weight:bold}dd{margin:0 0 .5rem 0}
</style></head><body>
<h1>bonesync</h1>
<p><a href="/files/"><strong>Log in to your files</strong></a> (once this box's certificate authority, below, is trusted).</p>
<dl>
<dt>HTTPS key</dt><dd>{{.R.Choice.TLS.Key}}{{if .R.Choice.TLSPostQuantum}}, with post-quantum hybrid key exchange{{end}}</dd>
<dt>SFTP host key</dt><dd>{{.R.Choice.SSH.Key}}{{if .R.Choice.SSHPostQuantum}}, with post-quantum hybrid key exchange{{end}}{{with .R.HostKeyFingerprint}};
fingerprint <code id="host-key">{{.}}</code>, as <code>sftp</code> shows it the first time{{end}}</dd>
<dt>Certificate authority fingerprint (SHA-256)</dt><dd><code>{{.R.CAFingerprint}}</code></dd>
<dt>Trust this box</dt><dd>Install its certificate authority on each device (below), and check that the
fingerprint your device shows is the one above and on the box's console. The CA can vouch only for this box's own names
and private addresses, nothing else on the internet.</dd>
<dt>Measured on</dt><dd>{{with .R.Machine.CPU}}{{.}}, {{end}}{{.R.Machine.Cores}} cores{{with .R.Machine.Kernel}}, {{.}}{{end}}{{with .R.Machine.Go}}, {{.}}{{end}}, {{.R.Machine.Time.Format "2006-01-02 15:04 MST"}}</dd>
</dl>
{{range .R.Choice.TLS.Warnings}}<p class="warn">{{.}}</p>{{end}}
{{range .R.Choice.SSH.Warnings}}<p class="warn">{{.}}</p>{{end}}
{{.TLSChart}}
{{.SSHChart}}
<h2 id="install-the-ca">Install the CA</h2>
<p>The steps for each device (Chrome and Chromium on Linux, Firefox, Windows, Mac, iPhone and iPad, Android) are on
<a href="/trust">the welcome page</a>, which is also served over plain HTTP, for a device that does not trust the box
yet, at <a href="{{.Welcome}}">{{.Welcome}}</a>. The files: <a href="/ca.crt">ca.crt</a> (PEM), <a href="/ca.der">ca.der</a>
(DER), <a href="/bonesync.mobileconfig">bonesync.mobileconfig</a> (Apple profile).</p>
<h2 id="calendars-and-contacts">Calendars and contacts</h2>
<p>Every user has a calendar and an address book on the box (CalDAV and CardDAV), made on first use; apps can make
more. Log in with the same user name and password as for files. Install the CA first (above). Calendars and address
books cannot be shared between users yet.</p>
<dl>
<dt>Android (DAVx5)</dt><dd>Add account, "Login with URL and user name": base URL <code>{{.Server}}/</code>, your user
name and password. DAVx5 finds both and syncs them into the phone's calendar and contacts apps.</dd>
<dt>iPhone, iPad, Mac</dt><dd>Settings, Calendar (or Contacts), Accounts, Add Account, Other, Add CalDAV Account (or
CardDAV): server <code>{{.Host}}</code>, your user name and password. On a Mac: System Settings, Internet Accounts, Add
Other Account, CalDAV (or CardDAV), Account Type Manual, the same server. Or install
<a href="/bonesync.mobileconfig">bonesync.mobileconfig</a>: with the CA it adds both accounts, and asks for your user name
and password.</dd>
<dt>Thunderbird</dt><dd>New Calendar, On the Network: location <code>{{.Server}}/</code>, your user name; it finds the
calendars. Address book: New Address Book, CardDAV, location <code>{{.Server}}/</code>.</dd>
<dt>GNOME (Evolution, Calendar, Contacts)</dt><dd>Settings, Online Accounts, Nextcloud: server <code>{{.Server}}/</code>,
your user name and password (the box speaks the paths a Nextcloud server has).</dd>
<dt>Any other client</dt><dd>Calendars: <code>{{.Server}}/remote.php/dav/calendars/USER/</code>; address books:
<code>{{.Server}}/remote.php/dav/addressbooks/users/USER/</code>; or let it discover from <code>{{.Server}}/</code>.</dd>
</dl>
<h2>Report</h2>
<pre>{{.Table}}</pre>
<p><a href="/report.json">report.json</a> has every figure, the raw samples and the reasons.</p>
</body></html>
`))
