// Package measure measures what TLS and SSH handshakes cost on this machine.
// It returns plain data and never decides: package choose does that.
//
// The server side runs in this process, on real TCP over loopback; the load
// comes from a separate process (the same binary, `bonesync bench-client`), so
// that the server's CPU time per handshake is told apart from the client's.
// Each handshake's server CPU is read from the serving goroutine's own OS
// thread clock; each process's total CPU is read as well.
//
// A benchmark is a Session with a total time budget, shared among the
// candidates still to measure. Each candidate runs up to four phases (full
// handshakes with one client, with N clients, then resumed with one and with N)
// and is dropped as soon as it is clearly over the latency target. Sample
// counts adapt to the time each phase is given, within a small minimum.
package measure

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"time"

	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure/benchkeys"
)

// Options shape a Session.
type Options struct {
	Budget      time.Duration // for all Measure calls together (soft: minimum samples still run)
	Concurrency int           // simultaneous clients in the N-client phases
	Target      time.Duration // latency target, used only to stop early
	Planned     int           // how many Measure calls will be made, to share the budget
	// Client starts the load generator process, which must run
	// ServeClient on its stdin and stdout. Nil, or a process that cannot
	// start, means load is generated in this process.
	Client   func(ctx context.Context) *exec.Cmd
	Progress func(Progress) // may be nil
}

// Progress is reported as each phase starts.
type Progress struct {
	Index, Total int // candidate number, 1-based
	Proto        string
	Key          keys.Name
	Kex          string
	Phase        string // e.g. "8 clients, resumed"
}

func (p Progress) String() string {
	return fmt.Sprintf("benchmarking %s %s %s %d/%d: %s", p.Proto, p.Key, p.Kex, p.Index, p.Total, p.Phase)
}

// Candidate is one thing to measure.
type Candidate struct {
	Proto     string
	Key       keys.Name
	Kex       string
	Reference bool
	Resumed   bool // also measure resumed sessions (TLS)
	// Keep measures every phase even when clearly over the target (a key
	// pinned in the config).
	Keep bool
}

// Session is one benchmark run.
type Session struct {
	opts     Options
	deadline time.Time
	done     int
	gen      generator
	// LoadGenerator says where the client load came from, for the report.
	LoadGenerator string
}

// generator runs a Job somewhere and returns the Reply.
type generator interface {
	run(ctx context.Context, j Job) (Reply, error)
	close() error
}

// Start begins a session: it starts the load generator process.
func Start(ctx context.Context, opts Options) (*Session, error) {
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Planned < 1 {
		opts.Planned = 1
	}
	s := &Session{opts: opts, deadline: time.Now().Add(opts.Budget)}
	if opts.Client != nil {
		p, err := startProcess(ctx, opts.Client(ctx))
		if err == nil {
			s.gen, s.LoadGenerator = p, "by a separate process"
			return s, nil
		}
		s.LoadGenerator = fmt.Sprintf("in-process (could not start a separate process: %v)", err)
	} else {
		s.LoadGenerator = "in-process"
	}
	s.gen = inProcess{}
	return s, nil
}

// Close stops the load generator.
func (s *Session) Close() error { return s.gen.close() }

// separate reports whether client and server CPU can be told apart.
func (s *Session) separate() bool { _, ok := s.gen.(*process); return ok }

type phaseSpec struct {
	name    string
	clients int
	resumed bool
	share   float64
}

// Measure runs the phases of one candidate within its share of the budget.
func (s *Session) Measure(ctx context.Context, c Candidate) (*Result, error) {
	s.done++
	index := s.done
	left := max(1, s.opts.Planned-index+1)
	slice := max(0, time.Until(s.deadline)) / time.Duration(left)

	r := &Result{Proto: c.Proto, Key: c.Key, Kex: c.Kex, Strength: keys.Strength(c.Key), Reference: c.Reference}
	key, err := benchkeys.Get(c.Key)
	if err != nil {
		return nil, err
	}
	var srv *server
	var algo string
	switch c.Proto {
	case TLS:
		srv, err = tlsServer(key, c.Kex)
	case SSH:
		// The signature the box's SFTP server makes with this key type
		// for a client such as OpenSSH: its first (keys.SSHSigner).
		kt, _ := keys.Lookup(c.Key)
		algo = kt.SSHSignatures[0]
		srv, err = sshServer(key, algo, c.Kex)
	default:
		err = fmt.Errorf("unknown protocol %q", c.Proto)
	}
	if err != nil {
		return nil, fmt.Errorf("bench %s %s: %w", c.Proto, c.Key, err)
	}
	defer srv.close()

	n := s.opts.Concurrency
	specs := []phaseSpec{{"1 client, full", 1, false, 0.4}, {fmt.Sprintf("%d clients, full", n), n, false, 0.6}}
	if c.Resumed {
		specs = []phaseSpec{
			{"1 client, full", 1, false, 0.3}, {fmt.Sprintf("%d clients, full", n), n, false, 0.4},
			{"1 client, resumed", 1, true, 0.1}, {fmt.Sprintf("%d clients, resumed", n), n, true, 0.2},
		}
	}
	slots := []**Phase{&r.Full1, &r.FullN, &r.Resumed1, &r.ResumedN}
	for i, sp := range specs {
		if s.opts.Progress != nil {
			s.opts.Progress(Progress{Index: index, Total: s.opts.Planned, Proto: c.Proto, Key: c.Key, Kex: c.Kex, Phase: sp.name})
		}
		j := Job{
			Proto: c.Proto, Addr: srv.addr(), Kex: c.Kex, HostKeyAlgo: algo,
			Clients: sp.clients, Resume: sp.resumed,
			Min: 5, Max: 100, Duration: time.Duration(float64(slice) * sp.share),
		}
		if sp.clients > 1 {
			j.Min, j.Max = 2*sp.clients, 50*sp.clients
		}
		if i == 0 && !c.Keep {
			j.StopOver = s.opts.Target
		}
		p, rep, err := s.phase(ctx, srv, j)
		if err != nil {
			return nil, fmt.Errorf("bench %s %s %s: %w", c.Proto, c.Key, sp.name, err)
		}
		p.Resumed = sp.resumed
		*slots[i] = p
		if p.Latency.N == 0 {
			r.Dropped = fmt.Sprintf("no handshake succeeded: %s", p.FirstError)
			break
		}
		if i == 0 && !c.Keep {
			if why := s.clearlyOver(p, rep); why != "" {
				r.Dropped = why
				break
			}
		}
	}
	return r, nil
}

// clearlyOver says why a candidate need not be measured further after its
// one-client phase, or "" if it must be.
func (s *Session) clearlyOver(p *Phase, rep Reply) string {
	target := ms(s.opts.Target)
	switch {
	case rep.StoppedOver:
		return fmt.Sprintf("clearly over the target: one client already took %.0f ms (target %.0f ms)", p.Latency.P50, target)
	case p.Latency.P50 > target:
		return fmt.Sprintf("clearly over the target: median with one client %.1f ms > %.0f ms", p.Latency.P50, target)
	}
	// N handshakes arriving at once on C cores: the last waits for about N/C
	// of them. Twice the target leaves room for noise.
	cores := float64(runtime.NumCPU())
	if est := p.ServerCPU.P50 * float64(s.opts.Concurrency) / cores; est > 2*target {
		return fmt.Sprintf("clearly over the target: %d clients on %d cores need about %.0f ms of server CPU (target %.0f ms)",
			s.opts.Concurrency, runtime.NumCPU(), est, target)
	}
	return ""
}

func (s *Session) phase(ctx context.Context, srv *server, j Job) (*Phase, Reply, error) {
	srv.take(j.Resume)
	cpu0 := processCPU()
	rep, err := s.gen.run(ctx, j)
	if err != nil {
		return nil, rep, err
	}
	if n := srv.settle(handshakeTimeout); n > 0 {
		return nil, rep, fmt.Errorf("%d handshakes still not recorded by the server %v after the clients finished", n, handshakeTimeout)
	}
	serverCPU := processCPU() - cpu0
	cpu := srv.take(j.Resume)
	if j.Proto == SSH && j.Clients > 1 {
		cpu = nil // overlapping handshakes: see sshServer
	}

	p := &Phase{Clients: j.Clients, Errors: rep.Errors, FirstError: rep.FirstError, NotResumed: rep.NotResumed, Elapsed: ms(rep.Elapsed)}
	for _, l := range rep.Latencies {
		p.LatencySamples = append(p.LatencySamples, ms(l))
	}
	for _, c := range cpu {
		p.CPUSamples = append(p.CPUSamples, ms(c))
	}
	p.Latency, p.ServerCPU = Summarise(p.LatencySamples), Summarise(p.CPUSamples)
	if hs := len(rep.Latencies); hs > 0 {
		p.Rate = float64(hs) / rep.Elapsed.Seconds()
		if s.separate() {
			p.ServerProcessCPU = ms(serverCPU / time.Duration(hs))
			p.ClientProcessCPU = ms(rep.ClientCPU / time.Duration(hs))
		}
	}
	return p, rep, nil
}

// inProcess generates load from goroutines of this process.
type inProcess struct{}

func (inProcess) run(ctx context.Context, j Job) (Reply, error) { return RunJob(ctx, j), nil }
func (inProcess) close() error                                  { return nil }

// process is the load generator in a child process, spoken to in JSON lines.
type process struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
	enc *json.Encoder
}

func startProcess(ctx context.Context, cmd *exec.Cmd) (*process, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &process{cmd: cmd, in: in, out: json.NewDecoder(bufio.NewReader(out)), enc: json.NewEncoder(in)}, nil
}

func (p *process) run(ctx context.Context, j Job) (Reply, error) {
	var rep Reply
	if err := p.enc.Encode(j); err != nil {
		return rep, fmt.Errorf("send job to load generator: %w", err)
	}
	if err := p.out.Decode(&rep); err != nil {
		return rep, fmt.Errorf("load generator (pid %d) gave no reply: %w", p.cmd.Process.Pid, err)
	}
	return rep, nil
}

func (p *process) close() error {
	p.in.Close()
	return p.cmd.Wait()
}

// Skip counts a planned candidate as done without measuring it, so the
// budget it would have had goes to the others.
func (s *Session) Skip() { s.done++ }
