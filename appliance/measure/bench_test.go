package measure

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/keys"
)

// The test binary doubles as the load generator process, as bonesync does.
func TestMain(m *testing.M) {
	if os.Getenv("BONESYNC_TEST_BENCH_CLIENT") == "1" {
		if err := ServeClient(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func selfClient(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), "BONESYNC_TEST_BENCH_CLIENT=1")
	cmd.Stderr = os.Stderr
	return cmd
}

func TestMeasureSeparateProcess(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Options{Budget: 2 * time.Second, Concurrency: 3, Target: time.Minute, Planned: 3, Client: selfClient})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.LoadGenerator != "by a separate process" {
		t.Fatalf("LoadGenerator = %q", s.LoadGenerator)
	}
	for _, c := range []Candidate{
		{Proto: TLS, Key: keys.ECDSAP256, Kex: X25519, Resumed: true},
		{Proto: TLS, Key: keys.ECDSAP256, Kex: X25519MLKEM768},
		{Proto: SSH, Key: keys.Ed25519, Kex: MLKEM768X25519S},
	} {
		r, err := s.Measure(ctx, c)
		if err != nil {
			t.Fatalf("Measure(%v): %v", c, err)
		}
		if r.Dropped != "" {
			t.Fatalf("%v dropped: %s", c, r.Dropped)
		}
		phases := []*Phase{r.Full1, r.FullN}
		if c.Resumed {
			phases = append(phases, r.Resumed1, r.ResumedN)
		}
		for i, p := range phases {
			if p == nil || p.Latency.N < 5 || p.Errors != 0 {
				t.Fatalf("%v phase %d = %+v", c, i, p)
			}
			if c.Proto == SSH && p.Clients > 1 {
				if p.ServerCPU.N != 0 {
					t.Errorf("SSH with %d clients kept %d overlapping CPU samples", p.Clients, p.ServerCPU.N)
				}
				continue
			}
			if p.ServerCPU.N != p.Latency.N {
				t.Errorf("%v phase %d: %d server CPU samples for %d handshakes", c, i, p.ServerCPU.N, p.Latency.N)
			}
			if p.ServerCPU.P50 <= 0 || p.ServerCPU.P50 > p.Latency.P95*float64(p.Clients)+1 {
				t.Errorf("%v phase %d: server CPU p50 %.3f ms is not plausible against latency %+v", c, i, p.ServerCPU.P50, p.Latency)
			}
			if p.ClientProcessCPU <= 0 || p.ServerProcessCPU <= 0 {
				t.Errorf("%v phase %d: process CPU server %.3f client %.3f, want both > 0", c, i, p.ServerProcessCPU, p.ClientProcessCPU)
			}
		}
		if c.Resumed && (r.Resumed1.NotResumed != 0 || r.ResumedN.NotResumed != 0) {
			t.Errorf("resumed phases had full handshakes: %d, %d", r.Resumed1.NotResumed, r.ResumedN.NotResumed)
		}
	}
}

func TestClearlyOverIsDropped(t *testing.T) {
	ctx := context.Background()
	s, _ := Start(ctx, Options{Budget: time.Second, Concurrency: 8, Target: time.Microsecond, Planned: 1})
	defer s.Close()
	r, err := s.Measure(ctx, Candidate{Proto: TLS, Key: keys.RSA2048, Kex: X25519, Resumed: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dropped == "" || r.FullN != nil || r.Full1 == nil {
		t.Errorf("a candidate far over the target was not dropped after one client: %+v", r)
	}
	if r.Full1.Latency.N > 1 {
		t.Errorf("took %d samples of a handshake over twice the target, want 1", r.Full1.Latency.N)
	}
}

func TestSummarise(t *testing.T) {
	var s []float64
	for i := 1; i <= 100; i++ {
		s = append(s, float64(101-i))
	}
	got := Summarise(s)
	if got.N != 100 || got.P50 != 50 || got.P95 != 95 || got.P99 != 99 || got.Max != 100 {
		t.Errorf("Summarise(1..100) = %+v", got)
	}
	if (Summarise(nil) != Stats{}) {
		t.Error("Summarise(nil) not zero")
	}
}
