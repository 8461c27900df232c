// Package choose decides which key the box serves with, from measurements.
//
// It is a pure function of its inputs: no I/O, no clock, no randomness. The
// rule, in full:
//
//  1. A candidate is eligible if it is not a reference row and its security
//     strength is at least the minimum (112 bits).
//  2. Among eligible candidates whose measured p95 latency at the configured
//     concurrency meets the target, take the strongest; among equally strong
//     ones, the cheapest (least server CPU per handshake).
//  3. If none meets the target, take the cheapest eligible candidate and say
//     so, with what would help.
//  4. A pinned key is honoured if it is eligible, with a warning if it misses
//     the target.
//
// The same shape decides whether to offer hybrid post-quantum key exchange.
package choose

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Candidate is what the chooser needs to know about one measured key.
type Candidate struct {
	Name      string
	Strength  int  // security strength in bits (NIST SP 800-57)
	Reference bool // measured for comparison, never eligible
	// Measured is true when P95 holds a measurement at the configured
	// concurrency. A candidate dropped early for being clearly over the
	// target has Measured false and counts as missing it.
	Measured bool
	P95      time.Duration // p95 connect+handshake latency at the configured concurrency
	Cost     time.Duration // median server CPU per full handshake; 0 if unknown
}

// Policy is what the user asked for.
type Policy struct {
	Target      time.Duration
	Concurrency int
	MinStrength int
	Pin         string // a key name, or "" to choose by measurement
}

// Verdicts for the report, one per candidate.
const (
	Chosen      = "chosen"
	Meets       = "meets target"
	OverTarget  = "over target"
	TooWeak     = "too weak"
	ReferenceV  = "reference only"
	NotMeasured = "not measured"
)

// Decision is the outcome and why.
type Decision struct {
	Key       string
	MetTarget bool
	Pinned    bool
	Reasons   []string
	Warnings  []string
	Verdicts  map[string]string
}

// Key chooses a key. It fails only when no candidate is eligible at all, or a
// pinned key is not among the candidates or is too weak.
func Key(cands []Candidate, p Policy) (Decision, error) {
	d := Decision{Verdicts: map[string]string{}}
	var eligible, meeting []Candidate
	for _, c := range cands {
		switch {
		case c.Reference:
			d.Verdicts[c.Name] = ReferenceV
		case c.Strength < p.MinStrength:
			d.Verdicts[c.Name] = TooWeak
		case c.Measured && c.P95 <= p.Target:
			d.Verdicts[c.Name] = Meets
			eligible = append(eligible, c)
			meeting = append(meeting, c)
		case c.Measured || c.Cost > 0:
			d.Verdicts[c.Name] = OverTarget
			eligible = append(eligible, c)
		default:
			d.Verdicts[c.Name] = NotMeasured
		}
	}
	at := fmt.Sprintf("p95 at %d simultaneous clients", p.Concurrency)
	d.Warnings = append(d.Warnings, outOfOrder(cands, d.Verdicts)...)

	if p.Pin != "" {
		c, ok := find(cands, p.Pin)
		if !ok {
			return d, fmt.Errorf("pinned key %s was not among the candidates", p.Pin)
		}
		if c.Reference || c.Strength < p.MinStrength {
			return d, fmt.Errorf("pinned key %s gives %d-bit security, below the %d-bit minimum", p.Pin, c.Strength, p.MinStrength)
		}
		d.Key, d.Pinned = c.Name, true
		d.MetTarget = d.Verdicts[c.Name] == Meets
		d.Verdicts[c.Name] = Chosen
		d.Reasons = append(d.Reasons, fmt.Sprintf("%s is pinned in the config", c.Name))
		if !d.MetTarget {
			d.Warnings = append(d.Warnings, fmt.Sprintf("pinned key %s misses the %s target (%s: %s); honoured as configured",
				c.Name, msec(p.Target), at, latency(c)))
		}
		return d, nil
	}

	if len(eligible) == 0 {
		return d, errors.New("no candidate key of at least the minimum strength was measured")
	}
	if len(meeting) > 0 {
		best := strongestCheapest(meeting)
		d.Key, d.MetTarget = best.Name, true
		d.Verdicts[best.Name] = Chosen
		d.Reasons = append(d.Reasons, fmt.Sprintf("%s is the strongest key (%d bits) whose %s, %s, meets the %s target",
			best.Name, best.Strength, at, latency(best), msec(p.Target)))
		if ties := sameStrength(meeting, best); len(ties) > 0 {
			verb := "is"
			if len(ties) > 1 {
				verb = "are"
			}
			d.Reasons = append(d.Reasons, fmt.Sprintf("it is cheaper per handshake than %s, which %s as strong", andList(ties), verb))
		}
		return d, nil
	}
	cheap := cheapest(eligible)
	d.Key = cheap.Name
	d.Verdicts[cheap.Name] = Chosen
	d.Reasons = append(d.Reasons, fmt.Sprintf("no eligible key meets the %s target (%s); %s is the cheapest eligible key (%s)",
		msec(p.Target), at, cheap.Name, latency(cheap)))
	help := "a much higher target (target_ms): every key was clearly over it"
	if cheap.Measured {
		help = fmt.Sprintf("a target of at least %s (target_ms)", latency(cheap))
	}
	if p.Concurrency > 1 {
		help += fmt.Sprintf(", fewer simultaneous clients (concurrency, now %d)", p.Concurrency)
	}
	help += ", or a faster board"
	d.Warnings = append(d.Warnings, "no key meets the target; what would help: "+help)
	return d, nil
}

// outOfOrder explains each pair whose verdicts contradict their costs: a
// key over the target while one that costs more per handshake meets it.
// The latency is one run on a machine that may be busy; the CPU cost is a
// median, steadier, so the cheaper key's run was disturbed.
func outOfOrder(cands []Candidate, verdicts map[string]string) []string {
	var out []string
	for _, over := range cands {
		if verdicts[over.Name] != OverTarget || !over.Measured || over.Cost <= 0 {
			continue
		}
		var costlier []string
		for _, met := range cands {
			if verdicts[met.Name] == Meets && met.Measured && met.Cost > over.Cost {
				costlier = append(costlier, met.Name)
			}
		}
		if len(costlier) > 0 {
			verb := "meets"
			if len(costlier) > 1 {
				verb = "meet"
			}
			out = append(out, fmt.Sprintf("%s came out over the target (%s) while %s, which cost more per handshake, %s it: "+
				"the machine was busy during %s's run, not a property of the key (\"measure again\" on the admin page repeats it)",
				over.Name, latency(over), andList(costlier), verb, over.Name))
		}
	}
	return out
}

func latency(c Candidate) string {
	if !c.Measured {
		return "dropped early, clearly over"
	}
	return msec(c.P95)
}

func msec(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func find(cands []Candidate, name string) (Candidate, bool) {
	for _, c := range cands {
		if c.Name == name {
			return c, true
		}
	}
	return Candidate{}, false
}

// strongestCheapest orders by strength descending, then cost ascending, then
// name for a stable result.
func strongestCheapest(cs []Candidate) Candidate {
	s := append([]Candidate(nil), cs...)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Strength != s[j].Strength {
			return s[i].Strength > s[j].Strength
		}
		if s[i].Cost != s[j].Cost {
			return s[i].Cost < s[j].Cost
		}
		return s[i].Name < s[j].Name
	})
	return s[0]
}

func sameStrength(cs []Candidate, best Candidate) []string {
	var names []string
	for _, c := range cs {
		if c.Name != best.Name && c.Strength == best.Strength {
			names = append(names, c.Name)
		}
	}
	return names
}

// cheapest orders by cost ascending (unknown cost last), then strength
// descending.
func cheapest(cs []Candidate) Candidate {
	s := append([]Candidate(nil), cs...)
	key := func(c Candidate) time.Duration {
		if c.Cost == 0 {
			return time.Duration(1<<62 - 1)
		}
		return c.Cost
	}
	sort.SliceStable(s, func(i, j int) bool {
		if key(s[i]) != key(s[j]) {
			return key(s[i]) < key(s[j])
		}
		return s[i].Strength > s[j].Strength
	})
	return s[0]
}

// Choice is the whole decision the box persists: the HTTPS key and the SSH
// host key, each with whether to offer the hybrid post-quantum exchange,
// and beside each the key of the other family (Other) for the clients
// that cannot take the chosen one's signatures.
type Choice struct {
	TLS              Decision
	TLSOther         Decision // Key "" when there is none
	TLSPostQuantum   bool
	TLSPQReason      string
	SSH              Decision
	SSHOther         Decision
	SSHPostQuantum   bool
	SSHPQReason      string
	Target           string
	Concurrency      int
	BenchmarkFailure string
}

// Other chooses, beside the chosen key, one of another family (family
// names each candidate's), for the clients that cannot take the chosen
// key's signatures: an RSA key beside an ECDSA one for a client that
// offers only RSA signatures, RSA beside Ed25519 for an old SSH client.
// It is the strongest of the other families that meets the target, or
// else the cheapest of them; a Decision with Key "" when there is none.
func Other(cands []Candidate, p Policy, chosen string, family func(string) string) Decision {
	var others []Candidate
	for _, c := range cands {
		if family(c.Name) != family(chosen) && !c.Reference && c.Strength >= p.MinStrength {
			others = append(others, c)
		}
	}
	if len(others) == 0 {
		return Decision{}
	}
	d, err := Key(others, Policy{Target: p.Target, Concurrency: p.Concurrency, MinStrength: p.MinStrength})
	if err != nil {
		return Decision{}
	}
	d.Reasons = append([]string{fmt.Sprintf("served beside %s to the clients that cannot take its signatures", chosen)}, d.Reasons...)
	d.Warnings = nil // the others' table and its warnings are the chosen key's
	if !d.MetTarget {
		d.Reasons = append(d.Reasons, fmt.Sprintf("only those clients pay its cost: the others get %s", chosen))
	}
	return d
}

// andList writes names as a person does: "a", "a and b", "a, b and c".
func andList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
