package provision

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/report"
)

// Safe choices when the benchmark itself fails: cheap everywhere and strong
// enough, so the box still comes up and says what went wrong.
const (
	fallbackTLS = keys.ECDSAP256
	fallbackSSH = keys.Ed25519
)

// runBenchmark measures every candidate, chooses, and returns the report.
// It does not fail: if measuring fails, the report says so and carries safe
// fallback choices, and the next start measures again.
func runBenchmark(ctx context.Context, o Options) *report.Report {
	pol := policyFor(o)
	budget := o.Config.BenchBudget
	if o.Quick {
		budget = QuickBudget
	}
	t0 := time.Now()
	tlsKeys, sshKeys := keys.TLSCandidates(), keys.SSHCandidates()
	s, err := measure.Start(ctx, measure.Options{
		Budget: budget, Concurrency: o.Config.Concurrency, Target: o.Config.Target,
		Planned: len(tlsKeys) + len(sshKeys) + 2,
		Client:  o.Client,
		Progress: func(p measure.Progress) {
			o.Log.Info("benchmarking", "proto", p.Proto, "key", p.Key, "kex", p.Kex, "candidate", fmt.Sprintf("%d/%d", p.Index, p.Total), "phase", p.Phase)
			if o.Status != nil {
				o.Status(p.String())
			}
		},
	})
	rep := &report.Report{Policy: pol}
	if err == nil {
		defer s.Close()
		err = measureAll(ctx, o, s, rep, tlsKeys, sshKeys)
		rep.Machine = measure.ThisMachine(o.Clock.Now())
		rep.Machine.LoadGen = s.LoadGenerator
	}
	if err != nil {
		o.Log.Error("benchmark failed", "err", err)
		rep.Machine = measure.ThisMachine(o.Clock.Now())
		rep.Choice = choose.Choice{
			TLS:              choose.Decision{Key: string(pinOr(pol.PinTLS, fallbackTLS)), Reasons: []string{"benchmark failed; safe default"}},
			SSH:              choose.Decision{Key: string(pinOr(pol.PinSSH, fallbackSSH)), Reasons: []string{"benchmark failed; safe default"}},
			BenchmarkFailure: err.Error(),
		}
	}
	rep.Choice.Target, rep.Choice.Concurrency = o.Config.Target.String(), o.Config.Concurrency
	rep.DurationS = time.Since(t0).Round(100 * time.Millisecond).Seconds()
	if rep.Machine.Emulated {
		rep.Notes = append(rep.Notes, "this ARM binary ran under emulation on "+rep.Machine.CPU+": the figures say nothing about a real board")
	}
	if strings.HasPrefix(rep.Machine.LoadGen, "in-process") {
		rep.Notes = append(rep.Notes, "the load came from this process, so process CPU figures are not split between server and client")
	}
	return rep
}

func pinOr(pin string, def keys.Name) keys.Name {
	if pin != "" {
		return keys.Name(pin)
	}
	return def
}

// measureAll runs the TLS then the SSH candidates and decides each.
func measureAll(ctx context.Context, o Options, s *measure.Session, rep *report.Report, tlsKeys, sshKeys []keys.Name) error {
	pol := rep.Policy
	var err error
	rep.TLS, err = measureKeys(ctx, s, measure.TLS, measure.X25519, tlsKeys, pol.PinTLS)
	if err != nil {
		return err
	}
	if rep.Choice.TLS, err = choose.Key(measure.Candidates(rep.TLS), policy(o, pol.PinTLS)); err != nil {
		return fmt.Errorf("choose the HTTPS key: %w", err)
	}
	rep.TLSKex, rep.Choice.TLSPostQuantum, rep.Choice.TLSPQReason, err =
		measureKex(ctx, s, o, measure.TLS, rep.TLS, rep.Choice.TLS.Key, measure.X25519MLKEM768)
	if err != nil {
		return err
	}

	rep.SSH, err = measureKeys(ctx, s, measure.SSH, measure.Curve25519SHA, sshKeys, pol.PinSSH)
	if err != nil {
		return err
	}
	if rep.Choice.SSH, err = choose.Key(measure.Candidates(rep.SSH), policy(o, pol.PinSSH)); err != nil {
		return fmt.Errorf("choose the SSH host key: %w", err)
	}
	rep.SSHKex, rep.Choice.SSHPostQuantum, rep.Choice.SSHPQReason, err =
		measureKex(ctx, s, o, measure.SSH, rep.SSH, rep.Choice.SSH.Key, measure.MLKEM768X25519S)
	return err
}

// measureKeys measures each key in order. A larger RSA key is not measured
// once a smaller one was clearly over the target: it can only cost more.
func measureKeys(ctx context.Context, s *measure.Session, proto, kex string, names []keys.Name, pin string) ([]*measure.Result, error) {
	var rows []*measure.Result
	overRSA := ""
	for _, k := range names {
		kt, _ := keys.Lookup(k)
		isRSA := kt.Family == "rsa"
		if isRSA && overRSA != "" && string(k) != pin {
			rows = append(rows, &measure.Result{Proto: proto, Key: k, Kex: kex, Strength: keys.Strength(k),
				Dropped: fmt.Sprintf("not measured: %s was already clearly over the target and %s costs more", overRSA, k)})
			s.Skip()
			continue
		}
		r, err := s.Measure(ctx, measure.Candidate{
			Proto: proto, Key: k, Kex: kex,
			Reference: kt.Reference(),
			Resumed:   proto == measure.TLS,
			Keep:      string(k) == pin,
		})
		if err != nil {
			return nil, err
		}
		if isRSA && r.Dropped != "" && overRSA == "" {
			overRSA = string(k)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// measureKex measures the chosen key with the hybrid exchange and decides
// whether to offer it. The classical row is the key's own measurement.
func measureKex(ctx context.Context, s *measure.Session, o Options, proto string, rows []*measure.Result, key, hybrid string) ([]*measure.Result, bool, string, error) {
	var classic *measure.Result
	for _, r := range rows {
		if string(r.Key) == key {
			classic = r
		}
	}
	in := choose.PQ{Setting: o.Config.PostQuantum, Target: o.Config.Target}
	if classic == nil {
		on, why := choose.PostQuantum(in)
		return nil, on, why, nil
	}
	h, err := s.Measure(ctx, measure.Candidate{Proto: proto, Key: classic.Key, Kex: hybrid, Keep: o.Config.PostQuantum == "on"})
	if err != nil {
		return nil, false, "", err
	}
	in.Classic, _ = classic.P95AtN()
	in.Hybrid, in.Measured = h.P95AtN()
	on, why := choose.PostQuantum(in)
	return []*measure.Result{classic, h}, on, why, nil
}

func policy(o Options, pin string) choose.Policy {
	return choose.Policy{Target: o.Config.Target, Concurrency: o.Config.Concurrency, MinStrength: keys.MinStrength, Pin: pin}
}
