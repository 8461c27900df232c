package measure

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// Job is one phase as the load generator sees it: how to connect, how many
// clients at once, how many handshakes and for how long.
type Job struct {
	Proto       string        `json:"proto"`
	Addr        string        `json:"addr"`
	Kex         string        `json:"kex"`
	HostKeyAlgo string        `json:"host_key_algo,omitempty"`
	Clients     int           `json:"clients"`
	Resume      bool          `json:"resume,omitempty"`
	Min         int           `json:"min"`
	Max         int           `json:"max"`
	Duration    time.Duration `json:"duration"`
	// StopOver, if set, ends a one-client phase early once it is clearly
	// over: one handshake above twice StopOver, or three all above it.
	StopOver time.Duration `json:"stop_over,omitempty"`
}

// Reply is what the load generator measured for a Job.
type Reply struct {
	Latencies  []time.Duration `json:"latencies"`
	Elapsed    time.Duration   `json:"elapsed"`
	Errors     int             `json:"errors"`
	FirstError string          `json:"first_error,omitempty"`
	NotResumed int             `json:"not_resumed"`
	ClientCPU  time.Duration   `json:"client_cpu"`
	// StoppedOver is true when StopOver ended the phase.
	StoppedOver bool `json:"stopped_over,omitempty"`
}

// handshakeTimeout bounds one handshake, so a wedged server cannot hang the
// benchmark: an RSA-4096 handshake under emulation takes seconds, not minutes.
const handshakeTimeout = 2 * time.Minute

// ServeClient is the load generator's main loop, run in a separate process
// (`bonesync bench-client`): it reads Jobs as JSON lines from r, runs each and
// writes a Reply line to w, until r ends.
func ServeClient(ctx context.Context, r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	enc := json.NewEncoder(w)
	for {
		var j Job
		if err := dec.Decode(&j); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("bench client: read job: %w", err)
		}
		cpu0 := processCPU()
		rep := RunJob(ctx, j)
		rep.ClientCPU = processCPU() - cpu0
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("bench client: write reply: %w", err)
		}
	}
}

// RunJob runs the handshakes of one Job and returns their latencies.
func RunJob(ctx context.Context, j Job) Reply {
	var dial func() (time.Duration, bool, error)
	switch j.Proto {
	case TLS:
		dial = tlsDialer(j)
	case SSH:
		dial = sshDialer(j)
	default:
		return Reply{Errors: 1, FirstError: fmt.Sprintf("unknown protocol %q", j.Proto)}
	}
	if j.Resume {
		// One full handshake first, untimed, to get a session ticket.
		if _, _, err := dial(); err != nil {
			return Reply{Errors: 1, FirstError: "warm-up: " + err.Error()}
		}
	}
	var (
		mu      sync.Mutex
		rep     Reply
		started atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(j.Duration)
	for range max(1, j.Clients) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && !stop.Load() {
				n := started.Add(1)
				if n > int64(j.Max) || (n > int64(j.Min) && time.Now().After(end)) {
					return
				}
				lat, resumed, err := dial()
				mu.Lock()
				if err != nil {
					rep.Errors++
					if rep.FirstError == "" {
						rep.FirstError = err.Error()
					}
					if rep.Errors > 3+len(rep.Latencies)/10 {
						stop.Store(true) // a broken server, not a slow one
					}
				} else {
					rep.Latencies = append(rep.Latencies, lat)
					if j.Resume && !resumed {
						rep.NotResumed++
					}
					if clearlyOver(rep.Latencies, j.StopOver) {
						rep.StoppedOver = true
						stop.Store(true)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rep.Elapsed = time.Since(start)
	return rep
}

func clearlyOver(lat []time.Duration, limit time.Duration) bool {
	if limit <= 0 || len(lat) == 0 {
		return false
	}
	if len(lat) == 1 {
		return lat[0] > 2*limit
	}
	if len(lat) > 3 {
		return false
	}
	for _, l := range lat {
		if l <= limit {
			return false
		}
	}
	return len(lat) == 3
}

func tlsDialer(j Job) func() (time.Duration, bool, error) {
	cfg := &tls.Config{
		// The client's own verification would run on the box's CPU here but
		// on the user's device in real life: leave it out of the measure.
		InsecureSkipVerify: true,
		ServerName:         "bonesync.bench",
		MinVersion:         tls.VersionTLS13,
		CurvePreferences:   []tls.CurveID{curveID(j.Kex)},
	}
	if j.Resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(64)
	}
	return func() (time.Duration, bool, error) {
		t0 := time.Now()
		c, err := dial(j.Addr, t0)
		if err != nil {
			return 0, false, err
		}
		defer c.Close()
		tc := tls.Client(c, cfg)
		if err := tc.Handshake(); err != nil {
			return 0, false, fmt.Errorf("tls handshake: %w", err)
		}
		lat := time.Since(t0)
		resumed := tc.ConnectionState().DidResume
		// One byte each way: the server's reply carries the session ticket
		// along, and proves the connection was served.
		var b [1]byte
		if _, err := tc.Write([]byte{'?'}); err != nil {
			return 0, false, err
		}
		if _, err := io.ReadFull(tc, b[:]); err != nil {
			return 0, false, fmt.Errorf("read reply: %w", err)
		}
		return lat, resumed, nil
	}
}

// dial connects to addr for one handshake, begun at t0: the handshake has
// handshakeTimeout from t0 to finish.
func dial(addr string, t0 time.Time) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, handshakeTimeout)
	if err == nil {
		c.SetDeadline(t0.Add(handshakeTimeout))
	}
	return c, err
}

func curveID(name string) tls.CurveID {
	if name == X25519MLKEM768 {
		return tls.X25519MLKEM768
	}
	return tls.X25519
}

func sshDialer(j Job) func() (time.Duration, bool, error) {
	cfg := &ssh.ClientConfig{
		User:              "bench",
		HostKeyCallback:   ssh.InsecureIgnoreHostKey(),
		HostKeyAlgorithms: []string{j.HostKeyAlgo},
		Config:            ssh.Config{KeyExchanges: []string{j.Kex}},
		Timeout:           handshakeTimeout,
	}
	return func() (time.Duration, bool, error) {
		t0 := time.Now()
		c, err := dial(j.Addr, t0)
		if err != nil {
			return 0, false, err
		}
		defer c.Close()
		sc, chans, reqs, err := ssh.NewClientConn(c, j.Addr, cfg)
		if err != nil {
			return 0, false, fmt.Errorf("ssh handshake: %w", err)
		}
		lat := time.Since(t0)
		go ssh.DiscardRequests(reqs)
		go func() {
			for ch := range chans {
				ch.Reject(ssh.Prohibited, "bench")
			}
		}()
		sc.Close()
		return lat, false, nil
	}
}
