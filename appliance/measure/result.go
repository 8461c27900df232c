package measure

import (
	"time"

	"github.com/bonesync/bonesync/appliance/choose"
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
	Clients int
	Resumed bool
	// Latency is connect plus handshake as the client saw it.
	Latency Stats
	// ServerCPU is the server's CPU time per handshake. For TLS it is read
	// from the handshake goroutine's own OS thread clock; for SSH, whose key
	// exchange runs on x/crypto/ssh's own goroutines, it is the process's CPU
	// time around each handshake, kept only with one client (with several the
	// handshakes overlap and ServerProcessCPU is the figure to use).
	ServerCPU Stats
	// Rate is handshakes completed per second of wall time.
	Rate float64
	// ServerProcessCPU and ClientProcessCPU are each process's whole CPU time
	// (user+system, all threads, GC included) divided by the handshakes: the
	// two sides told apart.
	ServerProcessCPU float64
	ClientProcessCPU float64
	Elapsed          float64
	Errors           int
	FirstError       string
	// NotResumed counts handshakes of a resumed phase that were full ones.
	NotResumed int
	// The raw samples, in milliseconds.
	LatencySamples []float64
	CPUSamples     []float64
}

// Result is everything measured for one candidate: a key with a key exchange.
type Result struct {
	Proto     string
	Key       keys.Name
	Kex       string
	Strength  int
	Reference bool
	Full1     *Phase
	FullN     *Phase
	Resumed1  *Phase
	ResumedN  *Phase
	// Dropped says why measuring stopped before every phase ran.
	Dropped string
	// KeygenMs is how long making a real key of this type took, where one was
	// made (the winner's), 0 otherwise.
	KeygenMs float64
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

// Candidates are rows as the chooser reads them: each key's p95 at the
// configured concurrency and its server CPU per handshake.
func Candidates(rows []*Result) []choose.Candidate {
	var cs []choose.Candidate
	for _, r := range rows {
		c := choose.Candidate{Name: string(r.Key), Strength: r.Strength, Reference: r.Reference,
			Cost: Duration(r.ServerCPU().P50)}
		c.P95, c.Measured = r.P95AtN()
		cs = append(cs, c)
	}
	return cs
}
