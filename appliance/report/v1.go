package report

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
)

// The state files' format, version 1: report.json and decision.json as
// bonesync 0.1 wrote them (testdata/v1 holds a pair it wrote). These types
// are the format, apart from the types the code works with (measure.Result,
// choose.Choice, ...), so that a refactor of those cannot change what an
// older state directory holds or what /report.json serves. A field may be
// added here (omitempty; older files read as its zero value); a change of
// meaning is a new Version, and Parse keeps reading the older ones.

type fileV1 struct {
	Version       int        `json:"version"`
	Machine       machineV1  `json:"machine"`
	Policy        policyV1   `json:"policy"`
	TLS           []resultV1 `json:"tls"`
	TLSKex        []resultV1 `json:"tls_kex"`
	SSH           []resultV1 `json:"ssh"`
	SSHKex        []resultV1 `json:"ssh_kex"`
	Choice        choiceV1   `json:"decision"`
	CAFingerprint string     `json:"ca_fingerprint_sha256"`
	// The SSH host keys' fingerprints, as OpenSSH prints them.
	HostKeyFingerprint      string   `json:"host_key_fingerprint,omitempty"`
	OtherHostKeyFingerprint string   `json:"other_host_key_fingerprint,omitempty"`
	URLs                    []string `json:"urls"`
	DurationS               float64  `json:"duration_s"`
	Notes                   []string `json:"notes,omitempty"`
}

type machineV1 struct {
	CPU       string    `json:"cpu"`
	Board     string    `json:"board,omitempty"`
	Cores     int       `json:"cores"`
	Arch      string    `json:"arch"`
	Kernel    string    `json:"kernel"`
	Go        string    `json:"go"`
	Time      time.Time `json:"time"`
	LoadGen   string    `json:"load_generator"`
	Emulated  bool      `json:"emulated,omitempty"`
	Hostname  string    `json:"hostname,omitempty"`
	GOMAXPROC int       `json:"gomaxprocs"`
}

type policyV1 struct {
	TargetMs    float64 `json:"target_ms"`
	Concurrency int     `json:"concurrency"`
	BudgetS     float64 `json:"budget_s"`
	Quick       bool    `json:"quick,omitempty"`
	PostQuantum string  `json:"post_quantum"`
	PinTLS      string  `json:"pinned_tls_key,omitempty"`
	PinSSH      string  `json:"pinned_ssh_host_key,omitempty"`
	MinStrength int     `json:"min_strength_bits"`
}

type resultV1 struct {
	Proto     string   `json:"proto"`
	Key       string   `json:"key"`
	Kex       string   `json:"kex"`
	Strength  int      `json:"strength_bits"`
	Reference bool     `json:"reference,omitempty"`
	Full1     *phaseV1 `json:"full_1,omitempty"`
	FullN     *phaseV1 `json:"full_n,omitempty"`
	Resumed1  *phaseV1 `json:"resumed_1,omitempty"`
	ResumedN  *phaseV1 `json:"resumed_n,omitempty"`
	Dropped   string   `json:"dropped,omitempty"`
	KeygenMs  float64  `json:"keygen_ms,omitempty"`
}

type phaseV1 struct {
	Clients          int       `json:"clients"`
	Resumed          bool      `json:"resumed"`
	Latency          statsV1   `json:"latency"`
	ServerCPU        statsV1   `json:"server_cpu"`
	Rate             float64   `json:"handshakes_per_s"`
	ServerProcessCPU float64   `json:"server_process_cpu_ms_per_handshake"`
	ClientProcessCPU float64   `json:"client_process_cpu_ms_per_handshake,omitempty"`
	Elapsed          float64   `json:"elapsed_ms"`
	Errors           int       `json:"errors,omitempty"`
	FirstError       string    `json:"first_error,omitempty"`
	NotResumed       int       `json:"not_resumed,omitempty"`
	LatencySamples   []float64 `json:"latency_samples_ms"`
	CPUSamples       []float64 `json:"server_cpu_samples_ms"`
}

type statsV1 struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// choiceV1 is decision.json, and the report's "decision".
type choiceV1 struct {
	TLS              decisionV1  `json:"tls"`
	TLSOther         *decisionV1 `json:"tls_other,omitempty"`
	SSHOther         *decisionV1 `json:"ssh_other,omitempty"`
	TLSPostQuantum   bool        `json:"tls_post_quantum"`
	TLSPQReason      string      `json:"tls_post_quantum_reason"`
	SSH              decisionV1  `json:"ssh"`
	SSHPostQuantum   bool        `json:"ssh_post_quantum"`
	SSHPQReason      string      `json:"ssh_post_quantum_reason"`
	Target           string      `json:"target"`
	Concurrency      int         `json:"concurrency"`
	BenchmarkFailure string      `json:"benchmark_failure,omitempty"`
}

type decisionV1 struct {
	Key       string            `json:"key"`
	MetTarget bool              `json:"met_target"`
	Pinned    bool              `json:"pinned,omitempty"`
	Reasons   []string          `json:"reasons"`
	Warnings  []string          `json:"warnings,omitempty"`
	Verdicts  map[string]string `json:"verdicts"`
}

// EncodeDecision is decision.json for c.
func EncodeDecision(c choose.Choice) ([]byte, error) {
	b, err := json.MarshalIndent(choiceToV1(c), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseDecision reads decision.json.
func ParseDecision(b []byte) (choose.Choice, error) {
	var c choiceV1
	if err := json.Unmarshal(b, &c); err != nil {
		return choose.Choice{}, err
	}
	if c.TLS.Key == "" || c.SSH.Key == "" {
		return choose.Choice{}, fmt.Errorf("no key chosen")
	}
	return c.choice(), nil
}

func (r *Report) toV1() fileV1 {
	m := r.Machine
	p := r.Policy
	return fileV1{
		Version: Version,
		Machine: machineV1{CPU: m.CPU, Board: m.Board, Cores: m.Cores, Arch: m.Arch, Kernel: m.Kernel, Go: m.Go,
			Time: m.Time, LoadGen: m.LoadGen, Emulated: m.Emulated, Hostname: m.Hostname, GOMAXPROC: m.GOMAXPROC},
		Policy: policyV1(p),
		TLS:    resultsToV1(r.TLS), TLSKex: resultsToV1(r.TLSKex), SSH: resultsToV1(r.SSH), SSHKex: resultsToV1(r.SSHKex),
		Choice:        choiceToV1(r.Choice),
		CAFingerprint: r.CAFingerprint, URLs: r.URLs, DurationS: r.DurationS, Notes: r.Notes,
		HostKeyFingerprint: r.HostKeyFingerprint, OtherHostKeyFingerprint: r.OtherHostKeyFingerprint,
	}
}

func (f fileV1) report() *Report {
	m, p := f.Machine, f.Policy
	return &Report{
		Machine: measure.Machine{CPU: m.CPU, Board: m.Board, Cores: m.Cores, Arch: m.Arch, Kernel: m.Kernel, Go: m.Go,
			Time: m.Time, LoadGen: m.LoadGen, Emulated: m.Emulated, Hostname: m.Hostname, GOMAXPROC: m.GOMAXPROC},
		Policy: Policy(p),
		TLS:    resultsFromV1(f.TLS), TLSKex: resultsFromV1(f.TLSKex), SSH: resultsFromV1(f.SSH), SSHKex: resultsFromV1(f.SSHKex),
		Choice:        f.Choice.choice(),
		CAFingerprint: f.CAFingerprint, URLs: f.URLs, DurationS: f.DurationS, Notes: f.Notes,
		HostKeyFingerprint: f.HostKeyFingerprint, OtherHostKeyFingerprint: f.OtherHostKeyFingerprint,
	}
}

func resultsToV1(rs []*measure.Result) []resultV1 {
	if rs == nil {
		return nil
	}
	out := make([]resultV1, len(rs))
	for i, r := range rs {
		out[i] = resultV1{Proto: r.Proto, Key: string(r.Key), Kex: r.Kex, Strength: r.Strength, Reference: r.Reference,
			Full1: phaseToV1(r.Full1), FullN: phaseToV1(r.FullN), Resumed1: phaseToV1(r.Resumed1), ResumedN: phaseToV1(r.ResumedN),
			Dropped: r.Dropped, KeygenMs: r.KeygenMs}
	}
	return out
}

func resultsFromV1(rs []resultV1) []*measure.Result {
	if rs == nil {
		return nil
	}
	out := make([]*measure.Result, len(rs))
	for i, r := range rs {
		out[i] = &measure.Result{Proto: r.Proto, Key: keys.Name(r.Key), Kex: r.Kex, Strength: r.Strength, Reference: r.Reference,
			Full1: r.Full1.phase(), FullN: r.FullN.phase(), Resumed1: r.Resumed1.phase(), ResumedN: r.ResumedN.phase(),
			Dropped: r.Dropped, KeygenMs: r.KeygenMs}
	}
	return out
}

func phaseToV1(p *measure.Phase) *phaseV1 {
	if p == nil {
		return nil
	}
	return &phaseV1{Clients: p.Clients, Resumed: p.Resumed, Latency: statsV1(p.Latency), ServerCPU: statsV1(p.ServerCPU),
		Rate: p.Rate, ServerProcessCPU: p.ServerProcessCPU, ClientProcessCPU: p.ClientProcessCPU, Elapsed: p.Elapsed,
		Errors: p.Errors, FirstError: p.FirstError, NotResumed: p.NotResumed,
		LatencySamples: p.LatencySamples, CPUSamples: p.CPUSamples}
}

func (p *phaseV1) phase() *measure.Phase {
	if p == nil {
		return nil
	}
	return &measure.Phase{Clients: p.Clients, Resumed: p.Resumed, Latency: measure.Stats(p.Latency), ServerCPU: measure.Stats(p.ServerCPU),
		Rate: p.Rate, ServerProcessCPU: p.ServerProcessCPU, ClientProcessCPU: p.ClientProcessCPU, Elapsed: p.Elapsed,
		Errors: p.Errors, FirstError: p.FirstError, NotResumed: p.NotResumed,
		LatencySamples: p.LatencySamples, CPUSamples: p.CPUSamples}
}

func choiceToV1(c choose.Choice) choiceV1 {
	return choiceV1{TLS: decisionToV1(c.TLS), TLSPostQuantum: c.TLSPostQuantum, TLSPQReason: c.TLSPQReason,
		SSH: decisionToV1(c.SSH), SSHPostQuantum: c.SSHPostQuantum, SSHPQReason: c.SSHPQReason,
		TLSOther: otherToV1(c.TLSOther), SSHOther: otherToV1(c.SSHOther),
		Target: c.Target, Concurrency: c.Concurrency, BenchmarkFailure: c.BenchmarkFailure}
}

func otherToV1(d choose.Decision) *decisionV1 {
	if d.Key == "" {
		return nil
	}
	v := decisionToV1(d)
	return &v
}

func (d *decisionV1) other() choose.Decision {
	if d == nil {
		return choose.Decision{}
	}
	return d.decision()
}

func (c choiceV1) choice() choose.Choice {
	return choose.Choice{TLS: c.TLS.decision(), TLSPostQuantum: c.TLSPostQuantum, TLSPQReason: c.TLSPQReason,
		SSH: c.SSH.decision(), SSHPostQuantum: c.SSHPostQuantum, SSHPQReason: c.SSHPQReason,
		TLSOther: c.TLSOther.other(), SSHOther: c.SSHOther.other(),
		Target: c.Target, Concurrency: c.Concurrency, BenchmarkFailure: c.BenchmarkFailure}
}

func decisionToV1(d choose.Decision) decisionV1 {
	return decisionV1{Key: d.Key, MetTarget: d.MetTarget, Pinned: d.Pinned, Reasons: d.Reasons, Warnings: d.Warnings, Verdicts: d.Verdicts}
}

func (d decisionV1) decision() choose.Decision {
	return choose.Decision{Key: d.Key, MetTarget: d.MetTarget, Pinned: d.Pinned, Reasons: d.Reasons, Warnings: d.Warnings, Verdicts: d.Verdicts}
}
