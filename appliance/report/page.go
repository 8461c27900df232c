package report

import (
	"html/template"
	"io"
	"strings"
)

// Page writes the HTTPS status page: the summary, the console table and the
// charts, all inline.
func (r *Report) Page(w io.Writer) error {
	var table strings.Builder
	r.Console(&table)
	data := struct {
		R                  *Report
		Table              string
		TLSChart, SSHChart template.HTML
	}{
		R:        r,
		Table:    table.String(),
		TLSChart: template.HTML(ChartChosen("TLS handshake latency by server key (log scale; chosen in bold)", r.TLS, r.Policy.TargetMs, r.Policy.Concurrency, r.Choice.TLS.Key)),
		SSHChart: template.HTML(ChartChosen("SSH handshake latency by host key (log scale; chosen in bold)", r.SSH, r.Policy.TargetMs, r.Policy.Concurrency, r.Choice.SSH.Key)),
	}
	return page.Execute(w, data)
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bonesync on {{.R.Machine.Hostname}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#222}
pre{background:#f6f6f6;padding:.75rem;overflow-x:auto;font-size:.8rem}
code{word-break:break-all}.warn{color:#a00}
dt{font-weight:bold}dd{margin:0 0 .5rem 0}
</style></head><body>
<h1>bonesync</h1>
<dl>
<dt>HTTPS key</dt><dd>{{.R.Choice.TLS.Key}}{{if .R.Choice.TLSPostQuantum}}, with post-quantum hybrid key exchange{{end}}</dd>
<dt>SFTP host key</dt><dd>{{.R.Choice.SSH.Key}}{{if .R.Choice.SSHPostQuantum}}, with post-quantum hybrid key exchange{{end}}</dd>
<dt>Certificate authority fingerprint (SHA-256)</dt><dd><code>{{.R.CAFingerprint}}</code></dd>
<dt>Trust this box</dt><dd><a href="/ca.crt">Download the CA certificate</a> and check its fingerprint matches the one on the box's console.
It can only vouch for this box's own names and private addresses.</dd>
<dt>Measured on</dt><dd>{{.R.Machine.CPU}}, {{.R.Machine.Cores}} cores{{with .R.Machine.Kernel}}, {{.}}{{end}}{{with .R.Machine.Go}}, {{.}}{{end}}, {{.R.Machine.Time.Format "2006-01-02 15:04 MST"}}</dd>
</dl>
{{range .R.Choice.TLS.Warnings}}<p class="warn">{{.}}</p>{{end}}
{{range .R.Choice.SSH.Warnings}}<p class="warn">{{.}}</p>{{end}}
{{.TLSChart}}
{{.SSHChart}}
<h2>Report</h2>
<pre>{{.Table}}</pre>
<p><a href="/report.json">report.json</a> has every figure, the raw samples and the reasons.</p>
</body></html>
`))
