package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var generated = func() (l []string) {
	for _, f := range asmFiles {
		l = append(l, f.path)
	}
	return l
}()

// The committed assembly is what the generator writes now.
func TestGeneratedUpToDate(t *testing.T) {
	dir := t.TempDir()
	for _, f := range generated {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
	}
	out, err := exec.Command("go", "run", ".", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./armcrypto/gen: %v %s", err, out)
	}
	for _, f := range generated {
		want, _ := os.ReadFile(filepath.Join(dir, f))
		got, err := os.ReadFile(filepath.Join("..", "_overlay", f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("armcrypto/_overlay/%s is not what armcrypto/gen writes (%v): run go run ./armcrypto/gen", f, err)
		}
	}
}

var word = regexp.MustCompile(`WORD\t\$0x([0-9a-f]{8})\t// (.*)`)

// Every instruction written as a WORD (NEON, UMAAL) is the one its comment names:
// LLVM's disassembler (Debian's llvm) reads each encoding back.
func TestNEONEncodings(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not installed (Debian's llvm)")
	}
	var b []byte
	for _, f := range generated {
		g, err := os.ReadFile(filepath.Join("..", "_overlay", f))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, g...)
	}
	seen := map[string]string{}
	var words, names []string
	for _, m := range word.FindAllStringSubmatch(string(b), -1) {
		if _, ok := seen[m[2]]; ok {
			continue
		}
		seen[m[2]] = m[1]
		var w uint32
		fmt.Sscanf(m[1], "%x", &w)
		words = append(words, fmt.Sprintf("0x%02x 0x%02x 0x%02x 0x%02x", w&255, w>>8&255, w>>16&255, w>>24))
		names = append(names, m[2])
	}
	if len(words) < 20 {
		t.Fatalf("only %d NEON instructions found", len(words))
	}
	cmd := exec.Command(mc, "-triple=armv7a", "-mattr=+neon", "-disassemble")
	cmd.Stdin = strings.NewReader(strings.Join(words, "\n"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc: %v %s", err, out)
	}
	var dis []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, ".") {
			dis = append(dis, l)
		}
	}
	if len(dis) != len(names) {
		t.Fatalf("llvm-mc read %d instructions of %d:\n%s", len(dis), len(names), out)
	}
	for i, name := range names {
		if want, got := canonical(name), canonical(dis[i]); want != got {
			t.Errorf("%s is encoded as %s (%s)", name, dis[i], seen[name])
		}
	}
}

// canonical spells an instruction as LLVM prints it: lower case, register
// lists written out, R14 as lr, VMOV as VORR, VEXT.8 by bytes as LLVM's
// word or doubleword form.
func canonical(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = regexp.MustCompile(`\{d(\d+)-d(\d+)\}`).ReplaceAllStringFunc(s, func(r string) string {
		var a, b int
		fmt.Sscanf(r, "{d%d-d%d}", &a, &b)
		var l []string
		for i := a; i <= b; i++ {
			l = append(l, fmt.Sprintf("d%d", i))
		}
		return "{" + strings.Join(l, ", ") + "}"
	})
	if m := regexp.MustCompile(`^vmov (q\d+), (q\d+)$`).FindStringSubmatch(s); m != nil {
		s = fmt.Sprintf("vorr %s, %s, %s", m[1], m[2], m[2])
	}
	if m := regexp.MustCompile(`^vext\.8 (q\d+, q\d+, q\d+), #(\d+)$`).FindStringSubmatch(s); m != nil {
		var n int
		fmt.Sscan(m[2], &n)
		if n%8 == 0 {
			s = fmt.Sprintf("vext.64 %s, #%d", m[1], n/8)
		} else if n%4 == 0 {
			s = fmt.Sprintf("vext.32 %s, #%d", m[1], n/4)
		}
	}
	return regexp.MustCompile(`\br14\b`).ReplaceAllString(s, "lr")
}
