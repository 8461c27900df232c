package measure

import (
	"time"

	"github.com/bonesync/bonesync/appliance/keys"
)

// Protocols and key exchanges measured.
const (
	TLS = "tls"
	SSH = "ssh"

	X25519          = "X25519"
	X25519MLKEM768  = "X25519MLKEM768"
	Curve25519SHA   = "curve25519-sha256"
	MLKEM768X25519S = "mlkem768x25519-sha256"
)

// Phase is one run of handshakes at one concurrency.
type Phase struct {
	Clients int  `json:"clients"`
	Resumed bool `json:"resumed"`
	// Latency is connect plus handshake as the client saw it.
	Latency Stats `json:"latency"`
	// ServerCPU is the server's CPU time per handshake. For TLS it is read
	// from the handshake goroutine's own OS thread clock; for SSH, whose key
	// exchange runs on x/crypto/ssh's own goroutines, it is the process's CPU
	// time around each handshake, kept only with one client (with several the
	// handshakes overlap and ServerProcessCPU is the figure to use).
	ServerCPU Stats `json:"server_cpu"`
	// Rate is handshakes completed per second of wall time.
	Rate float64 `json:"handshakes_per_s"`
	// ServerProcessCPU and ClientProcessCPU are each process's whole CPU time
	// (user+system, all threads, GC included) divided by the handshakes: the
	// two sides told apart.
	ServerProcessCPU float64 `json:"server_process_cpu_ms_per_handshake"`
	ClientProcessCPU float64 `json:"client_process_cpu_ms_per_handshake,omitempty"`
	Elapsed          float64 `json:"elapsed_ms"`
	Errors           int     `json:"errors,omitempty"`
	FirstError       string  `json:"first_error,omitempty"`
	// NotResumed counts handshakes of a resumed phase that were full ones.
	NotResumed int `json:"not_resumed,omitempty"`
	// The raw samples, in milliseconds.
	LatencySamples []float64 `json:"latency_samples_ms"`
	CPUSamples     []float64 `json:"server_cpu_samples_ms"`
}

// Result is everything measured for one candidate: a key with a key exchange.
type Result struct {
	Proto     string    `json:"proto"`
	Key       keys.Name `json:"key"`
	Kex       string    `json:"kex"`
	Strength  int       `json:"strength_bits"`
	Reference bool      `json:"reference,omitempty"`
	Full1     *Phase    `json:"full_1,omitempty"`
	FullN     *Phase    `json:"full_n,omitempty"`
	Resumed1  *Phase    `json:"resumed_1,omitempty"`
	ResumedN  *Phase    `json:"resumed_n,omitempty"`
	// Dropped says why measuring stopped before every phase ran.
	Dropped string `json:"dropped,omitempty"`
	// KeygenMs is how long making a real key of this type took, where one was
	// made (the winner's), 0 otherwise.
	KeygenMs float64 `json:"keygen_ms,omitempty"`
}

// ServerCPU summarises the server CPU per full handshake over all full phases.
func (r *Result) ServerCPU() Stats {
	var s []float64
	for _, p := range []*Phase{r.Full1, r.FullN} {
		if p != nil {
			s = append(s, p.CPUSamples...)
		}
	}
	return Summarise(s)
}

// P95AtN is the p95 latency at the configured concurrency, if measured.
func (r *Result) P95AtN() (time.Duration, bool) {
	if r.FullN == nil || r.FullN.Latency.N == 0 {
		return 0, false
	}
	return Duration(r.FullN.Latency.P95), true
}

// Rate is the sustained full handshakes per second, at the configured
// concurrency where measured.
func (r *Result) Rate() float64 {
	if r.FullN != nil {
		return r.FullN.Rate
	}
	if r.Full1 != nil {
		return r.Full1.Rate
	}
	return 0
}
