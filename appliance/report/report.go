// Package report renders what the benchmark measured and what was chosen: a
// fixed-width table for the console, report.json, and the HTTPS status page
// with a latency chart drawn as SVG. It only renders.
package report

import (
	"encoding/json"
	"fmt"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/measure"
)

// Version of the report.json layout (v1.go).
const Version = 1

// Report is what report.json holds; its format on disk is v1.go's.
type Report struct {
	Machine measure.Machine
	Policy  Policy
	// TLS holds one row per TLS server key, measured with X25519.
	TLS []*measure.Result
	// TLSKex holds the chosen key measured with each key exchange.
	TLSKex []*measure.Result
	// SSH holds one row per host key, measured with curve25519-sha256.
	SSH    []*measure.Result
	SSHKex []*measure.Result
	Choice choose.Choice
	// CAFingerprint is the SHA-256 of the CA certificate.
	CAFingerprint string
	// HostKeyFingerprint is the SFTP host key's, as OpenSSH prints it at
	// a first connection ("SHA256:...").
	HostKeyFingerprint string
	// OtherHostKeyFingerprint is the other family's host key's
	// (Choice.SSHOther), which a client that cannot take the chosen
	// one's signatures sees; "" when there is none.
	OtherHostKeyFingerprint string
	URLs                    []string
	DurationS               float64
	Notes                   []string
}

// Policy is what the benchmark and the choice were asked to do.
type Policy struct {
	TargetMs    float64
	Concurrency int
	BudgetS     float64
	Quick       bool
	PostQuantum string
	PinTLS      string
	PinSSH      string
	MinStrength int
}

// JSON encodes r as report.json.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r.toV1(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Public is the report as anyone on the network may see it: the benchmark,
// the choice and the CA fingerprint; not the software versions (kernel,
// Go), which tell an attacker what to try, nor the CPU's model, the host's
// name or the box's URLs. The full report is for logged-in users and the
// console.
func (r *Report) Public() *Report {
	p := *r
	p.Machine.Kernel, p.Machine.Go, p.Machine.CPU, p.Machine.Hostname, p.Machine.Board = "", "", "", "", ""
	p.URLs = nil
	return &p
}

// Parse decodes report.json.
func Parse(b []byte) (*Report, error) {
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.Version != 1 {
		return nil, fmt.Errorf("report version %d, which this bonesync does not know (it reads 1)", v.Version)
	}
	var f fileV1
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	return f.report(), nil
}
