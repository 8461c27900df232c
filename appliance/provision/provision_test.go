package provision

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/sysd"
)

// opts returns Options over a fresh state dir with a tiny benchmark budget
// (every phase then takes its minimum samples) and load generated in-process.
func opts(t testing.TB) Options {
	t.Helper()
	dir, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clk, _ := clock.New(time.Time{}, state.TimeFile{Dir: dir})
	cfg := config.Default()
	cfg.BenchBudget = time.Second
	buf := &bytes.Buffer{}
	log := sysd.NewLogger(buf)
	logBuffers[log] = buf
	return Options{State: dir, Config: cfg, Clock: clk, Log: log, ResolvConf: filepath.Join(dir.Path, "no-resolv.conf"),
		Addrs: func() []net.IP { return pki.Addrs("127.0.0.1", "192.168.7.2") }}
}

// logBuffers holds what each test's logger wrote.
var logBuffers = map[*slog.Logger]*bytes.Buffer{}

func logOf(o Options) string { return logBuffers[o.Log].String() }

func ensure(t *testing.T, o Options) *Box {
	t.Helper()
	b, err := Ensure(context.Background(), o)
	if err != nil {
		t.Fatalf("Ensure: %v\nlog:\n%s", err, logOf(o))
	}
	return b
}

func TestFirstStartThenReuse(t *testing.T) {
	o := opts(t)
	b := ensure(t, o)
	if !b.Benchmarked {
		t.Fatal("first start did not benchmark")
	}
	if keys.Strength(keys.Name(b.Choice.TLS.Key)) < keys.MinStrength || b.Choice.TLS.Key == "" || b.Choice.SSH.Key == "" {
		t.Fatalf("choice = %+v", b.Choice)
	}
	for _, f := range []string{state.CACert, state.CAKey, state.TLSKey, state.TLSCert, state.SSHHostKey, state.Decision, state.Report} {
		if !o.State.Exists(f) {
			t.Errorf("%s not written", f)
		}
	}
	for _, f := range []string{state.CAKey, state.TLSKey, state.SSHHostKey} {
		if fi, _ := os.Stat(o.State.Join(f)); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if got, _ := keys.NameOf(b.Server.Key.Public()); string(got) != b.Choice.TLS.Key {
		t.Errorf("TLS key is %s, choice %s", got, b.Choice.TLS.Key)
	}
	if !strings.Contains(b.Server.Leaf.IPAddresses[1].String(), "192.168.7.2") {
		t.Errorf("leaf addresses %v lack 192.168.7.2", b.Server.Leaf.IPAddresses)
	}
	// Beside each chosen key, one of the other family, with its own
	// certificate from the same CA for the same names.
	for _, o := range []struct {
		what          string
		chosen, other string
		key           crypto.Signer
	}{
		{"TLS", b.Choice.TLS.Key, b.Choice.TLSOther.Key, b.OtherServer.Key},
		{"SSH", b.Choice.SSH.Key, b.Choice.SSHOther.Key, b.OtherSSHKey},
	} {
		got, _ := keys.NameOf(o.key.Public())
		if o.other == "" || string(got) != o.other || keys.FamilyOf(o.other) == keys.FamilyOf(o.chosen) {
			t.Errorf("%s: chosen %s, beside it %s (key %s): want another family's", o.what, o.chosen, o.other, got)
		}
	}
	if err := b.OtherServer.Leaf.CheckSignatureFrom(b.CA.Cert); err != nil || !slices.Equal(b.OtherServer.Leaf.DNSNames, b.Server.Leaf.DNSNames) {
		t.Errorf("the other certificate: %v, names %v against %v", err, b.OtherServer.Leaf.DNSNames, b.Server.Leaf.DNSNames)
	}
	for _, f := range []string{state.TLSOtherKey, state.TLSOtherCert, state.SSHOtherHostKey} {
		if !o.State.Exists(f) {
			t.Errorf("%s not written", f)
		}
	}

	b2 := ensure(t, o)
	if b2.Benchmarked {
		t.Error("second start benchmarked again")
	}
	if !b2.Server.Key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(b.Server.Key.Public()) ||
		!b2.Server.Leaf.Equal(b.Server.Leaf) || !b2.CA.Cert.Equal(b.CA.Cert) || b2.Choice.TLS.Key != b.Choice.TLS.Key {
		t.Error("second start changed the key, the certificate, the CA or the choice")
	}
}

func TestNewAddressReissuesLeafOnly(t *testing.T) {
	o := opts(t)
	b := ensure(t, o)
	o.Addrs = func() []net.IP { return pki.Addrs("127.0.0.1", "10.0.0.9") }
	b2 := ensure(t, o)
	if b2.Benchmarked || b2.Server.Leaf.Equal(b.Server.Leaf) {
		t.Fatalf("new address: benchmarked %v, leaf reissued %v", b2.Benchmarked, !b2.Server.Leaf.Equal(b.Server.Leaf))
	}
	if got := b2.Server.Leaf.IPAddresses[len(b2.Server.Leaf.IPAddresses)-1].String(); got != "10.0.0.9" {
		t.Errorf("reissued leaf has %s, want 10.0.0.9", got)
	}
	if !b2.Server.Key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(b.Server.Key.Public()) {
		t.Error("a new address changed the key")
	}
}

func TestDamagedCAStopsWithAdvice(t *testing.T) {
	o := opts(t)
	ensure(t, o)
	os.WriteFile(o.State.Join(state.CAKey), []byte("garbage"), 0o600)
	before, _ := os.ReadFile(o.State.Join(state.CACert))
	_, err := Ensure(context.Background(), o)
	if err == nil || !state.IsDamaged(err) || !strings.Contains(err.Error(), o.State.Join(state.CAKey)) {
		t.Fatalf("Ensure with a damaged CA key = %v, want a Damaged error naming it", err)
	}
	after, _ := os.ReadFile(o.State.Join(state.CACert))
	if !bytes.Equal(before, after) {
		t.Error("the CA certificate was replaced")
	}
}

func TestDamagedRegenerableFiles(t *testing.T) {
	o := opts(t)
	b := ensure(t, o)
	os.WriteFile(o.State.Join(state.Decision), []byte("{\"tls\": "), 0o644)
	os.WriteFile(o.State.Join(state.TLSKey), nil, 0o600)
	b2 := ensure(t, o)
	if !b2.Benchmarked {
		t.Error("a damaged decision did not lead to a new benchmark")
	}
	if !b2.CA.Cert.Equal(b.CA.Cert) {
		t.Error("the CA changed")
	}
	if b2.Server.Leaf.Equal(b.Server.Leaf) {
		t.Error("a new key kept the old certificate")
	}
	if !strings.Contains(logOf(o), o.State.Join(state.Decision)) {
		t.Errorf("log does not name the damaged decision:\n%s", logOf(o))
	}
}

func TestPinnedKeyAndPolicyChange(t *testing.T) {
	o := opts(t)
	ensure(t, o)
	o.Config.TLSKey = keys.RSA3072
	o.Config.Target = time.Nanosecond // nothing can meet it
	b := ensure(t, o)
	if !b.Benchmarked {
		t.Fatal("a changed config did not lead to a new benchmark")
	}
	if b.Choice.TLS.Key != "rsa-3072" || !b.Choice.TLS.Pinned || b.Choice.TLS.MetTarget {
		t.Errorf("TLS decision = %+v, want pinned rsa-3072 missing the target", b.Choice.TLS)
	}
	if len(b.Choice.TLS.Warnings) == 0 {
		t.Error("no warning for a pinned key that misses the target")
	}
	if name, _ := keys.NameOf(b.Server.Key.Public()); name != keys.RSA3072 {
		t.Errorf("served key %s, want rsa-3072", name)
	}
	if b.Choice.SSH.MetTarget || len(b.Choice.SSH.Warnings) != 1 || !strings.Contains(b.Choice.SSH.Warnings[0], "what would help") {
		t.Errorf("SSH decision with an impossible target = %+v, want a plain warning and what would help", b.Choice.SSH)
	}
	if b.Choice.TLSPostQuantum {
		t.Error("post-quantum offered although it cannot meet the target")
	}
}

func TestClockFloorOnCertificates(t *testing.T) {
	o := opts(t)
	build := time.Now().Add(365 * 24 * time.Hour) // a clock that reads a year early
	o.Clock, _ = clock.New(build, nil)
	b := ensure(t, o)
	for what, nb := range map[string]time.Time{"CA": b.CA.Cert.NotBefore, "leaf": b.Server.Leaf.NotBefore} {
		if nb.Before(build.Add(-2 * time.Hour)) {
			t.Errorf("%s NotBefore %v, earlier than the floor %v", what, nb, build)
		}
	}
}

func TestDamagedCertificateReissued(t *testing.T) {
	o := opts(t)
	b := ensure(t, o)
	os.WriteFile(o.State.Join(state.TLSCert), []byte("-----BEGIN CERTIFICATE-----\ngarbage\n"), 0o644)
	b2 := ensure(t, o)
	if b2.Benchmarked || b2.Server.Leaf == nil || b2.Server.Leaf.Equal(b.Server.Leaf) {
		t.Fatalf("a damaged tls.crt: benchmarked %v, new leaf %v", b2.Benchmarked, b2.Server.Leaf != nil)
	}
	if log := logOf(o); !strings.Contains(log, o.State.Join(state.TLSCert)+" is damaged") || !strings.Contains(log, "a new certificate is issued") {
		t.Errorf("the log does not name the damaged certificate:\n%s", log)
	}
}

func TestRefreshNeverBenchmarks(t *testing.T) {
	o := opts(t)
	ensure(t, o)
	os.Remove(o.State.Join(state.Decision))
	o.NoWait = true
	if _, err := Ensure(context.Background(), o); !errors.Is(err, ErrNeedsBenchmark) {
		t.Errorf("refresh without a decision = %v, want ErrNeedsBenchmark", err)
	}
	if o.State.Exists(state.Decision) {
		t.Error("a refresh wrote a decision")
	}
	// An interrupted benchmark saves no decision.
	o.NoWait = false
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Ensure(ctx, o); err == nil {
		t.Error("Ensure with a cancelled context succeeded")
	}
	if o.State.Exists(state.Decision) {
		t.Error("an interrupted benchmark saved a decision")
	}
}

// The CA covers the home suffixes ISP routers use and the router's own
// search domain, learned when it is made; a domain added to extra_domains
// later is left out of the certificate (the CA cannot vouch for it), and
// the report tells the owner what to do.
func TestHomeDomains(t *testing.T) {
	o := opts(t)
	os.WriteFile(o.ResolvConf, []byte("search speedport.ip\n"), 0o644)
	b := ensure(t, o)
	for _, want := range []string{"bonesync.home", "bonesync.localdomain", "bonesync.box", "bonesync.home.lan", "bonesync.speedport.ip", "bonesync.fritz.box"} {
		if !slices.Contains(b.Server.Leaf.DNSNames, want) {
			t.Errorf("the certificate lacks %s: %v", want, b.Server.Leaf.DNSNames)
		}
	}
	o.Config.ExtraDomains = append(o.Config.ExtraDomains, "example.net")
	ensure(t, o)
	b = ensure(t, o) // twice: the note is not repeated
	if n := len(slices.DeleteFunc(slices.Clone(b.Report.Notes), func(n string) bool { return !strings.Contains(n, "example.net") })); n != 1 {
		t.Errorf("the note is there %d times", n)
	}
	if slices.Contains(b.Server.Leaf.DNSNames, "bonesync.example.net") {
		t.Error("the certificate names what its CA cannot vouch for")
	}
	if !slices.ContainsFunc(b.Report.Notes, func(n string) bool {
		return strings.Contains(n, "bonesync.example.net is not served") && strings.Contains(n, "move ca.crt and ca.key out of "+o.State.Path)
	}) {
		t.Errorf("no note says what to do: %q", b.Report.Notes)
	}
	o.Config.ExtraDomains = o.Config.ExtraDomains[:len(o.Config.ExtraDomains)-1]
	if b = ensure(t, o); slices.ContainsFunc(b.Report.Notes, func(n string) bool { return strings.Contains(n, "example.net") }) {
		t.Error("the note stays after extra_domains was put back")
	}
}

// A report with no SSH rows (a benchmark that failed before SSH, whose
// choice is the safe default) has no other SSH key: the box serves the
// chosen one alone, and the report reads and prints.
func TestNoOtherKey(t *testing.T) {
	o := opts(t)
	ensure(t, o)
	raw, err := o.State.Read(state.Report)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	rep.SSH, rep.SSHKex = nil, nil
	rep.Choice.SSH.Verdicts = nil
	rep.Choice.TLS.Verdicts = nil // as the fallback decision has none
	if err := saveReport(o.State, rep); err != nil {
		t.Fatal(err)
	}
	b := ensure(t, o)
	if b.OtherSSHKey != nil || b.Choice.SSHOther.Key != "" || b.OtherServer == nil {
		t.Errorf("other SSH key %v (%q), other TLS server %v", b.OtherSSHKey, b.Choice.SSHOther.Key, b.OtherServer)
	}
	var out strings.Builder
	if err := b.Report.Console(&out); err != nil || !strings.Contains(out.String(), "BESIDE") {
		t.Errorf("console: %v\n%s", err, out.String())
	}
}
