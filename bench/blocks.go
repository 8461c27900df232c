package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/measure"
)

// pair is the same phase on both servers: the peer (nginx or sshd) and
// bonesync.
type pair struct {
	Peer, Bonesync figures
}

// httpsResult is one key type: full handshakes, then resumed ones.
type httpsResult struct {
	Key           string
	Full, Resumed pair
	Err           string
}

// httpsBlock measures nginx and `bonesync serve` with one key type. Both
// serve the same key and the same certificate chain (the one bonesync
// issued for it from its CA: tls.crt), and the same file, bonesync's
// /ca.crt. Each phase is httpsRounds rounds, the servers alternating
// which goes first, so a drift of the machine's speed does not favour one
// side.
func httpsBlock(ctx context.Context, o *options, key, dir string) httpsResult {
	res := httpsResult{Key: key}
	if err := httpsRun(ctx, o, dir, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

func httpsRun(ctx context.Context, o *options, dir string, res *httpsResult) error {
	st := filepath.Join(dir, "state")
	file, err := os.ReadFile(filepath.Join(st, "ca.crt"))
	if err != nil {
		return err
	}
	ngx, err := startNginx(ctx, filepath.Join(o.work, "nginx-"+res.Key), filepath.Join(st, "tls.crt"), filepath.Join(st, "tls.key"), file)
	if err != nil {
		return err
	}
	defer ngx.stop()
	bs, _, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return err
	}
	defer bs.stop()
	p := o.phase()
	p.dur /= httpsRounds
	type step struct {
		what   string
		s      *server
		resume bool
		into   *[]figures
	}
	var fullPeer, fullBs, resPeer, resBs []figures
	for r := range httpsRounds {
		steps := []step{
			{"full", ngx, false, &fullPeer}, {"full", bs, false, &fullBs},
			{"resumed", bs, true, &resBs}, {"resumed", ngx, true, &resPeer},
		}
		if r%2 == 1 { // the other server first in every other round
			steps[0], steps[1], steps[2], steps[3] = steps[1], steps[0], steps[3], steps[2]
		}
		for _, st := range steps {
			o.logf("https %s %s, round %d of %d: %s, %d clients, %v", res.Key, st.what, r+1, httpsRounds, st.s.name, p.clients, p.dur)
			f, err := loadPhase(ctx, st.s, p, httpsGet(st.s.addr, tlsClient(st.resume), file))
			if err != nil {
				return err
			}
			*st.into = append(*st.into, f)
			o.logf("  %.0f/s, p50 %.1f ms, p95 %.1f ms, CPU %.2f ms each, %d errors",
				f.Rate, ms(f.P50), ms(f.P95), ms(f.CPUPer()), f.Errors)
		}
	}
	res.Full = pair{Peer: mergeRounds(fullPeer), Bonesync: mergeRounds(fullBs)}
	res.Resumed = pair{Peer: mergeRounds(resPeer), Bonesync: mergeRounds(resBs)}
	return nil
}

// httpsRounds is how many rounds each HTTPS phase is split into, the
// servers alternating which goes first, so that the machine's drift
// (other jobs on a shared VM) falls on both alike.
const httpsRounds = 4

// mergeRounds is one phase's figures from its rounds: the counts and the
// CPU summed (so CPUPer is over every connection), the rate over the
// rounds' time, the latencies the rounds' medians, the memory the most.
func mergeRounds(rounds []figures) figures {
	var m figures
	var rate float64
	var p50, p95 []time.Duration
	for _, f := range rounds {
		m.N += f.N
		m.Errors += f.Errors
		if m.FirstErr == "" {
			m.FirstErr = f.FirstErr
		}
		m.CPU += f.CPU
		m.Resumed += f.Resumed
		m.HWMKB, m.PSSKB = max(m.HWMKB, f.HWMKB), max(m.PSSKB, f.PSSKB)
		m.Detail = f.Detail
		rate += f.Rate
		p50, p95 = append(p50, f.P50), append(p95, f.P95)
	}
	if len(rounds) > 0 {
		m.Rate = rate / float64(len(rounds))
		m.P50, m.P95 = measure.Percentile(p50, 50), measure.Percentile(p95, 50)
	}
	return m
}

// sshResult is the SSH comparison.
type sshResult struct {
	Login pair
	// SSHDStart is the median wall time of `sshd -t` (start, read the
	// config and host key, exit): for scale, since sshd's re-executed child
	// pays a similar start-up on every connection.
	SSHDStart time.Duration
	Err       string
}

// sshBlock measures sshd and bonesync's SFTP listener, both with the
// ed25519 benchmark key as host key (the client checks that both present
// it), up to the refusal of a public key that neither accepts.
func sshBlock(ctx context.Context, o *options, dir string) sshResult {
	var res sshResult
	if err := sshRun(ctx, o, dir, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

// sshPeer is sshd with the ed25519 benchmark key as its host key, in
// o.work/name, and what a client needs: the host key to check and a key of
// its own that no server accepts.
type sshPeer struct {
	sshd    *server
	hostPub ssh.PublicKey
	client  ssh.Signer
}

func startSSHPeer(ctx context.Context, o *options, name string) (*sshPeer, error) {
	host, hostPEM, err := sshdHostKey()
	if err != nil {
		return nil, err
	}
	p := &sshPeer{}
	if p.hostPub, err = ssh.NewPublicKey(host.Public()); err != nil {
		return nil, err
	}
	_, ck, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	if p.client, err = ssh.NewSignerFromKey(ck); err != nil {
		return nil, err
	}
	dir := filepath.Join(o.work, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p.sshd, err = startSSHD(ctx, dir, hostPEM)
	return p, err
}

func sshRun(ctx context.Context, o *options, dir string, res *sshResult) error {
	peer, err := startSSHPeer(ctx, o, "sshd")
	if err != nil {
		return err
	}
	sshd, client, hostPub := peer.sshd, peer.client, peer.hostPub
	defer sshd.stop()
	bs, sftpAddr, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return err
	}
	defer bs.stop()
	p := o.phase()
	for _, st := range []struct {
		s    *server
		addr string
		into *figures
	}{
		{sshd, sshd.addr, &res.Login.Peer},
		{bs, sftpAddr, &res.Login.Bonesync},
	} {
		o.logf("ssh: %s, %d clients, %v", st.s.name, p.clients, p.dur)
		f, err := loadPhase(ctx, st.s, p, sshLogin(st.addr, client, hostPub))
		if err != nil {
			return err
		}
		*st.into = f
		o.logf("  %.0f/s, p50 %.1f ms, p95 %.1f ms, CPU %.2f ms each, %d errors",
			f.Rate, ms(f.P50), ms(f.P95), ms(f.CPUPer()), f.Errors)
	}
	var starts []time.Duration
	for range 11 {
		t0 := time.Now()
		if err := exec.CommandContext(ctx, "/usr/sbin/sshd", "-t", "-f", filepath.Join(o.work, "sshd", "sshd_config")).Run(); err != nil {
			return fmt.Errorf("sshd -t: %w", err)
		}
		starts = append(starts, time.Since(t0))
	}
	res.SSHDStart = measure.Percentile(starts, 50)
	return nil
}

// prepareAll makes bonesync's state directories, one per key type, all at
// once: the first-start benchmarks' own figures are not used (the keys are
// pinned), so they may share the CPU.
func prepareAll(ctx context.Context, o *options, keyTypes []string) (map[string]string, error) {
	_, sshKey, err := benchKey("ed25519")
	if err != nil {
		return nil, err
	}
	dirs := map[string]string{}
	errs := make(chan error, len(keyTypes))
	for _, k := range keyTypes {
		_, tlsKey, err := benchKey(k)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(o.work, "bonesync-"+k)
		dirs[k] = dir
		go func() { errs <- prepareBonesync(ctx, o.bonesync, dir, k, tlsKey, sshKey) }()
	}
	var first error
	for range keyTypes {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, fmt.Errorf("prepare bonesync: %w", first)
	}
	return dirs, nil
}
