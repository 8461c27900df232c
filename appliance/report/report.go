// Package report renders what the benchmark measured and what was chosen: a
// fixed-width table for the console, report.json, and the HTTPS status page
// with a latency chart drawn as SVG. It only renders.
package report

import (
	"encoding/json"
	"fmt"

	"github.com/bonesync/bonesync/appliance/bench"
	"github.com/bonesync/bonesync/appliance/choose"
)

// Version of the report.json layout.
const Version = 1

// Report is report.json.
type Report struct {
	Version int           `json:"version"`
	Machine bench.Machine `json:"machine"`
	Policy  Policy        `json:"policy"`
	// TLS holds one row per TLS server key, measured with X25519.
	TLS []*bench.Result `json:"tls"`
	// TLSKex holds the chosen key measured with each key exchange.
	TLSKex []*bench.Result `json:"tls_kex"`
	// SSH holds one row per host key, measured with curve25519-sha256.
	SSH    []*bench.Result `json:"ssh"`
	SSHKex []*bench.Result `json:"ssh_kex"`
	Choice choose.Choice   `json:"decision"`
	// CAFingerprint is the SHA-256 of the CA certificate.
	CAFingerprint string   `json:"ca_fingerprint_sha256"`
	URLs          []string `json:"urls"`
	DurationS     float64  `json:"duration_s"`
	Notes         []string `json:"notes,omitempty"`
}

// Policy is what the benchmark and the choice were asked to do.
type Policy struct {
	TargetMs    float64 `json:"target_ms"`
	Concurrency int     `json:"concurrency"`
	BudgetS     float64 `json:"budget_s"`
	Quick       bool    `json:"quick,omitempty"`
	PostQuantum string  `json:"post_quantum"`
	PinTLS      string  `json:"pinned_tls_key,omitempty"`
	PinSSH      string  `json:"pinned_ssh_host_key,omitempty"`
	MinStrength int     `json:"min_strength_bits"`
}

// JSON encodes r as report.json.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Public is the report as anyone on the network may see it: the benchmark,
// the choice and the CA, but not the software versions (kernel, Go), which
// tell an attacker what to try. The full report is for logged-in users and
// the console.
func (r *Report) Public() *Report {
	p := *r
	p.Machine.Kernel, p.Machine.Go = "", ""
	return &p
}

// Parse decodes report.json.
func Parse(b []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.Version != Version {
		return nil, fmt.Errorf("report version %d, want %d", r.Version, Version)
	}
	return &r, nil
}
