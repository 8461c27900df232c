package choose

import (
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// A board-like set of measurements: ECDSA cheap, RSA expensive.
func board() []Candidate {
	return []Candidate{
		{Name: "ecdsa-p256", Strength: 128, Measured: true, P95: 240 * ms, Cost: 15 * ms},
		{Name: "ecdsa-p384", Strength: 192, Measured: true, P95: 450 * ms, Cost: 28 * ms},
		{Name: "rsa-1024", Strength: 80, Reference: true, Measured: true, P95: 150 * ms, Cost: 12 * ms},
		{Name: "rsa-2048", Strength: 112, Measured: true, P95: 870 * ms, Cost: 107 * ms},
		{Name: "rsa-3072", Strength: 128, Measured: false, Cost: 330 * ms},
		{Name: "rsa-4096", Strength: 128, Measured: false, Cost: 700 * ms},
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cands     []Candidate
		pol       Policy
		want      string
		met       bool
		wantWarn  string
		wantError string
	}{
		{name: "strongest that meets", cands: board(), pol: Policy{Target: 500 * ms, MinStrength: 112}, want: "ecdsa-p384", met: true},
		{name: "tighter target falls to p256", cands: board(), pol: Policy{Target: 300 * ms, MinStrength: 112}, want: "ecdsa-p256", met: true},
		{name: "rsa-1024 never chosen even when only it meets", cands: board(), pol: Policy{Target: 200 * ms, MinStrength: 112},
			want: "ecdsa-p256", met: false, wantWarn: "what would help"},
		{name: "tie at 128 bits goes to the cheaper", cands: []Candidate{
			{Name: "rsa-3072", Strength: 128, Measured: true, P95: 50 * ms, Cost: 9 * ms},
			{Name: "ed25519", Strength: 128, Measured: true, P95: 10 * ms, Cost: 1 * ms},
			{Name: "rsa-4096", Strength: 128, Measured: true, P95: 90 * ms, Cost: 20 * ms},
			{Name: "rsa-2048", Strength: 112, Measured: true, P95: 5 * ms, Cost: 3 * ms},
		}, pol: Policy{Target: 100 * ms, MinStrength: 112}, want: "ed25519", met: true},
		{name: "nothing meets: cheapest eligible", cands: []Candidate{
			{Name: "rsa-2048", Strength: 112, Measured: true, P95: 900 * ms, Cost: 100 * ms},
			{Name: "ecdsa-p256", Strength: 128, Measured: true, P95: 700 * ms, Cost: 30 * ms},
		}, pol: Policy{Target: 100 * ms, Concurrency: 8, MinStrength: 112}, want: "ecdsa-p256", met: false, wantWarn: "at least 700.0 ms"},
		{name: "a disturbed run is explained", cands: []Candidate{
			{Name: "ecdsa-p256", Strength: 128, Measured: true, P95: 600 * ms, Cost: 15 * ms},
			{Name: "ecdsa-p384", Strength: 192, Measured: true, P95: 450 * ms, Cost: 28 * ms},
			{Name: "rsa-2048", Strength: 112, Measured: true, P95: 400 * ms, Cost: 107 * ms},
		}, pol: Policy{Target: 500 * ms, MinStrength: 112}, want: "ecdsa-p384", met: true,
			wantWarn: "ecdsa-p256 came out over the target (600.0 ms) while ecdsa-p384 and rsa-2048, which cost more per handshake, meet it"},
		{name: "pinned key that misses is honoured with a warning", cands: board(),
			pol: Policy{Target: 500 * ms, MinStrength: 112, Pin: "rsa-4096"}, want: "rsa-4096", met: false, wantWarn: "pinned key rsa-4096 misses"},
		{name: "pinned key that meets", cands: board(), pol: Policy{Target: 500 * ms, MinStrength: 112, Pin: "ecdsa-p256"}, want: "ecdsa-p256", met: true},
		{name: "pinned weak key refused", cands: board(), pol: Policy{Target: 500 * ms, MinStrength: 112, Pin: "rsa-1024"}, wantError: "below the 112-bit minimum"},
		{name: "nothing eligible", cands: []Candidate{{Name: "rsa-1024", Strength: 80, Reference: true, Measured: true}},
			pol: Policy{Target: 500 * ms, MinStrength: 112}, wantError: "no candidate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Key(tc.cands, tc.pol)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("Key() error = %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Key != tc.want || d.MetTarget != tc.met {
				t.Errorf("Key() = %s (met %v), want %s (met %v); reasons %v", d.Key, d.MetTarget, tc.want, tc.met, d.Reasons)
			}
			if d.Verdicts[d.Key] != Chosen {
				t.Errorf("verdict of chosen key = %q", d.Verdicts[d.Key])
			}
			warn := strings.Join(d.Warnings, "\n")
			if tc.wantWarn == "" && warn != "" {
				t.Errorf("unexpected warnings: %s", warn)
			}
			if !strings.Contains(warn, tc.wantWarn) {
				t.Errorf("warnings %q do not contain %q", warn, tc.wantWarn)
			}
		})
	}
}

func TestVerdicts(t *testing.T) {
	d, err := Key(board(), Policy{Target: 500 * ms, MinStrength: 112})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ecdsa-p256": Meets, "ecdsa-p384": Chosen, "rsa-1024": ReferenceV,
		"rsa-2048": OverTarget, "rsa-3072": OverTarget, "rsa-4096": OverTarget}
	for k, v := range want {
		if d.Verdicts[k] != v {
			t.Errorf("verdict[%s] = %q, want %q", k, d.Verdicts[k], v)
		}
	}
}

func TestPostQuantum(t *testing.T) {
	for _, tc := range []struct {
		in   PQ
		want bool
	}{
		{PQ{Setting: "auto", Target: 500 * ms, Classic: 200 * ms, Hybrid: 260 * ms, Measured: true}, true},
		{PQ{Setting: "auto", Target: 500 * ms, Classic: 450 * ms, Hybrid: 560 * ms, Measured: true}, false},
		{PQ{Setting: "auto", Target: 500 * ms, Measured: false}, false},
		{PQ{Setting: "on", Target: 1 * ms, Hybrid: 900 * ms, Measured: true}, true},
		{PQ{Setting: "off", Target: 500 * ms, Hybrid: 1 * ms, Measured: true}, false},
	} {
		if got, why := PostQuantum(tc.in); got != tc.want {
			t.Errorf("PostQuantum(%+v) = %v (%s), want %v", tc.in, got, why, tc.want)
		}
	}
}

// Beside the chosen key, the strongest of another family that meets the
// target, else that family's cheapest; none when every candidate is of
// the chosen one's family.
func TestOther(t *testing.T) {
	family := func(n string) string { return strings.SplitN(n, "-", 2)[0] }
	pol := Policy{Target: 500 * ms, MinStrength: 112}
	if d := Other(board(), pol, "ecdsa-p384", family); d.Key != "rsa-2048" || d.MetTarget {
		t.Errorf("beside ecdsa-p384 with RSA over the target: %s (met %v), want rsa-2048, the cheapest", d.Key, d.MetTarget)
	}
	fast := board()
	fast[3].P95 = 200 * ms // rsa-2048 meets the target
	if d := Other(fast, pol, "ecdsa-p384", family); d.Key != "rsa-2048" || !d.MetTarget {
		t.Errorf("with rsa-2048 meeting the target: %s (met %v)", d.Key, d.MetTarget)
	}
	fast[4].Measured, fast[4].P95 = true, 300*ms // and rsa-3072 too
	if d := Other(fast, pol, "ecdsa-p384", family); d.Key != "rsa-3072" || !strings.Contains(strings.Join(d.Reasons, " "), "beside ecdsa-p384") {
		t.Errorf("with rsa-3072 meeting the target: %s, %v", d.Key, d.Reasons)
	}
	if d := Other(board()[:2], pol, "ecdsa-p384", family); d.Key != "" {
		t.Errorf("only ECDSA candidates: %s beside", d.Key)
	}
}
