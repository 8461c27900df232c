package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// results is everything one run measured.
type results struct {
	Machine   machine
	Started   time.Time
	Took      time.Duration
	Clients   int
	Warm, Dur time.Duration
	FileBytes int
	HTTPS     []httpsResult
	SSH       *sshResult
	Abuse     *abuseResult
	Sync      *syncResult
	Photos    *photoResult
	Copies    *copyResult
	Probe     *probeResult
	ARM       *armResult
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(kb int64) float64 { return float64(kb) / 1024 }

// ratio is a/b as "0.62×", or "–" when b is 0.
func ratio(a, b float64) string {
	if b == 0 || a == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func num(v float64, prec int) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// markdown writes the report.
func (r *results) markdown(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "# bonesync beside nginx/OpenSSL and OpenSSH: one run on %s\n\n", m.Host)
	fmt.Fprintf(w, "%s, %v. Ratios are bonesync / peer from this one run: above 1 means bonesync "+
		"serves more connections per second, or needs more time, CPU or memory.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Took.Round(time.Second))
	fmt.Fprintf(w, "| machine | |\n|---|---|\n")
	fmt.Fprintf(w, "| CPU | %s, %d cores (a shared VM: treat single figures as noisy) |\n", m.CPU, m.Cores)
	fmt.Fprintf(w, "| kernel | Linux %s; fork+exec+exit of /bin/true takes %.1f ms (median of 21) |\n", m.Kernel, ms(m.Spawn))
	fmt.Fprintf(w, "| Go | %s; %s |\n", m.Go, m.Bonesync)
	fmt.Fprintf(w, "| nginx | %s |\n| OpenSSL | %s |\n| OpenSSH | %s |\n", m.Nginx, m.OpenSSL, m.OpenSSH)
	if r.ARM != nil {
		fmt.Fprintf(w, "| qemu | %s |\n", m.Qemu)
		if m.ArmPackages != "" {
			fmt.Fprintf(w, "| armhf sysroot | %s |\n", m.ArmPackages)
		}
	}
	if len(r.HTTPS) == 0 && r.SSH == nil {
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "| load | %d clients at once, each opening its next connection when the last is done; "+
			"%v per phase after %v of warm-up; Go client in the benchmark process, on the same cores as the servers |\n\n",
			r.Clients, r.Dur, r.Warm)
	}

	if len(r.HTTPS) > 0 {
		fmt.Fprintf(w, "## HTTPS: TLS 1.3, X25519, one GET of a %d-byte file per connection\n\n", r.FileBytes)
		fmt.Fprintln(w, "nginx: 2 workers, session tickets on. bonesync: `bonesync serve`, its whole HTTPS stack. "+
			"Both serve the same benchmark key with the same chain (the leaf bonesync issued for it, then bonesync's P-384 CA) and the same file (that CA).")
		fmt.Fprintln(w)
		tableHead(w, "key", "handshake", "server", true)
		var notes []string
		for _, h := range r.HTTPS {
			if h.Err != "" {
				fmt.Fprintf(w, "| %s | | failed | | | | | | | | |\n", h.Key)
				notes = append(notes, fmt.Sprintf("%s: %s", h.Key, h.Err))
				continue
			}
			for _, ph := range []struct {
				mode string
				p    pair
			}{{"full", h.Full}, {"resumed", h.Resumed}} {
				tableRows(w, h.Key, ph.mode, "nginx", ph.p, true)
				notes = append(notes, errorNotes(h.Key+" "+ph.mode, "nginx", ph.p)...)
			}
		}
		fmt.Fprintln(w)
		if d := httpsDetail(r.HTTPS); d != "" {
			fmt.Fprintf(w, "Negotiated: %s.\n\n", d)
		}
		writeNotes(w, notes)
	}

	if r.SSH != nil {
		fmt.Fprintln(w, "## SFTP: connect, curve25519-sha256, ed25519 host key, up to a refused public key")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "sshd: OpenSSH, a process per connection (its CPU counted through the listener's reaped children). "+
			"bonesync: its SFTP listener (x/crypto/ssh). Both present the same ed25519 host key (checked by the client).")
		fmt.Fprintln(w)
		tableHead(w, "key", "login", "server", false)
		var notes []string
		if r.SSH.Err != "" {
			fmt.Fprintln(w, "| ed25519 | refused | failed | | | | | | | |")
			notes = append(notes, r.SSH.Err)
		} else {
			tableRows(w, "ed25519", "refused", "sshd", r.SSH.Login, false)
			notes = append(notes, errorNotes("ssh", "sshd", r.SSH.Login)...)
		}
		fmt.Fprintln(w)
		if r.SSH.SSHDStart > 0 {
			fmt.Fprintf(w, "For scale: `sshd -t` (start, read the config and the host key, exit) takes %.1f ms here (median of 11); "+
				"sshd's re-executed child pays a similar start-up for every connection, and process creation is dear on this VM "+
				"(see the kernel row): the SSH ratio measures that as much as sshd's cryptography.\n\n", ms(r.SSH.SSHDStart))
		}
		writeNotes(w, notes)
	}

	if r.Abuse != nil {
		r.Abuse.markdown(w)
	}

	if r.Sync != nil {
		r.Sync.markdown(w)
	}

	if r.Probe != nil {
		r.Probe.markdown(w)
	}
	if r.Copies != nil {
		r.Copies.markdown(w)
	}
	if r.Photos != nil {
		r.Photos.markdown(w)
	}

	if r.ARM != nil && r.ARM.Size != nil {
		r.ARM.Size.markdown(w)
	}
	if r.ARM != nil && (r.ARM.Size == nil || len(r.ARM.Rows)+len(r.ARM.Serve)+len(r.ARM.Notes) > 0 || r.ARM.Err != "") {
		r.ARM.markdown(w)
	}

	fmt.Fprintln(w, "## How to read it")
	fmt.Fprintln(w)
	for _, s := range []string{
		"handshakes/s: connections completed per second with all clients busy, each one full (or resumed) handshake plus, for HTTPS, one GET; p50/p95: the connection's latency from connect to the last byte of the response (HTTPS) or to the refusal of the login (SSH), nearest-rank percentiles of every connection in the phase.",
		"server CPU ms/handshake: user+system time of all the server's processes (/proc/PID/stat, 10 ms ticks; children reaped by the listener included) over the phase, divided by the connections completed. It includes the request, not only the handshake.",
		"VmHWM: the sum of the peak resident sets of the server's processes alive at the end of the phase (nginx: master and workers; sshd: the listener only; bonesync: one process, peak since it started). Peak PSS: the largest proportional set size of the whole process tree, sampled every 100 ms, so shared pages and sshd's per-connection processes are counted fairly.",
		"The load generator shares the 2 cores with the server under test, as bonesync's own first-start benchmark does; a server that needs less CPU leaves more to the client, so handshakes/s and latency favour the cheaper server a little more than the CPU figure alone would.",
		"One run on a shared VM: the ratios are what to quote, and only to about ±20%. A resumed handshake does not use the server key, " +
			"so the three resumed rows are three repeats of one measurement: how far their ratios differ shows this run's noise.",
	} {
		fmt.Fprintf(w, "- %s\n", s)
	}
}

func tableHead(w io.Writer, c1, c2, c3 string, resumed bool) {
	head := []string{c1, c2, c3, "handshakes/s", "p50 ms", "p95 ms", "server CPU ms/handshake", "VmHWM MiB", "peak PSS MiB", "errors"}
	if resumed {
		head = append(head, "resumed")
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
	align := []string{"---", "---", "---"}
	for range head[3:] {
		align = append(align, "---:")
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
}

// tableRows writes the peer, bonesync and the ratio.
func tableRows(w io.Writer, key, mode, peer string, p pair, resumed bool) {
	row := func(a, b, c string, f figures) {
		cells := []string{a, b, c, num(f.Rate, 0), num(ms(f.P50), 2), num(ms(f.P95), 2), num(ms(f.CPUPer()), 3),
			num(mib(f.HWMKB), 1), num(mib(f.PSSKB), 1), fmt.Sprint(f.Errors)}
		if resumed {
			pct := 0.0
			if f.N > 0 {
				pct = 100 * float64(f.Resumed) / float64(f.N)
			}
			cells = append(cells, fmt.Sprintf("%.0f%%", pct))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	row(key, mode, peer, p.Peer)
	row("", "", "bonesync", p.Bonesync)
	a, b := p.Bonesync, p.Peer
	cells := []string{"", "", "**bonesync / " + peer + "**", "**" + ratio(a.Rate, b.Rate) + "**",
		ratio(ms(a.P50), ms(b.P50)), ratio(ms(a.P95), ms(b.P95)), "**" + ratio(ms(a.CPUPer()), ms(b.CPUPer())) + "**",
		ratio(mib(a.HWMKB), mib(b.HWMKB)), ratio(mib(a.PSSKB), mib(b.PSSKB)), ""}
	if resumed {
		cells = append(cells, "")
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

func errorNotes(what, peer string, p pair) []string {
	var out []string
	for _, s := range []struct {
		name string
		f    figures
	}{{peer, p.Peer}, {"bonesync", p.Bonesync}} {
		if s.f.Errors > 0 {
			out = append(out, fmt.Sprintf("%s, %s: %d failed connections, the first: %s", what, s.name, s.f.Errors, s.f.FirstErr))
		}
	}
	return out
}

func httpsDetail(hs []httpsResult) string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hs {
		for _, s := range []struct {
			name string
			f    figures
		}{{"nginx", h.Full.Peer}, {"bonesync", h.Full.Bonesync}} {
			d := s.name + " " + s.f.Detail
			if s.f.Detail != "" && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return strings.Join(out, "; ")
}

func writeNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", strings.ReplaceAll(n, "\n", " "))
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
}

// serveMarkdown writes the product's counts: the board's binary, the
// real serve, by whole runs.
func (a *armResult) serveMarkdown(w io.Writer) {
	if len(a.Serve) == 0 {
		return
	}
	fmt.Fprintf(w, "**The product**: the board's binary (`make build-arm`, with the armcrypto overlay), the real `bonesync serve` on a real state "+
		"directory, GOMAXPROCS=1, under qemu-arm, by the difference of whole runs (start, warm-up, the counted work, SIGTERM; less two base runs "+
		"without the counted work that idle as long): handshakes over %d connections a run, each a GET of the CA file; bulk as a %d MiB transfer's run "+
		"less a %d MiB one's. The collector and the runtime are in the count, at the serving box's rhythm; the collector's share is from the profiling plugin "+
		"(insnprof: its marking and sweeping, and the stack maps' walk that both the collector's stack scans and a goroutine's stack growth make, the functions of bench's collectorFuncs), the blocks named by the symbols of a build of the same text. Million instructions:\n\n",
		a.ServeN, armServeMiB, armServeBaseMiB)
	fmt.Fprintln(w, "| row | bonesync serve | of it, the collector and stack copies | two base runs differed by | peer | peer's count | bonesync / peer |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|---:|")
	for _, r := range a.Serve {
		gc := "–"
		if r.GC != 0 {
			gc = fmt.Sprintf("%.2f (%.0f%%)", r.GC, 100*r.GC/r.Serve)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | **%s** |\n", r.Row, num(r.Serve, 2), gc, num(r.Spread, 2), orDash(r.Peer), num(r.PeerCount, 2), ratio(r.Serve, r.PeerCount))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The peers are counted alike: Debian's armhf nginx by whole runs, serving the box's own chain and key, with as many connections "+
		"and the same downloads (over HTTP/2 with nginx's http2 for that row); sshd as one `sshd -i` a connection, the sum of its processes, with OpenSSH's "+
		"sftp client (16 MiB less 1 MiB, as the product) and with the pkg/sftp client (the rest of this section's count: 8 MiB less a login).")
	fmt.Fprintln(w)
}

// markdown writes the ARM section.
func (a *armResult) markdown(w io.Writer) {
	fmt.Fprintln(w, "## ARM instructions per TLS 1.3 server connection (qemu-arm, cortex-a8 model, armcost plugin)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Million instructions per connection (handshake + a GET of the CA file), counted over the whole server process: "+
		"`bonesync serve` (package server's wiring, on a state directory with the benchmark keys) in `bench/armcost`, built GOARM=7, between "+
		"markers it executes when no connection is open; Debian's armhf nginx (one process, `master_process off`) by difference of "+
		"two whole runs. The client is this program, natively, one connection at a time. Same key and the box's own certificate chain on both sides. "+
		"The README columns are the reference figures the armcost tool's README prints (the tool -armcost names), **not measured by this run**.")
	fmt.Fprintln(w)
	if a.Err != "" {
		fmt.Fprintf(w, "- **failed: %s**\n\n", strings.ReplaceAll(a.Err, "\n", " "))
	}
	a.serveMarkdown(w)
	if len(a.Rows) > 0 {
		fmt.Fprintln(w, "The rest of this section counts a harness, `bench/armcost`, between markers: a breakdown of where the instructions go, not the product's figures.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "bonesync is the board's build (`make build-arm`, with the armcrypto overlay); \"Go's crypto\" is the same code built without it (`make build-arm-std`).")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| key | handshake | bonesync | bonesync, Go's crypto | gain | nginx/OpenSSL | bonesync / nginx | README Go | README nginx | est. bonesync handshakes/s | est. nginx handshakes/s |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range a.Rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | **%s** | %s | %s | %s | %s |\n", r.Key, r.Mode,
				num(r.Go, 2), num(r.GoStd, 2), ratio(r.GoStd, r.Go), num(r.Nginx, 2), ratio(r.Go, r.Nginx), num(r.RefGo, 1), num(r.RefNginx, 1),
				estimate(r.Go), estimate(r.Nginx))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "The estimates are for one 1 GHz Cortex-A8 core **assuming 1-1.5 cycles per instruction** "+
			"(instructions are not cycles; the NEON instructions OpenSSL uses do more work each and may take more cycles, "+
			"so the count understates nginx's cost somewhat: only the board can say by how much).")
		fmt.Fprintln(w)
		var d []string
		if r := a.Rows[0]; r.GoDetail != "" {
			d = append(d, "bonesync "+r.GoDetail)
		}
		if r := a.Rows[0]; r.NgxDetail != "" {
			d = append(d, "nginx "+r.NgxDetail)
		}
		if len(d) > 0 {
			fmt.Fprintf(w, "Negotiated under qemu-arm: %s.\n\n", strings.Join(d, "; "))
		}
	}
	if len(a.Bulk) > 0 {
		fmt.Fprintf(w, "HTTPS download (GET of %d MiB, TLS 1.3, curl offering one suite) per MiB, million instructions, by difference with a GET of a tiny file "+
			"(bonesync between markers, nginx by whole runs):\n\n", armBulkMiB)
		fmt.Fprintln(w, "| suite | bonesync's HTTP (nginx: HTTP/1.1) | bonesync | bonesync, Go's crypto | gain | nginx/OpenSSL | bonesync / nginx | est. bonesync MB/s | est. nginx MB/s |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, b := range a.Bulk {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | **%s** | %s | %s |\n", b.Suite, b.HTTP, num(b.Go, 1), num(b.GoStd, 1), ratio(b.GoStd, b.Go),
				num(b.Ngx, 1), ratio(b.Go, b.Ngx), rate(b.Go), rate(b.Ngx))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "With curl's own list (OpenSSL 3.0: AES-256-GCM, ChaCha20-Poly1305, AES-128-GCM) the servers chose: bonesync %s, "+
			"bonesync with Go's crypto %s, nginx %s. The MB/s estimates are one 1 GHz core doing nothing else, at 1-1.5 cycles per instruction; "+
			"the port is 100 Mbit/s, 11.5 MB/s.\n\n", orDash(a.ChosenGo), orDash(a.ChosenStd), orDash(a.ChosenNgx))
	}
	if a.SFTP != nil {
		fmt.Fprintf(w, "SSH (curve25519-sha256, ed25519 host key, a login with an ed25519 user key, chacha20-poly1305@openssh.com; "+
			"the client is this program: x/crypto/ssh and github.com/pkg/sftp), million instructions: a connection that opens an SFTP session "+
			"and gets a tiny file (the median of %d), and per MiB a %d MiB put and get, each in a connection of its own, less that connection. "+
			"bonesync between markers; sshd (Debian's armhf OpenSSH, its version in the machine table) as one `sshd -i` per connection, the sum of its processes: "+
			"the connection with the process's start (libraries, configuration, host key), as Debian's sshd, which re-executes itself "+
			"for every connection, pays it. With `UsePAM no` and `internal-sftp` (Debian's default config runs PAM and executes "+
			"sftp-server), sshd's figures are a floor:\n\n", armLogins, armBulkMiB)
		fmt.Fprintln(w, "| | bonesync | bonesync, Go's crypto | gain | sshd | bonesync / sshd | est. bonesync | est. sshd |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range []struct{ name, key, unit string }{{"connection and login", "login", "conn/s"}, {"SFTP put per MiB", "put", "MB/s"}, {"SFTP get per MiB", "get", "MB/s"}} {
			est := func(m map[string]float64) string {
				if r.unit == "MB/s" {
					return rate(m[r.key])
				}
				return estimate(m[r.key])
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | **%s** | %s %s | %s %s |\n", r.name, num(a.SFTP[r.key], 2), num(a.SFTPStd[r.key], 2),
				ratio(a.SFTPStd[r.key], a.SFTP[r.key]), num(a.SFTPSshd[r.key], 2), ratio(a.SFTP[r.key], a.SFTPSshd[r.key]),
				est(a.SFTP), r.unit, est(a.SFTPSshd), r.unit)
		}
		fmt.Fprintln(w)
	}
	if a.UploadHashed > 0 {
		fmt.Fprintf(w, "WebDAV upload (PUT of %d MiB over TLS 1.3, one connection each, into the store) per MiB, million instructions: "+
			"%.1f with the SHA-1 computed as the bytes stream, %.1f in the build without digests (bench/nohash.go): **%s** (target: at most 1.15×).\n\n",
			armUploadMiB, a.UploadHashed, a.UploadPlain, ratio(a.UploadHashed, a.UploadPlain))
	}
	for _, p := range a.Profiles {
		p.markdown(w)
	}
	if p := a.Photos; p.Plain > 0 {
		djpeg := "djpeg not counted (no armhf sysroot)"
		if p.Djpeg > 0 {
			djpeg = fmt.Sprintf("Debian's armhf djpeg (libjpeg-turbo, with its NEON code) decodes the same photo at 1/8 in %.1f and at 1/2 in %.1f (each run less a run on an 8×8 picture): **%s** and **%s** for bonesync's whole previews without the thumbnail",
				p.Djpeg, p.DjpegHalf, ratio(p.Plain, p.Djpeg), ratio(p.Large, p.DjpegHalf))
		}
		fmt.Fprintf(w, "Previews (`/index.php/core/preview.png`, as in the Photos section) of the %d×%d JPEG, million instructions per preview, "+
			"less the %.1f of a connection that gets the CA file: the grid's (256 px) **%.1f** from its EXIF thumbnail, **%.1f** decoding it at 1/8 (est. %s previews/s on one 1 GHz core); "+
			"the iOS app's 1024-pixel one **%.1f**, decoding it at 1/2 (est. %s s of the core). %s.\n\n",
			photoW, photoH, p.Conn, p.Thumb, p.Plain, estimate(p.Plain), p.Large, coreSeconds(p.Large), djpeg)
	}
	writeNotes(w, a.Notes)
}

func (p armProfile) markdown(w io.Writer) {
	fmt.Fprintf(w, "Where the instructions go, %s: %.2f million in all (the armcost profiling plugin, a run with the work less one without; bonesync's ARM build):\n\n", p.What, p.Total/1e6)
	fmt.Fprintln(w, "| function | million instructions | share |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, f := range p.Top {
		fmt.Fprintf(w, "| `%s` | %.3f | %.1f%% |\n", f.Name, f.Insns/1e6, 100*f.Share)
	}
	fmt.Fprintln(w)
	if p.GC != 0 {
		fmt.Fprintf(w, "The collector's share (marking, sweeping, stack scans: bench's collectorFuncs): %.3f million, %.1f%%.\n\n", p.GC/1e6, 100*p.GC/p.Total)
	}
}

// rate is the MB/s of one 1 GHz core at 1.5 and at 1 cycle per
// instruction, from millions of instructions per MiB.
func rate(minsnPerMiB float64) string {
	if minsnPerMiB <= 0 {
		return "–"
	}
	mb := 1.048576 * 1000
	return fmt.Sprintf("%.0f-%.0f", mb/(1.5*minsnPerMiB), mb/minsnPerMiB)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// coreSeconds is what minsn million instructions take the 1 GHz core at
// 1-1.5 cycles an instruction.
func coreSeconds(minsn float64) string {
	return fmt.Sprintf("%.1f-%.1f", minsn/1000, 1.5*minsn/1000)
}

// estimate is the handshake rate of one 1 GHz core at 1.5 and at 1 cycle per
// instruction, from millions of instructions per handshake.
func estimate(minsn float64) string {
	if minsn <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f-%.0f", 1000/(1.5*minsn), 1000/minsn)
}
