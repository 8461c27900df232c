package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
)

const (
	targetMs    = 500.0
	concurrency = 8
	fingerprint = "3A:91:0C:5E:77:B2:D4:18:E6:0F:2B:9C:41:A7:63:D5:80:1E:CF:44:92:6B:37:F0:A8:15:DE:59:C3:7A:06:BB"
)

// mkPhase is a measured phase whose Latency and ServerCPU are set directly.
func mkPhase(clients int, p50, p95, rate float64, cpu ...float64) *measure.Phase {
	return &measure.Phase{
		Clients:    clients,
		Latency:    measure.Stats{N: 40, P50: p50, P95: p95, P99: p95 + 1, Max: p95 + 2},
		ServerCPU:  measure.Summarise(cpu),
		Rate:       rate,
		CPUSamples: cpu,
	}
}

func mkRow(proto string, key keys.Name, kex string, strength int, full1, fullN *measure.Phase) *measure.Result {
	return &measure.Result{Proto: proto, Key: key, Kex: kex, Strength: strength, Full1: full1, FullN: fullN}
}

// mkReport is a board-like report: ECDSA cheap, RSA expensive, a reference
// rsa-1024 row, rsa-3072 dropped after one client, rsa-4096 never measured,
// and the SSH host key pinned to one that misses the target (so there is a
// warning). The decision comes from the real chooser.
func mkReport(t *testing.T) *Report {
	t.Helper()
	tls := []*measure.Result{
		mkRow(measure.TLS, keys.ECDSAP256, measure.X25519, 128, mkPhase(1, 38.2, 41.7, 25.9, 15.1, 15.3, 16.0), mkPhase(concurrency, 201.4, 240.4, 62.3, 15.8)),
		mkRow(measure.TLS, keys.ECDSAP384, measure.X25519, 192, mkPhase(1, 71.4, 75.9, 13.8, 28.2), mkPhase(concurrency, 520.0, 612.8, 33.1, 28.9)),
		mkRow(measure.TLS, keys.RSA1024, measure.X25519, 80, mkPhase(1, 22.6, 25.1, 40.2, 12.2), mkPhase(concurrency, 120.5, 150.3, 80.7, 12.4)),
		mkRow(measure.TLS, keys.RSA2048, measure.X25519, 112, mkPhase(1, 104.5, 110.9, 9.5, 107.3), mkPhase(concurrency, 799.0, 870.2, 9.2, 106.8)),
		mkRow(measure.TLS, keys.RSA3072, measure.X25519, 128, mkPhase(1, 310.7, 330.2, 3.2, 330.5), nil),
		mkRow(measure.TLS, keys.RSA4096, measure.X25519, 128, nil, nil),
	}
	tls[0].ResumedN = mkPhase(concurrency, 10.1, 12.3, 700)
	tls[2].Reference = true
	tls[4].Dropped = "clearly over the target with one client"
	tls[5].Dropped = "not measured: rsa-3072 was already clearly over the target and rsa-4096 costs more"
	tlsPQ := mkRow(measure.TLS, keys.ECDSAP256, measure.X25519MLKEM768, 128, mkPhase(1, 40.1, 44.0, 24.3, 16.4), mkPhase(concurrency, 220.9, 262.7, 58.0, 16.6))

	ssh := []*measure.Result{
		mkRow(measure.SSH, keys.Ed25519, measure.Curve25519SHA, 128, mkPhase(1, 55.3, 60.2, 17.9, 21.0), mkPhase(concurrency, 280.0, 310.0, 28.5)),
		mkRow(measure.SSH, keys.ECDSAP256, measure.Curve25519SHA, 128, mkPhase(1, 60.9, 66.1, 16.2, 24.5), mkPhase(concurrency, 330.3, 380.0, 24.1)),
		mkRow(measure.SSH, keys.RSA2048, measure.Curve25519SHA, 112, mkPhase(1, 120.6, 131.0, 8.1, 109.9), mkPhase(concurrency, 901.7, 990.4, 8.0)),
	}
	ssh[2].KeygenMs = 3210.5
	sshPQ := mkRow(measure.SSH, keys.RSA2048, measure.MLKEM768X25519S, 112, mkPhase(1, 125.0, 140.2, 7.8, 112.0), mkPhase(concurrency, 950.1, 1040.6, 7.5))

	target := time.Duration(targetMs) * time.Millisecond
	var ch choose.Choice
	var err error
	ch.TLS, err = choose.Key(measure.Candidates(tls), choose.Policy{Target: target, Concurrency: concurrency, MinStrength: keys.MinStrength})
	if err != nil {
		t.Fatal(err)
	}
	ch.SSH, err = choose.Key(measure.Candidates(ssh), choose.Policy{Target: target, Concurrency: concurrency, MinStrength: keys.MinStrength, Pin: string(keys.RSA2048)})
	if err != nil {
		t.Fatal(err)
	}
	if ch.TLS.Key != string(keys.ECDSAP256) || ch.SSH.Key != string(keys.RSA2048) || len(ch.SSH.Warnings) == 0 {
		t.Fatalf("fixture decision = TLS %s, SSH %s, SSH warnings %q; want ecdsa-p256, rsa-2048 and a warning", ch.TLS.Key, ch.SSH.Key, ch.SSH.Warnings)
	}
	classic, _ := tls[0].P95AtN()
	hybrid, measured := tlsPQ.P95AtN()
	ch.TLSPostQuantum, ch.TLSPQReason = choose.PostQuantum(choose.PQ{Setting: "auto", Target: target, Classic: classic, Hybrid: hybrid, Measured: measured})
	classic, _ = ssh[2].P95AtN()
	hybrid, measured = sshPQ.P95AtN()
	ch.SSHPostQuantum, ch.SSHPQReason = choose.PostQuantum(choose.PQ{Setting: "auto", Target: target, Classic: classic, Hybrid: hybrid, Measured: measured})
	ch.Target, ch.Concurrency = target.String(), concurrency

	return &Report{
		Machine: measure.Machine{
			// As measure.ThisMachine reads a BeagleBone Black.
			CPU: "ARMv7 Processor rev 2 (v7l) (Generic AM33XX (Flattened Device Tree))", Board: "TI AM335x BeagleBone Black",
			Cores: 1, Arch: "arm7", Kernel: "Linux 5.10.168-ti-r72", Go: "go1.26.8",
			Time: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), LoadGen: "in-process", Hostname: "bonesync", GOMAXPROC: 1,
		},
		Policy: Policy{TargetMs: targetMs, Concurrency: concurrency, BudgetS: 600, PostQuantum: "auto",
			PinSSH: string(keys.RSA2048), MinStrength: keys.MinStrength},
		TLS:           tls,
		TLSKex:        []*measure.Result{tls[0], tlsPQ},
		SSH:           ssh,
		SSHKex:        []*measure.Result{ssh[2], sshPQ},
		Choice:        ch,
		CAFingerprint: fingerprint,
		URLs:          []string{"https://bonesync.local/", "https://192.168.1.20/"},
		DurationS:     412.3,
		Notes:         []string{"the load came from this process, so process CPU figures are not split between server and client"},
	}
}

func consoleText(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.Console(&b); err != nil {
		t.Fatalf("Console() error = %v, want nil", err)
	}
	return b.String()
}

func TestJSONRoundTrip(t *testing.T) {
	r := mkReport(t)
	b, err := r.JSON()
	if err != nil {
		t.Fatalf("JSON() error = %v, want nil", err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(JSON()) error = %v, want nil", err)
	}
	if got.Choice.TLS.Key != r.Choice.TLS.Key {
		t.Errorf("Parse(JSON()).Choice.TLS.Key = %q, want %q", got.Choice.TLS.Key, r.Choice.TLS.Key)
	}
	if got.Choice.SSH.Key != r.Choice.SSH.Key {
		t.Errorf("Parse(JSON()).Choice.SSH.Key = %q, want %q", got.Choice.SSH.Key, r.Choice.SSH.Key)
	}
	if got.Choice.TLSPostQuantum != r.Choice.TLSPostQuantum {
		t.Errorf("Parse(JSON()).Choice.TLSPostQuantum = %v, want %v", got.Choice.TLSPostQuantum, r.Choice.TLSPostQuantum)
	}
	if len(got.TLS) != len(r.TLS) {
		t.Fatalf("len(Parse(JSON()).TLS) = %d, want %d", len(got.TLS), len(r.TLS))
	}
	for i, w := range r.TLS {
		g := got.TLS[i]
		if g.Key != w.Key || g.Dropped != w.Dropped || g.Reference != w.Reference {
			t.Errorf("Parse(JSON()).TLS[%d] = %s dropped %q reference %v, want %s dropped %q reference %v",
				i, g.Key, g.Dropped, g.Reference, w.Key, w.Dropped, w.Reference)
		}
		if (g.Full1 == nil) != (w.Full1 == nil) || (g.FullN == nil) != (w.FullN == nil) {
			t.Errorf("Parse(JSON()).TLS[%d] phases present = %v %v, want %v %v", i, g.Full1 != nil, g.FullN != nil, w.Full1 != nil, w.FullN != nil)
			continue
		}
		if w.Full1 != nil && g.Full1.Latency != w.Full1.Latency {
			t.Errorf("Parse(JSON()).TLS[%d].Full1.Latency = %+v, want %+v", i, g.Full1.Latency, w.Full1.Latency)
		}
		if w.FullN != nil && g.FullN.Latency != w.FullN.Latency {
			t.Errorf("Parse(JSON()).TLS[%d].FullN.Latency = %+v, want %+v", i, g.FullN.Latency, w.FullN.Latency)
		}
	}
	// Everything else survives too.
	if !reflect.DeepEqual(got, r) {
		t.Errorf("Parse(JSON()) = %+v, want %+v", got, r)
	}
}

func TestParseRejects(t *testing.T) {
	b, err := mkReport(t).JSON()
	if err != nil {
		t.Fatal(err)
	}
	v2 := strings.Replace(string(b), `"version": 1,`, `"version": 2,`, 1)
	if v2 == string(b) {
		t.Fatalf("JSON() has no %q to replace:\n%s", `"version": 1,`, b)
	}
	noVersion := strings.Replace(string(b), `"version": 1,`, ``, 1)
	for _, in := range []string{v2, noVersion, "", "garbage", "{", `{"version": "1"}`, string(b[:len(b)/2])} {
		if r, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%.40q) = %v, nil; want an error", in, r)
		}
	}
}

// tableRows returns the table rows under the title line starting with title
// (the header skipped), up to the next blank line.
func tableRows(t *testing.T, out, title string) []string {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, title) {
			continue
		}
		var rows []string
		for _, r := range lines[i+2:] {
			if r == "" || strings.HasPrefix(r, "* ") {
				break
			}
			rows = append(rows, r)
		}
		return rows
	}
	t.Fatalf("Console() has no section %q:\n%s", title, out)
	return nil
}

func TestConsoleRows(t *testing.T) {
	r := mkReport(t)
	out := consoleText(t, r)
	p50 := func(r *measure.Result) string {
		if r.Full1 == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f", r.Full1.Latency.P50)
	}
	for _, tc := range []struct {
		title string
		rows  []*measure.Result
		name  func(*measure.Result) string
		col   int // the p50@1 column
	}{
		{"TLS server keys", r.TLS, func(r *measure.Result) string { return string(r.Key) }, 4},
		{"TLS key exchange", r.TLSKex, func(r *measure.Result) string { return r.Kex }, 3},
		{"SSH host keys", r.SSH, func(r *measure.Result) string { return string(r.Key) }, 4},
		{"SSH key exchange", r.SSHKex, func(r *measure.Result) string { return r.Kex }, 3},
	} {
		lines := tableRows(t, out, tc.title)
		if len(lines) != len(tc.rows) {
			t.Errorf("Console() section %q has %d rows, want %d:\n%s", tc.title, len(lines), len(tc.rows), strings.Join(lines, "\n"))
			continue
		}
		for i, row := range tc.rows {
			f := strings.Fields(lines[i])
			if len(f) <= tc.col || f[0] != tc.name(row) || f[tc.col] != p50(row) {
				t.Errorf("Console() %q row %d = %q, want %s with p50@1 %s in column %d", tc.title, i, lines[i], tc.name(row), p50(row), tc.col)
			}
		}
	}

	// The dropped and reference rows say so.
	tlsRows := tableRows(t, out, "TLS server keys")
	for _, want := range []struct {
		line int
		text string
	}{
		{2, "reference"},
		{4, "over*"},
		{5, "-*"},
		{0, "CHOSEN"},
	} {
		if !strings.HasSuffix(tlsRows[want.line], "  "+want.text) {
			t.Errorf("Console() TLS row %d = %q, want it to end %q", want.line, tlsRows[want.line], want.text)
		}
	}
}

func TestConsoleSummary(t *testing.T) {
	r := mkReport(t)
	// Prose is folded to the console's width: compare with the line breaks
	// and indents folded away.
	raw := consoleText(t, r)
	out := flat(raw)
	fp := FingerprintLines(fingerprint)
	if !strings.Contains(raw, "\n  "+fp[0]+"\n  "+fp[1]+"\n") || strings.Join(fp, ":") != fingerprint {
		t.Errorf("Console() does not show the fingerprint as two 16-byte lines %q:\n%s", fp, raw)
	}
	for _, want := range []string{
		"Chosen HTTPS key: " + r.Choice.TLS.Key + " (128-bit), meets the target, offering " + measure.X25519MLKEM768,
		"Chosen SFTP host key: " + r.Choice.SSH.Key + " (112-bit), DOES NOT meet the target",
		"- " + r.Choice.TLSPQReason,
		"note: " + r.Notes[0],
		"https://bonesync.local/",
	} {
		if !strings.Contains(out, flat(want)) {
			t.Errorf("Console() does not contain %q:\n%s", want, out)
		}
	}
	for _, wn := range r.Choice.SSH.Warnings {
		if want := flat("WARNING: " + wn); !strings.Contains(out, want) {
			t.Errorf("Console() does not contain %q:\n%s", want, out)
		}
	}

	r.Choice.BenchmarkFailure = "load generator exited"
	if out, want := flat(consoleText(t, r)), "WARNING: the benchmark failed (load generator exited)"; !strings.Contains(out, want) {
		t.Errorf("Console() with BenchmarkFailure does not contain %q:\n%s", want, out)
	}
}

// The console is for a terminal or the serial console: no line may wrap.
const maxWidth = 80

// The tables, headers included, fit.
func TestConsoleTableWidth(t *testing.T) {
	out := consoleText(t, mkReport(t))
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "TLS ") && !strings.HasPrefix(l, "SSH ") {
			continue
		}
		// The title, the header and the rows up to the blank line.
		for j := i; j < len(lines) && lines[j] != ""; j++ {
			if n := len([]rune(lines[j])); n > maxWidth {
				t.Errorf("Console() table line %d is %d characters, want at most %d:\n%s", j+1, n, maxWidth, lines[j])
			}
		}
	}
}

// Every line fits, the prose included.
func TestConsoleWidth(t *testing.T) {
	out := consoleText(t, mkReport(t))
	for i, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > maxWidth {
			t.Errorf("Console() line %d is %d characters, want at most %d:\n%s", i+1, n, maxWidth, l)
		}
	}
}

// svgDoc is what a chart holds, read with an XML decoder.
type svgDoc struct {
	bars   []svgBar // rects with a title
	texts  []string // the text elements' contents
	svgW   float64
	others int // rects without a title (the legend)
}

type svgBar struct {
	title    string
	x, width float64
}

func readSVG(t *testing.T, s string) svgDoc {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(strings.NewReader(s))
	var stack []string
	var cur *svgBar
	var text strings.Builder
	attr := func(e xml.StartElement, name string) float64 {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				v, err := strconv.ParseFloat(a.Value, 64)
				if err != nil {
					t.Errorf("Chart() <%s %s=%q>: %v", e.Name.Local, name, a.Value, err)
				}
				return v
			}
		}
		t.Errorf("Chart() <%s> has no %s", e.Name.Local, name)
		return 0
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Chart() is not well-formed XML: %v\n%s", err, s)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
			text.Reset()
			switch e.Name.Local {
			case "svg":
				for _, a := range e.Attr {
					if a.Name.Local == "viewBox" {
						f := strings.Fields(a.Value)
						doc.svgW, _ = strconv.ParseFloat(f[2], 64)
					}
				}
			case "rect":
				cur = &svgBar{x: attr(e, "x"), width: attr(e, "width")}
			}
		case xml.CharData:
			text.Write(e)
		case xml.EndElement:
			switch e.Name.Local {
			case "title":
				if len(stack) >= 2 && stack[len(stack)-2] == "rect" && cur != nil {
					cur.title = text.String()
				}
			case "text":
				doc.texts = append(doc.texts, text.String())
			case "rect":
				if cur.title != "" {
					doc.bars = append(doc.bars, *cur)
				} else {
					doc.others++
				}
				cur = nil
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("Chart() leaves elements open: %v", stack)
	}
	return doc
}

func countOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

func TestChart(t *testing.T) {
	r := mkReport(t)
	// A key name that must be escaped.
	odd := mkRow(measure.TLS, `odd<&"key'>`, measure.X25519, 128, mkPhase(1, 5.5, 6.25, 100, 1), mkPhase(concurrency, 30, 31.5, 200, 1))
	rows := append(r.TLS, odd)
	s := Chart(`TLS <latency> & "more"`, rows, targetMs, concurrency)
	doc := readSVG(t, s)

	var want []string
	notMeasured := 0
	for _, row := range rows {
		add := func(series string, p *measure.Phase, p95 bool) {
			if p == nil {
				notMeasured++
				return
			}
			v := p.Latency.P50
			if p95 {
				v = p.Latency.P95
			}
			want = append(want, fmt.Sprintf("%s %s: %.2f ms", row.Key, series, v))
		}
		add("p50, 1 client", row.Full1, false)
		add("p95, 1 client", row.Full1, true)
		add(fmt.Sprintf("p95, %d clients", concurrency), row.FullN, true)
	}
	var got []string
	for _, b := range doc.bars {
		got = append(got, b.title)
		if b.width < 1 || b.x+b.width > doc.svgW {
			t.Errorf("Chart() bar %q spans x %.1f to %.1f, want within 0 to %.0f", b.title, b.x, b.x+b.width, doc.svgW)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Chart() bar titles =\n%q\nwant\n%q", got, want)
	}
	if n := countOf(doc.texts, "not measured"); n != notMeasured {
		t.Errorf("Chart() has %d \"not measured\" labels, want %d", n, notMeasured)
	}
	if n := countOf(doc.texts, "target 500 ms"); n != 1 {
		t.Errorf("Chart() has %d \"target 500 ms\" labels, want 1", n)
	}
	for _, row := range rows {
		if n := countOf(doc.texts, string(row.Key)); n != 1 {
			t.Errorf("Chart() has %d labels %q, want 1", n, row.Key)
		}
	}
	if n := countOf(doc.texts, `TLS <latency> & "more"`); n != 1 {
		t.Errorf("Chart() has %d title texts %q, want 1", n, `TLS <latency> & "more"`)
	}
	if doc.others != 3 {
		t.Errorf("Chart() has %d legend rects, want 3", doc.others)
	}
	if strings.Contains(s, "odd<&") {
		t.Errorf("Chart() holds the key name unescaped:\n%s", s)
	}
}

func TestChartNothingMeasured(t *testing.T) {
	rows := []*measure.Result{mkRow(measure.SSH, keys.RSA4096, measure.Curve25519SHA, 128, nil, nil)}
	s := Chart("SSH", rows, targetMs, concurrency)
	doc := readSVG(t, s)
	if len(doc.bars) != 0 {
		t.Errorf("Chart() with nothing measured has bars %v, want none", doc.bars)
	}
	if n := countOf(doc.texts, "not measured"); n != 3 {
		t.Errorf("Chart() with nothing measured has %d \"not measured\" labels, want 3", n)
	}
	if strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
		t.Errorf("Chart() with nothing measured has NaN or Inf coordinates:\n%s", s)
	}
}

func TestPage(t *testing.T) {
	r := mkReport(t)
	r.Choice.TLS.Warnings = append(r.Choice.TLS.Warnings, `<script>alert("x")</script>`)
	var b strings.Builder
	if err := r.Page(&b, "http://box.local:8080/ca.crt", ""); err != nil {
		t.Fatalf("Page() error = %v, want nil", err)
	}
	page := b.String()
	if !strings.Contains(page, `font-weight="bold">`+r.Choice.TLS.Key+`</text>`) {
		t.Error("the chosen TLS key is not in bold on the chart")
	}

	for _, c := range []string{
		ChartChosen("TLS handshake latency by server key (log scale; chosen in bold)", r.TLS, targetMs, concurrency, r.Choice.TLS.Key),
		ChartChosen("SSH handshake latency by host key (log scale; chosen in bold)", r.SSH, targetMs, concurrency, r.Choice.SSH.Key),
	} {
		if !strings.Contains(page, c) {
			t.Errorf("Page() does not contain the chart %.80s...", c)
		}
	}

	start, end := strings.Index(page, `<pre tabindex="0">`), strings.Index(page, "</pre>")
	if start < 0 || end < start {
		t.Fatalf("Page() has no <pre>...</pre>:\n%s", page)
	}
	if got, want := html.UnescapeString(page[start+len(`<pre tabindex="0">`):end]), consoleText(t, r); got != want {
		t.Errorf("Page() <pre> holds\n%s\nwant the console table\n%s", got, want)
	}

	if strings.Contains(page, "<script") {
		t.Errorf("Page() contains an unescaped <script>:\n%s", page)
	}
	// The calendar steps name the box's own URL.
	r.URLs = []string{"https://box.local/", "https://box.local/dav/ (WebDAV)"}
	b.Reset()
	r.Page(&b, "http://box.local:8080/ca.crt", "")
	for _, want := range []string{"base URL <code>https://box.local/</code>", "server <code>box.local</code>", "https://box.local/remote.php/dav/calendars/USER/",
		`<a href="http://box.local:8080/">http://box.local:8080/</a>`, `<a href="/trust">`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the calendars section lacks %q", want)
		}
	}
	if want := `<p class="warn">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</p>`; !strings.Contains(page, want) {
		t.Errorf("Page() does not contain %q:\n%s", want, page)
	}
	if want := string(FingerprintHTML(fingerprint)); !strings.Contains(page, want) {
		t.Errorf("Page() does not show the CA fingerprint as %s", want)
	}
}

// A fingerprint on a page wraps only where FingerprintHTML puts a <wbr>:
// after each colon of a CA's hex pairs, between groups of 8 of an SSH
// key's; without the tags it is the fingerprint itself.
func TestFingerprintHTML(t *testing.T) {
	ssh := "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"
	for fp, want := range map[string][]string{
		fingerprint: strings.SplitAfter(fingerprint, ":"),
		ssh:         {"SHA256:", "uNiVztks", "CsDhcc0u", "9e8BujQX", "VUpKZIDT", "MczCvj3t", "D2s"},
		"a<b":       {"a&lt;b"},
		"":          {""},
	} {
		got := string(FingerprintHTML(fp))
		inner, ok := strings.CutPrefix(got, `<span class="fp">`)
		inner, ok2 := strings.CutSuffix(inner, "</span>")
		if !ok || !ok2 {
			t.Errorf("FingerprintHTML(%q) = %s, want it in a span of class fp", fp, got)
			continue
		}
		if pieces := strings.Split(inner, "<wbr>"); !reflect.DeepEqual(pieces, want) {
			t.Errorf("FingerprintHTML(%q) wraps as %q, want %q", fp, pieces, want)
		}
	}
}

func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// The reasons are told apart by protocol, and lists read as a person
// writes them, not as Go prints a slice.
func TestConsoleReasons(t *testing.T) {
	out := consoleText(t, mkReport(t))
	https, sftp := strings.Index(out, "Why this HTTPS key:"), strings.Index(out, "Why this SFTP host key:")
	if https < 0 || sftp < https {
		t.Errorf("the reasons are not labelled HTTPS, then SFTP:\n%s", out)
	}
	if strings.Contains(out, "[") {
		t.Errorf("a Go slice in the console report:\n%s", out)
	}
}
