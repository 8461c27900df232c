package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
)

// Console writes the report as fixed-width text, 80 columns wide, for a
// terminal or the serial console.
func (r *Report) Console(w io.Writer) error {
	var b strings.Builder
	n := r.Policy.Concurrency
	cores := "cores"
	if r.Machine.Cores == 1 {
		cores = "core"
	}
	b.WriteString("bonesync handshake benchmark\n")
	if r.Machine.Board != "" {
		wrap(&b, "board:   ", r.Machine.Board)
	}
	machine := fmt.Sprintf("%s, %d %s", r.Machine.CPU, r.Machine.Cores, cores)
	for _, v := range []string{r.Machine.Kernel, r.Machine.Go} {
		if v != "" { // left out of the public report
			machine += ", " + v
		}
	}
	wrap(&b, "machine: ", machine)
	wrap(&b, "run:     ", fmt.Sprintf("%s, %.0f s, load generated %s", r.Machine.Time.Format("2006-01-02 15:04 MST"), r.DurationS, r.Machine.LoadGen))
	wrap(&b, "target:  ", fmt.Sprintf("p95 connect+handshake <= %.0f ms with %d clients at once; times in ms", r.Policy.TargetMs, n))

	keyTable(&b, "TLS server keys, key exchange X25519", r.TLS, withOther(r.Choice.TLS, r.Choice.TLSOther), n, true)
	kexTable(&b, "TLS key exchange, with the chosen key", r.TLSKex, r.Choice.TLSPostQuantum, n)
	keyTable(&b, "SSH host keys, key exchange curve25519-sha256", r.SSH, withOther(r.Choice.SSH, r.Choice.SSHOther), n, false)
	kexTable(&b, "SSH key exchange, with the chosen host key", r.SSHKex, r.Choice.SSHPostQuantum, n)

	b.WriteString("\n")
	chosen(&b, "HTTPS key", r.Choice.TLS, r.TLS, r.Choice.TLSPostQuantum, measure.X25519MLKEM768)
	if o := r.Choice.TLSOther.Key; o != "" {
		wrap(&b, "  ", fmt.Sprintf("and beside it %s, for the clients that take only %s signatures", o, familyName(o)))
	}
	chosen(&b, "SFTP host key", r.Choice.SSH, r.SSH, r.Choice.SSHPostQuantum, measure.MLKEM768X25519S)
	if r.HostKeyFingerprint != "" {
		wrap(&b, "  ", "its fingerprint, as sftp shows it the first time: "+r.HostKeyFingerprint)
	}
	if o := r.Choice.SSHOther.Key; o != "" {
		wrap(&b, "  ", fmt.Sprintf("and beside it %s, for the clients that take only %s host keys: %s", o, familyName(o), r.OtherHostKeyFingerprint))
	}
	for _, part := range []struct {
		what    string
		reasons []string
	}{
		{"Why this HTTPS key:", append(slices.Clone(r.Choice.TLS.Reasons), r.Choice.TLSPQReason)},
		{"Why " + r.Choice.TLSOther.Key + " beside it:", r.Choice.TLSOther.Reasons},
		{"Why this SFTP host key:", append(slices.Clone(r.Choice.SSH.Reasons), r.Choice.SSHPQReason)},
		{"Why " + r.Choice.SSHOther.Key + " beside it:", r.Choice.SSHOther.Reasons},
	} {
		if !slices.ContainsFunc(part.reasons, func(s string) bool { return s != "" }) {
			continue
		}
		b.WriteString("  " + part.what + "\n")
		for _, why := range part.reasons {
			if why != "" {
				wrap(&b, "  - ", why)
			}
		}
	}
	for _, wn := range append(r.Choice.TLS.Warnings, r.Choice.SSH.Warnings...) {
		if !slices.Contains(r.Choice.TLS.Reasons, wn) && !slices.Contains(r.Choice.SSH.Reasons, wn) {
			wrap(&b, "  WARNING: ", wn)
		}
	}
	if r.Choice.BenchmarkFailure != "" {
		wrap(&b, "  WARNING: ", fmt.Sprintf("the benchmark failed (%s); safe defaults were chosen", r.Choice.BenchmarkFailure))
	}
	for _, note := range r.Notes {
		wrap(&b, "  note: ", note)
	}
	b.WriteString(Summary(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// Width is the console's line width: the serial console's 80 columns.
const Width = 80

// wrap writes text after prefix, folded at word boundaries to Width, with the
// continuation lines indented under the first.
func wrap(b *strings.Builder, prefix, text string) {
	indent := strings.Repeat(" ", len(prefix))
	line := prefix
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > Width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		if len(line) > len(indent) && !strings.HasSuffix(line, " ") {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
}

// FingerprintLines splits a colon-separated fingerprint into lines of 16
// bytes, to fit the console and to be read aloud half at a time.
func FingerprintLines(fp string) []string {
	var lines []string
	for len(fp) > 48 {
		lines = append(lines, fp[:47])
		fp = fp[48:]
	}
	return append(lines, fp)
}

// Summary is the short block printed at every boot: the chosen keys, the CA
// fingerprint and where to reach the box.
func Summary(r *Report) string {
	var b strings.Builder
	pq := func(on bool) string {
		if on {
			return ", post-quantum hybrid on"
		}
		return ""
	}
	other := func(d choose.Decision) string {
		if d.Key == "" {
			return ""
		}
		return fmt.Sprintf(" (%s for %s-only clients)", d.Key, familyName(d.Key))
	}
	fmt.Fprintf(&b, "\nHTTPS key:      %s%s%s\n", r.Choice.TLS.Key, pq(r.Choice.TLSPostQuantum), other(r.Choice.TLSOther))
	fmt.Fprintf(&b, "SFTP host key:  %s%s%s\n", r.Choice.SSH.Key, pq(r.Choice.SSHPostQuantum), other(r.Choice.SSHOther))
	for _, fp := range []string{r.HostKeyFingerprint, r.OtherHostKeyFingerprint} {
		if fp != "" { // as OpenSSH shows it at the first connection
			fmt.Fprintf(&b, "  %s\n", fp)
		}
	}
	b.WriteString("CA fingerprint (SHA-256):\n")
	for _, l := range FingerprintLines(r.CAFingerprint) {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if len(r.URLs) > 0 {
		b.WriteString("Reach the box at:\n")
		for _, u := range r.URLs {
			fmt.Fprintf(&b, "  %s\n", u)
		}
	}
	return b.String()
}

func chosen(b *strings.Builder, what string, d choose.Decision, rows []*measure.Result, pq bool, hybrid string) {
	bits := 0
	for _, r := range rows {
		if string(r.Key) == d.Key {
			bits = r.Strength
		}
	}
	met := "meets the target"
	if !d.MetTarget {
		met = "DOES NOT meet the target"
	}
	extra := ""
	if pq {
		extra = ", offering " + hybrid
	}
	wrap(b, "", fmt.Sprintf("Chosen %s: %s (%d-bit), %s%s", what, d.Key, bits, met, extra))
}

// withOther is d's verdicts with other's key marked as the one beside it
// (its own verdict after it: "BESIDE, meets").
func withOther(d, other choose.Decision) map[string]string {
	if other.Key == "" {
		return d.Verdicts
	}
	v := maps.Clone(d.Verdicts)
	if v == nil { // a fallback decision, after a failed benchmark, has none
		v = map[string]string{}
	}
	short := map[string]string{choose.Meets: "meets", choose.OverTarget: "over"}[v[other.Key]]
	v[other.Key] = strings.TrimSuffix("BESIDE, "+short, ", ")
	return v
}

// familyName is how the report names a key's family: "RSA", "ECDSA",
// "Ed25519".
func familyName(key string) string {
	switch f := keys.FamilyOf(key); f {
	case "ed25519":
		return "Ed25519"
	default:
		return strings.ToUpper(f)
	}
}

const keyHeader = "%-10s %4s %9s %7s %7s %7s %7s %8s  %s\n"

func keyTable(b *strings.Builder, title string, rows []*measure.Result, verdicts map[string]string, n int, resumed bool) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", title)
	res := "resumed"
	if !resumed {
		res = "keygen"
	}
	fmt.Fprintf(b, keyHeader, "key", "bits", "server ms", "hs/s", "p50@1", "p95@1", fmt.Sprintf("p95@%d", n), res, "verdict")
	defer func() {
		for _, r := range rows {
			if r.Dropped != "" {
				b.WriteString("* dropped early: clearly over the target (see report.json)\n")
				return
			}
		}
	}()
	for _, r := range rows {
		last := "-"
		if resumed {
			if r.ResumedN != nil {
				last = f1(r.ResumedN.Latency.P95)
			}
		} else if r.KeygenMs > 0 {
			last = f2(r.KeygenMs)
		}
		fmt.Fprintf(b, keyHeader, r.Key, fmt.Sprint(r.Strength), f2(r.ServerCPU().P50), rate(r),
			p50(r.Full1), p95(r.Full1), p95(r.FullN), last, verdict(r, verdicts[string(r.Key)]))
	}
}

func kexTable(b *strings.Builder, title string, rows []*measure.Result, offered bool, n int) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s (%s)\n", title, rows[0].Key)
	const h = "%-22s %9s %7s %7s %7s %7s  %s\n"
	fmt.Fprintf(b, h, "key exchange", "server ms", "hs/s", "p50@1", "p95@1", fmt.Sprintf("p95@%d", n), "offered")
	for i, r := range rows {
		v := "always"
		if i > 0 {
			v = "no"
			if offered {
				v = "yes"
			}
		}
		if r.Dropped != "" {
			v += "*"
		}
		fmt.Fprintf(b, h, r.Kex, f2(r.ServerCPU().P50), rate(r), p50(r.Full1), p95(r.Full1), p95(r.FullN), v)
	}
}

// verdict is the short form of a choose verdict that fits the table;
// a trailing * marks a candidate dropped early as clearly over the target.
func verdict(r *measure.Result, v string) string {
	short := map[string]string{
		choose.Chosen: "CHOSEN", choose.Meets: "meets", choose.OverTarget: "over",
		choose.TooWeak: "too weak", choose.ReferenceV: "reference", choose.NotMeasured: "-",
	}[v]
	if short == "" {
		short = v
	}
	if r.Dropped != "" && v != choose.Chosen {
		short += "*"
	}
	return short
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string {
	if v == 0 {
		return "-"
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func rate(r *measure.Result) string {
	if v := r.Rate(); v > 0 {
		return fmt.Sprintf("%.1f", v)
	}
	return "-"
}

func p50(p *measure.Phase) string {
	if p == nil || p.Latency.N == 0 {
		return "-"
	}
	return f1(p.Latency.P50)
}

func p95(p *measure.Phase) string {
	if p == nil || p.Latency.N == 0 {
		return "-"
	}
	return f1(p.Latency.P95)
}
