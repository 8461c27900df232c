package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Where the instructions go: the per-function profile of a full handshake,
// of a ChaCha20-Poly1305 download and of an SFTP put, from the armcost profiling plugin
// (insnprof.c, which counts every translated block and writes the counts
// at exit). Each is the difference of two runs of bonesync's ARM build:
// one that serves the work and one that serves everything but the work
// (the same start, warm-up and exit), divided by the work's size.

// fnCost is one function's instructions per unit of work.
type fnCost struct {
	Name  string  `json:"name"`
	Insns float64 `json:"insns"` // per handshake, or per MiB
	Share float64 `json:"share"` // of the whole difference
}

// armProfile is the top functions of one kind of work.
type armProfile struct {
	What  string   `json:"what"`
	Total float64  `json:"total"` // instructions per unit
	Top   []fnCost `json:"top"`
	GC    float64  `json:"gc"` // the collector's instructions per unit (collectorShare; 0: not taken)
}

// profileTop is how many functions the report lists.
const profileTop = 10

// armProfiles profiles a full P-256 handshake (o.armN of them), a
// ChaCha20-Poly1305 download and an SFTP put (armBulkMiB MiB each) of
// bin.
func armProfiles(ctx context.Context, o *options, bin string) ([]armProfile, error) {
	plugin, err := buildPlugin(ctx, o, "insnprof")
	if err != nil {
		return nil, err
	}
	syms, err := readSyms(ctx, bin)
	if err != nil {
		return nil, err
	}
	box, err := armBox(ctx, o, "ecdsa-p256")
	if err != nil {
		return nil, err
	}
	_, _, ca, err := boxFiles(box)
	if err != nil {
		return nil, err
	}
	handshakes := func(n int) func(a *armServer) error {
		return func(a *armServer) error {
			_, err := armLoad(a.tlsAddr, ca, n, true, false, func(i int) error { return a.say(fmt.Sprint("mark ", i)) })
			return err
		}
	}
	download := func(name string) func(a *armServer) error {
		return func(a *armServer) error {
			base := "https://" + a.tlsAddr + "/dav/"
			if err := putBulkFiles(ctx, o, base); err != nil {
				return err
			}
			_, err := curlGet(ctx, base+name, armSuites[0], true, "--http2")
			return err
		}
	}
	key, err := armClient(o)
	if err != nil {
		return nil, err
	}
	put := func(name string, b []byte) func(a *armServer) error {
		return func(a *armServer) error {
			c, err := net.Dial("tcp", a.sftpAddr)
			if err != nil {
				return err
			}
			return sftpSession(c, "bench", key, sftpPut(name, b))
		}
	}
	var res []armProfile
	for _, k := range []struct {
		what       string
		work, base func(a *armServer) error
		units      float64
	}{
		{"TLS 1.3 full handshake, ECDSA P-256, and a GET", handshakes(o.armN), handshakes(0), float64(o.armN)},
		{"HTTPS download over HTTP/2, ChaCha20-Poly1305, per MiB", download("big.bin"), download("tiny.bin"), armBulkMiB},
		{"SFTP put with the store's SHA-1, chacha20-poly1305@openssh.com, per MiB",
			put("big.bin", bulkBody()), put("tiny.bin", []byte("tiny\n")), armBulkMiB},
	} {
		o.logf("arm: profile of %s", k.what)
		var counts [2]map[string]float64
		for i, work := range []func(a *armServer) error{k.work, k.base} {
			if counts[i], err = profileRun(ctx, o, plugin, bin, syms, box, work); err != nil {
				return nil, fmt.Errorf("profile of %s: %w", k.what, err)
			}
		}
		res = append(res, topFunctions(k.what, counts[0], counts[1], k.units))
	}
	return res, nil
}

// profileRun serves work under the profiling plugin and returns the
// instructions by function.
func profileRun(ctx context.Context, o *options, plugin, bin string, syms []sym, box string, work func(a *armServer) error) (map[string]float64, error) {
	dir, err := os.MkdirTemp(o.work, "arm-prof-")
	if err != nil {
		return nil, err
	}
	a, err := startArmServerEnv(ctx, o, plugin, bin, box, []string{"PROF_OUT=" + filepath.Join(dir, "prof")})
	if err != nil {
		return nil, err
	}
	defer a.close()
	if err := work(a); err != nil {
		return nil, err
	}
	if _, err := a.marks(); err != nil {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(dir, "prof.*"))
	if len(files) != 1 {
		return nil, fmt.Errorf("the profiling plugin wrote %d files in %s, want one", len(files), dir)
	}
	return readProfile(files[0], syms)
}

// sym is one function of the binary: its start, size and name.
type sym struct {
	addr, size uint64
	name       string
}

// readSyms lists the binary's symbols, by address.
func readSyms(ctx context.Context, bin string) ([]sym, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "nm", "-size", "-sort", "address", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool nm %s: %w", bin, err)
	}
	var syms []sym
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l) // address, size, type, name (which may have spaces)
		if len(f) < 4 {
			continue
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			syms = append(syms, sym{addr, size, strings.Join(f[3:], " ")})
		}
	}
	if len(syms) == 0 {
		return nil, fmt.Errorf("go tool nm found no symbols in %s", bin)
	}
	slices.SortFunc(syms, func(a, b sym) int { return cmp.Compare(a.addr, b.addr) })
	return syms, nil
}

// readProfile sums the plugin's blocks (address, instructions,
// executions) by the function that holds them.
func readProfile(file string, syms []sym) (map[string]float64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	by := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var pc, n, ex uint64
		if _, err := fmt.Sscanf(sc.Text(), "%x %d %d", &pc, &n, &ex); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", file, sc.Text(), err)
		}
		name := "(outside the binary)"
		if i := sort.Search(len(syms), func(i int) bool { return syms[i].addr > pc }) - 1; i >= 0 && pc < syms[i].addr+max(syms[i].size, 1) {
			name = syms[i].name
		}
		by[name] += float64(n * ex)
	}
	return by, sc.Err()
}

// topFunctions is (work - base) / units by function, the largest first.
func topFunctions(what string, work, base map[string]float64, units float64) armProfile {
	p := armProfile{What: what}
	var all []fnCost
	for name, n := range work {
		d := (n - base[name]) / units
		p.Total += d
		all = append(all, fnCost{Name: name, Insns: d})
	}
	for name, n := range base {
		if _, ok := work[name]; !ok {
			p.Total -= n / units
		}
	}
	slices.SortFunc(all, func(a, b fnCost) int { return cmp.Compare(b.Insns, a.Insns) })
	for _, c := range all[:min(profileTop, len(all))] {
		c.Share = c.Insns / p.Total
		p.Top = append(p.Top, c)
	}
	return p
}
