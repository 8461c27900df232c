package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/bonesync/bonesync/appliance/measure"
)

// Chart draws latency by key as an SVG: for each row a bar for p50 with one
// client, p95 with one client and p95 with N, on a logarithmic axis (an RSA-4096
// handshake costs fifty times an ECDSA one), with the target as a dashed line.
// It uses no external assets.
func Chart(title string, rows []*measure.Result, targetMs float64, n int) string {
	return ChartChosen(title, rows, targetMs, n, "")
}

// ChartChosen is Chart with the chosen key's label in bold.
func ChartChosen(title string, rows []*measure.Result, targetMs float64, n int, chosen string) string {
	series := []struct {
		name  string
		color string
		get   func(*measure.Result) float64
	}{
		{"p50, 1 client", "#4c78a8", func(r *measure.Result) float64 { return lat(r.Full1, false) }},
		{"p95, 1 client", "#72b7b2", func(r *measure.Result) float64 { return lat(r.Full1, true) }},
		{fmt.Sprintf("p95, %d clients", n), "#f58518", func(r *measure.Result) float64 { return lat(r.FullN, true) }},
	}
	lo, hi := math.Inf(1), targetMs
	for _, r := range rows {
		for _, s := range series {
			if v := s.get(r); v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo = targetMs / 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(math.Min(lo, targetMs))))
	hi *= 1.3 // room for the longest bar, not a whole empty decade

	const (
		left, right, top = 110.0, 20.0, 40.0
		width            = 720.0
		barH, gap        = 9.0, 10.0
	)
	rowH := barH*float64(len(series)) + gap
	height := top + rowH*float64(len(rows)) + 50
	plotW := width - left - right
	x := func(v float64) float64 {
		return left + plotW*(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s" font-family="sans-serif" font-size="11">`, width, height, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" font-size="13" font-weight="bold">%s</text>`, left, html.EscapeString(title))
	// Grid at 1, 2 and 5 of each decade.
	for d := lo; d <= hi; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := d * m
			if v > hi {
				break
			}
			stroke, label := "#eee", ""
			if m == 1 {
				stroke, label = "#ccc", trim(v)+" ms"
			} else if (math.Log10(hi) - math.Log10(lo)) < 3 {
				label = trim(v)
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s"/>`, x(v), top-6, x(v), height-40, stroke)
			if label != "" {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#555">%s</text>`, x(v), height-26, label)
			}
		}
	}
	for i, r := range rows {
		y0 := top + float64(i)*rowH
		weight := "normal"
		if string(r.Key) == chosen {
			weight = "bold"
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" font-weight="%s">%s</text>`, left-8, y0+barH*1.5+3, weight, html.EscapeString(string(r.Key)))
		for k, s := range series {
			v := s.get(r)
			y := y0 + float64(k)*barH
			if v <= 0 {
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" fill="#999" font-size="9">not measured</text>`, left+4, y+barH-1)
				continue
			}
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %.2f ms</title></rect>`,
				left, y, math.Max(1, x(v)-left), barH-1, s.color, html.EscapeString(string(r.Key)), s.name, v)
		}
	}
	tx := x(targetMs)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#d62728" stroke-dasharray="4 3" stroke-width="1.5"/>`, tx, top-10, tx, height-40)
	anchor := "middle"
	if tx > width-right-40 {
		anchor = "end" // keep the label inside the picture
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" fill="#d62728" text-anchor="%s">target %s ms</text>`, tx, top-12, anchor, trim(targetMs))
	lx := left
	for _, s := range series {
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`, lx, height-14, s.color, lx+14, height-5, html.EscapeString(s.name))
		lx += 150
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func lat(p *measure.Phase, p95 bool) float64 {
	if p == nil || p.Latency.N == 0 {
		return 0
	}
	if p95 {
		return p.Latency.P95
	}
	return p.Latency.P50
}

func trim(v float64) string { return fmt.Sprintf("%g", v) }
