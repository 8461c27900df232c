// Package provision makes sure the box has everything it serves with, in
// order: its CA, a decision (benchmarking first if there is none), the chosen
// keys, a current server certificate, and the report. It is run at every
// start, and again by a Watcher whenever one of its inputs changes; when
// nothing changed it writes nothing (state.WriteFile leaves a file that
// already holds the bytes).
//
// The state directory is locked while it works, so `bonesync bench` run from
// a console and the running server never write the same files at once.
package provision

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os/exec"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
)

// Budgets for the benchmark: QuickBudget for -quick (a first `make run`, a
// boot test under emulation), otherwise the config's bench_budget.
const QuickBudget = 15 * time.Second

// ErrNeedsBenchmark is returned by a refresh (Options.NoWait) that would
// have to benchmark: the caller keeps serving what it has.
var ErrNeedsBenchmark = errors.New("a new benchmark is needed (run bonesync bench, or restart)")

// Options are the inputs of Ensure.
type Options struct {
	State  *state.Dir
	Config config.Config
	Clock  *clock.Floor
	// Quick uses QuickBudget instead of the config's budget.
	Quick bool
	// Rebench benchmarks even if a decision exists.
	Rebench bool
	// NoWait makes Ensure return an error satisfying
	// errors.Is(err, state.ErrBusy) instead of waiting while another process
	// (a `bonesync bench`) works on the state directory.
	NoWait bool
	// Client starts the benchmark's load generator (see measure.Options).
	Client func(ctx context.Context) *exec.Cmd
	// Addrs returns the box's current addresses; nil means the
	// interfaces' permitted addresses (pki.InterfaceAddrs).
	Addrs func() []net.IP
	// URLs the box can be reached at, for the report: a server sets them
	// at its start, from the ports it got; nil (a refresh, `bonesync
	// bench`) keeps those of the report on disk, so that no other process
	// rewrites them with its own.
	URLs []string
	// Log receives progress lines and warnings; Status (optional) one-line
	// state, e.g. for systemd.
	Log    *slog.Logger
	Status func(string)
	// Phase (optional) is told "benchmarking" when a benchmark starts (for
	// the service manager: sysd.Phase).
	Phase func(string)

	// ResolvConf is where the network's search domains are read when the
	// CA is made ("": /etc/resolv.conf).
	ResolvConf string

	// whileLocked (the Watcher's) runs at the end of Ensure, before the
	// state directory is unlocked.
	whileLocked func()
}

func (o Options) resolvConf() string {
	if o.ResolvConf != "" {
		return o.ResolvConf
	}
	return "/etc/resolv.conf"
}

// Box is what the box serves with.
type Box struct {
	CA     *pki.CA
	Server *pki.Server // the HTTPS key and its certificate
	SSHKey crypto.Signer
	// The keys of the other family (choose.Other), nil when there is
	// none: served to the clients that cannot take Server's or SSHKey's
	// signatures.
	OtherServer *pki.Server
	OtherSSHKey crypto.Signer
	Choice      choose.Choice
	Report      *report.Report
	// Benchmarked is true when this call ran the benchmark.
	Benchmarked bool
}

// Ensure brings the state directory up to date and returns what to serve.
func Ensure(ctx context.Context, o Options) (*Box, error) {
	lock := o.State.Lock
	if o.NoWait {
		lock = o.State.TryLock
	}
	unlock, err := lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if o.whileLocked != nil {
		defer o.whileLocked()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	now := o.Clock.Now()
	b := &Box{}

	if b.CA, err = ensureCA(o, now); err != nil {
		return nil, err
	}

	rep, why := loadDecision(o)
	if why != "" && o.NoWait {
		// A running server's refresh never benchmarks: that would stall
		// it (and systemd's watchdog would end it). It keeps its choice.
		return nil, fmt.Errorf("%w: %s", ErrNeedsBenchmark, why)
	}
	if why != "" {
		o.Log.Info("benchmark", "why", why)
		if o.Phase != nil {
			o.Phase("benchmarking")
		}
		kept := storedURLs(o.State)
		rep = runBenchmark(ctx, o)
		rep.URLs = kept
		if ctx.Err() != nil {
			return nil, fmt.Errorf("benchmark interrupted: %w", ctx.Err())
		}
		b.Benchmarked = true
	}
	// Beside each chosen key, one of the other family, from the same
	// measurements (a decision made before there were two has them too).
	rep.Choice.TLSOther = choose.Other(measure.Candidates(rep.TLS), policy(o, ""), rep.Choice.TLS.Key, keys.FamilyOf)
	rep.Choice.SSHOther = choose.Other(measure.Candidates(rep.SSH), policy(o, ""), rep.Choice.SSH.Key, keys.FamilyOf)
	b.Report, b.Choice = rep, rep.Choice

	if b.Server, err = ensureServer(o, b.CA, rep, state.TLSKey, state.TLSCert, b.Choice.TLS.Key, now); err != nil {
		return nil, err
	}
	if b.OtherServer, err = ensureServer(o, b.CA, rep, state.TLSOtherKey, state.TLSOtherCert, b.Choice.TLSOther.Key, now); err != nil {
		return nil, err
	}
	var keygen time.Duration
	if b.SSHKey, keygen, err = ensureKey(o, state.SSHHostKey, keys.Name(b.Choice.SSH.Key)); err != nil {
		return nil, err
	}
	noteKeygen(rep.SSH, b.Choice.SSH.Key, keygen)
	if key := b.Choice.SSHOther.Key; key != "" {
		if b.OtherSSHKey, keygen, err = ensureKey(o, state.SSHOtherHostKey, keys.Name(key)); err != nil {
			return nil, err
		}
		noteKeygen(rep.SSH, key, keygen)
	}

	rep.CAFingerprint = pki.Fingerprint(b.CA.Cert)
	// The CA's notes as they are now (the report on disk has the last
	// start's).
	rep.Notes = append(slices.DeleteFunc(rep.Notes, func(n string) bool { return strings.Contains(n, caNoteMark) }), caNotes(o, b.CA)...)
	if signer, err := ssh.NewSignerFromSigner(b.SSHKey); err == nil {
		rep.HostKeyFingerprint = ssh.FingerprintSHA256(signer.PublicKey())
	}
	rep.OtherHostKeyFingerprint = ""
	if b.OtherSSHKey != nil {
		if signer, err := ssh.NewSignerFromSigner(b.OtherSSHKey); err == nil {
			rep.OtherHostKeyFingerprint = ssh.FingerprintSHA256(signer.PublicKey())
		}
	}
	if o.URLs != nil {
		rep.URLs = o.URLs
	}
	if err := saveReport(o.State, rep); err != nil {
		return nil, err
	}
	return b, nil
}

// storedURLs are the URLs of the report on disk, if it can be read.
func storedURLs(dir *state.Dir) []string {
	b, err := dir.Read(state.Report)
	if err != nil {
		return nil
	}
	r, err := report.Parse(b)
	if err != nil {
		return nil
	}
	return r.URLs
}

// ensureCA loads the CA or, on the very first start, makes it. A damaged CA is
// an error: it is never remade silently.
func ensureCA(o Options, now time.Time) (*pki.CA, error) {
	ca, err := pki.LoadCA(o.State)
	if errors.Is(err, fs.ErrNotExist) {
		// Made for the config's domains and those the network's resolver
		// names now (the router's DHCP): the CA cannot be widened later.
		extra := append(slices.Clone(o.Config.ExtraDomains), pki.LearnedDomains(o.resolvConf())...)
		o.Log.Info("making the certificate authority", "names", pki.BoxDNSNames(o.Config.Hostname, extra))
		if ca, err = pki.NewCA(o.Config.Hostname, extra, now, rand.Reader); err != nil {
			return nil, err
		}
		if err := ca.Save(o.State); err != nil {
			return nil, err
		}
		return ca, nil
	}
	if err != nil {
		return nil, err
	}
	if !ca.Permits(o.Config.Hostname) {
		o.Log.Warn("the CA cannot vouch for the hostname: set hostname back, or delete ca.crt and ca.key to make a new CA",
			"hostname", o.Config.Hostname, "ca_names", ca.Cert.PermittedDNSDomains)
	}
	return ca, nil
}

// loadDecision returns the stored report, or why the benchmark must run.
func loadDecision(o Options) (*report.Report, string) {
	if o.Rebench {
		return nil, "measuring as asked"
	}
	var c choose.Choice
	b, err := o.State.Read(state.Decision)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "first start: measuring what handshakes cost on this machine"
	}
	if err == nil {
		if c, err = report.ParseDecision(b); err != nil {
			err = &state.Damaged{Path: o.State.Join(state.Decision), Reason: "not a decision: " + err.Error(), Advice: "measuring again"}
		}
	}
	if err != nil {
		return nil, err.Error()
	}
	if c.BenchmarkFailure != "" {
		return nil, "the last benchmark failed (" + c.BenchmarkFailure + "): measuring again"
	}
	rb, err := o.State.Read(state.Report)
	var rep *report.Report
	if err == nil {
		rep, err = report.Parse(rb)
	}
	if err != nil {
		return nil, fmt.Sprintf("%s cannot be used (%v): measuring again", o.State.Join(state.Report), err)
	}
	if changed := policyChanged(rep.Policy, policyFor(o)); changed != "" {
		return nil, "the config changed since the last benchmark (" + changed + "): measuring again"
	}
	rep.Choice = c
	return rep, ""
}

func policyFor(o Options) report.Policy {
	p := report.Policy{
		TargetMs:    float64(o.Config.Target) / float64(time.Millisecond),
		Concurrency: o.Config.Concurrency,
		BudgetS:     o.Config.BenchBudget.Seconds(),
		Quick:       o.Quick,
		PostQuantum: o.Config.PostQuantum,
		MinStrength: keys.MinStrength,
	}
	if o.Quick {
		p.BudgetS = QuickBudget.Seconds()
	}
	if o.Config.TLSKey != config.Auto {
		p.PinTLS = string(o.Config.TLSKey)
	}
	if o.Config.SSHHostKey != config.Auto {
		p.PinSSH = string(o.Config.SSHHostKey)
	}
	return p
}

// policyChanged names what differs between the policy a report was made with
// and the current one, ignoring the budget (it changes how long, not what).
func policyChanged(old, cur report.Policy) string {
	switch {
	case old.TargetMs != cur.TargetMs:
		return fmt.Sprintf("target_ms %v -> %v", old.TargetMs, cur.TargetMs)
	case old.Concurrency != cur.Concurrency:
		return fmt.Sprintf("concurrency %d -> %d", old.Concurrency, cur.Concurrency)
	case old.PostQuantum != cur.PostQuantum:
		return fmt.Sprintf("post_quantum %s -> %s", old.PostQuantum, cur.PostQuantum)
	case old.PinTLS != cur.PinTLS:
		return fmt.Sprintf("tls_key %q -> %q", old.PinTLS, cur.PinTLS)
	case old.PinSSH != cur.PinSSH:
		return fmt.Sprintf("ssh_host_key %q -> %q", old.PinSSH, cur.PinSSH)
	}
	return ""
}

// ensureKey loads the key in file if it is of type want, or makes one. It
// returns how long making it took (0 if loaded).
func ensureKey(o Options, file string, want keys.Name) (crypto.Signer, time.Duration, error) {
	k, err := pki.LoadKey(o.State, file)
	if err == nil {
		if have, _ := keys.NameOf(k.Public()); have == want {
			return k, 0, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		o.Log.Warn("the key cannot be read: making a new one", "file", file, "err", err)
	}
	o.Log.Info("generating a key", "key", want, "file", file)
	t0 := time.Now()
	if k, err = keys.Generate(want, rand.Reader); err != nil {
		return nil, 0, err
	}
	took := time.Since(t0)
	if err := pki.SaveKey(o.State, file, k); err != nil {
		return nil, 0, err
	}
	return k, took, nil
}

// ensureServer makes sure of the HTTPS key name in keyFile and its
// certificate in certFile; nil for name "" (no key of the other family).
func ensureServer(o Options, ca *pki.CA, rep *report.Report, keyFile, certFile, name string, now time.Time) (*pki.Server, error) {
	if name == "" {
		return nil, nil
	}
	key, keygen, err := ensureKey(o, keyFile, keys.Name(name))
	if err != nil {
		return nil, err
	}
	noteKeygen(rep.TLS, name, keygen)
	s := &pki.Server{Name: keys.Name(name), Key: key}
	if s.Leaf, err = ensureLeaf(o, ca, key, certFile, now); err != nil {
		return nil, err
	}
	return s, nil
}

func noteKeygen(rows []*measure.Result, key string, took time.Duration) {
	if took == 0 {
		return
	}
	for _, r := range rows {
		if string(r.Key) == key {
			r.KeygenMs = float64(took.Microseconds()) / 1000
		}
	}
}

// caNotes say what the owner must do for the names in extra_domains that
// the CA, made before they were set, cannot vouch for: the server's
// certificate leaves them out, and a device that uses them gets a name
// error.
func caNotes(o Options, ca *pki.CA) []string {
	var out []string
	for _, n := range pki.BoxDNSNames(o.Config.Hostname, o.Config.ExtraDomains) {
		if ca.Permits(n) {
			continue
		}
		out = append(out, fmt.Sprintf("%s is not served"+caNoteMark+" was made before extra_domains named it, "+
			"and may vouch only for the names it was made for (%s). To use it: stop the box, move ca.crt and ca.key out of %s, "+
			"start it (a new CA is made, with every name in extra_domains), and install the new CA on every device from the welcome page; "+
			"or reach the box by one of its names above.", n, strings.Join(ca.Cert.PermittedDNSDomains, ", "), o.State.Path))
	}
	return out
}

// caNoteMark is in every note caNotes makes.
const caNoteMark = ": this box's certificate authority"

// ensureLeaf loads the server certificate or issues a new one when it does
// not cover the current names, is for another key, or nears expiry.
func ensureLeaf(o Options, ca *pki.CA, key crypto.Signer, file string, now time.Time) (*x509.Certificate, error) {
	// Only names the CA may certify: one made before a suffix was added
	// to extra_domains cannot vouch for it.
	names := pki.BoxNames(o.Config.Hostname, append(slices.Clone(o.Config.ExtraDomains), pki.LearnedDomains(o.resolvConf())...), addrs(o))
	names.DNS = slices.DeleteFunc(names.DNS, func(n string) bool { return !ca.Permits(n) })
	leaf, err := pki.LoadLeaf(o.State, file)
	if err != nil {
		o.Log.Warn("the server certificate cannot be read: issuing a new one", "err", err)
	}
	need, why := pki.NeedsReissue(leaf, ca, key.Public(), names, now)
	if !need {
		return leaf, nil
	}
	o.Log.Info("issuing the server certificate", "names", names, "why", why)
	leaf, err = ca.Issue(key.Public(), names, now, rand.Reader)
	if err != nil {
		return nil, err
	}
	return leaf, pki.SaveLeaf(o.State, file, leaf, ca)
}

func saveReport(dir *state.Dir, rep *report.Report) error {
	b, err := rep.JSON()
	if err != nil {
		return err
	}
	if err := dir.Write(state.Report, b, 0o644); err != nil {
		return err
	}
	c, err := report.EncodeDecision(rep.Choice)
	if err != nil {
		return err
	}
	return dir.Write(state.Decision, c, 0o644)
}

func addrs(o Options) []net.IP {
	if o.Addrs != nil {
		return o.Addrs()
	}
	return pki.InterfaceAddrs()
}
