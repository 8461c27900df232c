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

// FingerprintHTML is a fingerprint as a page shows it: the text unchanged
// (a copy of it is the fingerprint), with a place to wrap (<wbr>) after
// each colon and after every 8 characters without one, in a span of class
// fp, which the pages' style keeps from breaking anywhere else. A narrow
// screen so wraps a CA's "3A:91:0C:..." between hex pairs, never inside
// one, and an SSH host key's "SHA256:..." between groups of 8. The box's
// pages show every fingerprint through it: the welcome page, the status
// page and the connect page.
func FingerprintHTML(fp string) template.HTML {
	var b strings.Builder
	b.WriteString(`<span class="fp">`)
	run := 0
	for i, c := range fp {
		if run == 8 {
			b.WriteString("<wbr>")
			run = 0
		}
		b.WriteString(template.HTMLEscapeString(string(c)))
		run++
		if c == ':' && i < len(fp)-1 {
			b.WriteString("<wbr>")
			run = 0
		}
	}
	b.WriteString("</span>")
	return template.HTML(b.String())
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{"fingerprint": FingerprintHTML}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>bonesync on {{.Host}}</title>
<link rel="stylesheet" href="/ui/style.css">
<style>
.chart{overflow-x:auto}.chart svg{min-width:36rem}.warn{color:var(--danger)}
pre{overflow-x:auto;font-size:.8rem}code{word-break:break-all}dt{font-weight:600}dd{margin:0 0 .5rem 0}
</style></head><body>
<header class="top"><a class="brand" href="/files/"><img src="/ui/icon.svg" alt="" width="24" height="24"> <span class="brand-name">bonesync</span></a>
<nav aria-label="Main"><a href="/files/">Files</a><a href="/connect">Connect</a><a href="/trust">Trust</a><a href="/" aria-current="page">Status</a></nav></header>
<main id="main">
<h1>bonesync on {{.Host}}</h1>
<section class="card">
<p>This box keeps a household's files, calendars and contacts, and serves them to browsers, file managers, the
Nextcloud apps, calendar apps and SFTP. To use it from a device:</p>
<ol>
<li><a href="/trust">Trust its certificate authority</a> on the device, once (steps for each kind of device), and check
its fingerprint: <code id="ca-fingerprint">{{fingerprint .R.CAFingerprint}}</code>.</li>
<li><a href="/files/"><strong>Log in to your files</strong></a>.</li>
<li><a href="/connect">Connect a device</a>: the address and steps for each app, with an app password for it.</li>
</ol>
</section>
<section class="card">
<h2>Keys</h2>
<dl>
<dt>HTTPS key</dt><dd>{{.R.Choice.TLS.Key}}{{if .R.Choice.TLSPostQuantum}}, with post-quantum hybrid key exchange{{end}}{{with .R.Choice.TLSOther.Key}};
beside it {{.}}, for the clients that take only its kind of signature{{end}}</dd>
<dt>SFTP host key</dt><dd>{{.R.Choice.SSH.Key}}{{if .R.Choice.SSHPostQuantum}}, with post-quantum hybrid key exchange{{end}}{{with .R.HostKeyFingerprint}};
fingerprint <code id="host-key">{{fingerprint .}}</code>, as <code>sftp</code> shows it the first time{{end}}{{with .R.Choice.SSHOther.Key}};
beside it {{.}} for older clients{{with $.R.OtherHostKeyFingerprint}}, fingerprint <code id="other-host-key">{{fingerprint .}}</code>{{end}}{{end}}</dd>
<dt>Certificate authority fingerprint (SHA-256)</dt><dd><code>{{fingerprint .R.CAFingerprint}}</code>, the same as on the box's console.
The CA can vouch only for this box's own names and private addresses, nothing else on the internet.</dd>
<dt>Measured on</dt><dd>{{with .R.Machine.CPU}}{{.}}, {{end}}{{.R.Machine.Cores}} cores{{with .R.Machine.Kernel}}, {{.}}{{end}}{{with .R.Machine.Go}}, {{.}}{{end}}, {{.R.Machine.Time.Format "2006-01-02 15:04 MST"}}</dd>
</dl>
{{range .R.Choice.TLS.Warnings}}<p class="warn">{{.}}</p>{{end}}
{{range .R.Choice.SSH.Warnings}}<p class="warn">{{.}}</p>{{end}}
</section>
<section class="card">
<h2>What a connection costs here</h2>
<p>The box measured, at its first start, how long a TLS and an SSH handshake takes on this very machine with each kind of
key, and chose the strongest that meets its latency target. The bars are the 95th percentile; each measurement is one
run on a machine that may be busy, so a larger key can come out "meeting" the target where a smaller one did not: the
p50 and p95 columns of the report below show how steady each run was, and the admin page's "measure again" repeats it.</p>
<div class="chart">{{.TLSChart}}</div>
<div class="chart">{{.SSHChart}}</div>
</section>
<section class="card">
<h2 id="install-the-ca">Install the CA</h2>
<p>The steps for each device (Chrome and Chromium on Linux, Firefox, Windows, Mac, iPhone and iPad, Android) are on
<a href="/trust">the welcome page</a>, which is also served over plain HTTP, for a device that does not trust the box
yet, at <a href="{{.Welcome}}">{{.Welcome}}</a>. The files: <a href="/ca.crt">ca.crt</a> (PEM), <a href="/ca.der">ca.der</a>
(DER), <a href="/bonesync.mobileconfig">bonesync.mobileconfig</a> (Apple profile).</p>
</section>
<section class="card">
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
</section>
<section class="card">
<h2>Report</h2>
<pre tabindex="0">{{.Table}}</pre>
<p><a href="/report.json">report.json</a> has every figure, the raw samples and the reasons.</p>
</section>
</main>
</body></html>
`))
