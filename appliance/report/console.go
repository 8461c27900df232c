package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/bonesync/bonesync/appliance/bench"
	"github.com/bonesync/bonesync/appliance/choose"
)

// Console writes the report as fixed-width text, 80 columns wide, for a
// terminal or the serial console.
func (r *Report) Console(w io.Writer) error {
	var b strings.Builder
	n := r.Policy.Concurrency
	fmt.Fprintf(&b, "bonesync handshake benchmark: %s, %d cores, %s, %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.Kernel, r.Machine.Go)
	if r.Machine.Board != "" {
		fmt.Fprintf(&b, "board: %s\n", r.Machine.Board)
	}
	fmt.Fprintf(&b, "measured %s in %.0f s; load generated %s\n", r.Machine.Time.Format("2006-01-02 15:04 MST"), r.DurationS, r.Machine.LoadGen)
	fmt.Fprintf(&b, "target: p95 connect+handshake <= %.0f ms with %d clients at once; times in ms\n", r.Policy.TargetMs, n)

	keyTable(&b, "TLS server keys, key exchange X25519", r.TLS, r.Choice.TLS.Verdicts, n, true)
	kexTable(&b, "TLS key exchange, with the chosen key", r.TLSKex, r.Choice.TLSPostQuantum, n)
	keyTable(&b, "SSH host keys, key exchange curve25519-sha256", r.SSH, r.Choice.SSH.Verdicts, n, false)
	kexTable(&b, "SSH key exchange, with the chosen host key", r.SSHKex, r.Choice.SSHPostQuantum, n)

	b.WriteString("\n")
	chosen(&b, "HTTPS key", r.Choice.TLS, r.TLS, r.Choice.TLSPostQuantum, bench.X25519MLKEM768)
	chosen(&b, "SFTP host key", r.Choice.SSH, r.SSH, r.Choice.SSHPostQuantum, bench.MLKEM768X25519S)
	for _, why := range append(append(r.Choice.TLS.Reasons, r.Choice.TLSPQReason), append(r.Choice.SSH.Reasons, r.Choice.SSHPQReason)...) {
		if why != "" {
			fmt.Fprintf(&b, "  - %s\n", why)
		}
	}
	for _, wn := range append(r.Choice.TLS.Warnings, r.Choice.SSH.Warnings...) {
		fmt.Fprintf(&b, "  WARNING: %s\n", wn)
	}
	if r.Choice.BenchmarkFailure != "" {
		fmt.Fprintf(&b, "  WARNING: the benchmark failed (%s); safe defaults were chosen\n", r.Choice.BenchmarkFailure)
	}
	for _, note := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", note)
	}
	b.WriteString(Summary(r))
	_, err := io.WriteString(w, b.String())
	return err
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
	fmt.Fprintf(&b, "\nHTTPS key:      %s%s\n", r.Choice.TLS.Key, pq(r.Choice.TLSPostQuantum))
	fmt.Fprintf(&b, "SFTP host key:  %s%s\n", r.Choice.SSH.Key, pq(r.Choice.SSHPostQuantum))
	fmt.Fprintf(&b, "CA fingerprint (SHA-256):\n  %s\n", r.CAFingerprint)
	if len(r.URLs) > 0 {
		b.WriteString("Reach the box at:\n")
		for _, u := range r.URLs {
			fmt.Fprintf(&b, "  %s\n", u)
		}
	}
	return b.String()
}

func chosen(b *strings.Builder, what string, d choose.Decision, rows []*bench.Result, pq bool, hybrid string) {
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
	fmt.Fprintf(b, "Chosen %s: %s (%d-bit), %s%s\n", what, d.Key, bits, met, extra)
}

const keyHeader = "%-11s %4s %9s %8s %7s %7s %7s %8s  %s\n"

func keyTable(b *strings.Builder, title string, rows []*bench.Result, verdicts map[string]string, n int, resumed bool) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", title)
	res := "resumed"
	if !resumed {
		res = "keygen"
	}
	fmt.Fprintf(b, keyHeader, "key", "bits", "server ms", "hs/s", "p50@1", "p95@1", fmt.Sprintf("p95@%d", n), res, "verdict")
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

func kexTable(b *strings.Builder, title string, rows []*bench.Result, offered bool, n int) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s (%s)\n", title, rows[0].Key)
	const h = "%-23s %9s %8s %7s %7s %7s  %s\n"
	fmt.Fprintf(b, h, "key exchange", "server ms", "hs/s", "p50@1", "p95@1", fmt.Sprintf("p95@%d", n), "")
	for i, r := range rows {
		v := "always offered"
		if i > 0 {
			v = "not offered"
			if offered {
				v = "offered"
			}
		}
		if r.Dropped != "" {
			v += " (dropped early)"
		}
		fmt.Fprintf(b, h, r.Kex, f2(r.ServerCPU().P50), rate(r), p50(r.Full1), p95(r.Full1), p95(r.FullN), v)
	}
}

func verdict(r *bench.Result, v string) string {
	if r.Dropped != "" && v != choose.Chosen {
		if v == choose.ReferenceV {
			return v + ", dropped early"
		}
		return v + " (dropped early)"
	}
	return v
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

func rate(r *bench.Result) string {
	if v := r.Rate(); v > 0 {
		return fmt.Sprintf("%.1f", v)
	}
	return "-"
}

func p50(p *bench.Phase) string {
	if p == nil || p.Latency.N == 0 {
		return "-"
	}
	return f1(p.Latency.P50)
}

func p95(p *bench.Phase) string {
	if p == nil || p.Latency.N == 0 {
		return "-"
	}
	return f1(p.Latency.P95)
}
