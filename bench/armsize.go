package main

import (
	"bytes"
	"cmp"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// armSize is the board's binary's size and what takes it: its sections,
// and the modules its code and data come from, read from the symbol table
// of the same build with its symbols kept (the sizes `go tool nm -size`
// prints, summed per module).
type armSize struct {
	Bytes  int64 // the board's binary as make build-arm writes it
	Code   int64 // .text
	Tables int64 // the function tables: .gopclntab and the funcdata (go:func.*)
	Data   int64 // the rest of what is loaded: read-only data, data, type links
	// Modules are the modules' shares, largest first, and two rows of
	// what no module owns: Go's unnamed data, and what no symbol covers.
	Modules []moduleSize
	// EngineOnly are the third-party packages only the copy engine
	// (appliance/copies/engine) brings, of Packages in all.
	EngineOnly, Packages int
}

// moduleSize is a module's part of the binary.
type moduleSize struct {
	Module     string
	Code, Data int64
	// Est is Code and Data with the module's share of the function
	// tables, which grow with its code: split by code size.
	Est int64
	// Engine says the module comes only through the copy engine.
	Engine bool
}

// unnamed is the row of symbols no module owns (strings, types without a
// package, the runtime's own tables); uncovered is the row of the bytes
// no symbol covers: string literals and most type data (the linker
// names none of them), headers, alignment.
const (
	unnamed   = "(Go's unnamed data)"
	uncovered = "(no symbol: strings, type data, headers)"
)

// armSizeBlock measures the board's binary (o.bonesyncARM) against its
// build with symbols kept.
func armSizeBlock(ctx context.Context, o *options) (*armSize, error) {
	if err := ensureARMBinary(ctx, o); err != nil {
		return nil, err
	}
	syms, err := armSymsBinary(ctx, o)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(o.bonesyncARM)
	if err != nil {
		return nil, err
	}
	s, err := readSizes(syms)
	if err != nil {
		return nil, err
	}
	s.Bytes = fi.Size()
	engine, all, err := engineModules(ctx)
	if err != nil {
		return nil, err
	}
	s.EngineOnly, s.Packages = engine.packages, all
	for i, m := range s.Modules {
		s.Modules[i].Engine = engine.modules[m.Module]
	}
	s.fill()
	return s, nil
}

// armSymsBinary is make build-arm again with its symbols kept (LDFLAGS
// without -s -w, the same -X values from the same commit), into a folder
// of the run's, made once a run.
func armSymsBinary(ctx context.Context, o *options) (string, error) {
	out := filepath.Join(o.work, "syms")
	bin := filepath.Join(out, "bonesync-armv7")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	make := exec.CommandContext(ctx, "make", "-s", "build-arm", "OUT="+out,
		"LDFLAGS=-X github.com/bonesync/bonesync/appliance/clock.BuildUnix=$(BUILD_UNIX) -X main.Version=$(VERSION)")
	if b, err := make.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make build-arm with symbols: %v %s", err, b)
	}
	return bin, nil
}

// readSizes sums the symbols of bin (built with them) by section and by
// module.
func readSizes(bin string) (*armSize, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	mods := []string{info.Main.Path}
	for _, d := range info.Deps {
		mods = append(mods, d.Path)
	}
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &armSize{}
	for _, sec := range f.Sections {
		switch {
		case sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_ALLOC == 0:
		case sec.Name == ".text":
			s.Code += int64(sec.Size)
		case sec.Name == ".gopclntab":
			s.Tables += int64(sec.Size)
		default:
			s.Data += int64(sec.Size)
		}
	}
	symbols, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	by := map[string]*moduleSize{}
	for _, sym := range symbols {
		if int(sym.Section) >= len(f.Sections) || sym.Section == elf.SHN_UNDEF {
			continue
		}
		sec := f.Sections[sym.Section]
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_ALLOC == 0 {
			continue // .bss and .noptrbss take no room in the file
		}
		size := int64(sym.Size)
		if strings.HasPrefix(sym.Name, "go:func.") {
			s.Tables += size // the funcdata: counted with .gopclntab
			s.Data -= size
			continue
		}
		m := moduleOf(packageOf(sym.Name), mods)
		if by[m] == nil {
			by[m] = &moduleSize{Module: m}
		}
		if sec.Name == ".text" {
			by[m].Code += size
		} else {
			by[m].Data += size
		}
	}
	for _, m := range by {
		s.Modules = append(s.Modules, *m)
	}
	return s, nil
}

// fill shares the function tables out by code size, adds the row of what
// no symbol covers, and sorts the modules, largest first.
func (s *armSize) fill() {
	var code, named int64
	for _, m := range s.Modules {
		code += m.Code
	}
	for i, m := range s.Modules {
		s.Modules[i].Est = m.Code + m.Data
		if code > 0 {
			s.Modules[i].Est += s.Tables * m.Code / code
		}
		named += s.Modules[i].Est
	}
	if rest := s.Bytes - named; rest > 0 {
		s.Modules = append(s.Modules, moduleSize{Module: uncovered, Est: rest})
	}
	slices.SortFunc(s.Modules, func(a, b moduleSize) int { return cmp.Compare(b.Est, a.Est) })
}

// packageOf is the import path of the package a symbol belongs to:
// "github.com/a/b.(*T).M", "type:*github.com/a/b.T" and
// "go:itab.*github.com/a/b.T,io.Reader" are github.com/a/b's; "" for
// what belongs to none.
func packageOf(name string) string {
	if strings.HasPrefix(name, "go:") && !strings.HasPrefix(name, "go:itab.") {
		return ""
	}
	for _, p := range []string{"type:", "go:itab.", ".eq.", "..eq."} {
		name = strings.TrimPrefix(name, p)
	}
	name = strings.TrimLeft(name, "*[]")
	if i := strings.IndexAny(name, "[,"); i >= 0 {
		name = name[:i] // a generic's shape, an itab's interface
	}
	slash := strings.LastIndex(name, "/")
	dot := strings.Index(name[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	// A dot in the path's last element is escaped: gopkg.in/yaml%2ev3.
	return strings.ReplaceAll(name[:slash+1+dot], "%2e", ".")
}

// moduleOf is the module of the package pkg among mods (the binary's
// build info): "Go" for the standard library, unnamed for no package.
func moduleOf(pkg string, mods []string) string {
	best := ""
	for _, m := range mods {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	switch first, _, _ := strings.Cut(pkg, "/"); {
	case best != "":
		return best
	case pkg == "" || strings.Contains(first, "."):
		return unnamed
	default:
		return "Go" // the standard library, its vendor/ too
	}
}

// engineSet is what only the copy engine brings into the board's binary.
type engineSet struct {
	modules  map[string]bool
	packages int // third-party packages
}

// engineModules lists, for the board, the packages the copy engine
// (appliance/copies/engine) reaches that nothing else of the box does,
// and their modules; all is the binary's third-party packages.
func engineModules(ctx context.Context) (engineSet, int, error) {
	const root = "github.com/bonesync/bonesync/appliance"
	list := func(args ...string) (map[string]string, error) {
		cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}"}, args...)...)
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm", "CGO_ENABLED=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list: %v %s", err, stderr.String())
		}
		pkgs := map[string]string{}
		for l := range strings.Lines(string(out)) {
			p, m, _ := strings.Cut(strings.TrimSpace(l), " ")
			pkgs[p] = m
		}
		return pkgs, nil
	}
	ours, err := list("./appliance/...")
	if err != nil {
		return engineSet{}, 0, err
	}
	// Every package of the box but the engine and those that import it;
	// the main package and server's own imports besides the engine.
	fenced := []string{root, root + "/server", root + "/copies/engine", root + "/copies/s3"}
	var rest []string
	for p := range ours {
		if !slices.Contains(fenced, p) {
			rest = append(rest, p)
		}
	}
	without, err := list(append([]string{"-deps"}, rest...)...)
	if err != nil {
		return engineSet{}, 0, err
	}
	all, err := list("-deps", root)
	if err != nil {
		return engineSet{}, 0, err
	}
	e := engineSet{modules: map[string]bool{}}
	shared := map[string]bool{}
	third := 0
	for p, m := range all {
		if m == "" || strings.HasPrefix(p, root) {
			continue // the standard library, our own
		}
		third++
		if _, ok := without[p]; ok {
			shared[m] = true
		} else {
			e.packages++
			e.modules[m] = true
		}
	}
	for m := range shared {
		delete(e.modules, m) // a module the rest of the box uses too
	}
	return e, third, nil
}

// markdown is the size section of the report: the binary, its parts, and
// the top modules.
func (s *armSize) markdown(w io.Writer) {
	mb := func(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }
	fmt.Fprintln(w, "## The board's binary: its size and what takes it")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "`make build-arm` (stripped): **%d bytes (%s)**. Of what is loaded: code %s, the function tables %s "+
		"(`.gopclntab` and the funcdata, which grow with the code), data %s. By module, from the symbol table of the same build "+
		"with its symbols kept; a module's function tables are its share by code size. %d of the binary's %d third-party packages "+
		"come only through the copy engine (`appliance/copies/engine`): their modules are marked.\n\n",
		s.Bytes, mb(s.Bytes), mb(s.Code), mb(s.Tables), mb(s.Data), s.EngineOnly, s.Packages)
	fmt.Fprintln(w, "| module | code | data | with its function tables | share | only for copies |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	var engine, restEst int64
	rest := 0
	for i, m := range s.Modules {
		if m.Engine {
			engine += m.Est
		}
		if i >= 20 {
			restEst += m.Est
			rest++
			continue
		}
		mark := ""
		if m.Engine {
			mark = "yes"
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.1f%% | %s |\n", m.Module, m.Code, m.Data, m.Est, 100*float64(m.Est)/float64(s.Bytes), mark)
	}
	if rest > 0 {
		fmt.Fprintf(w, "| %d more modules | | | %d | %.1f%% | |\n", rest, restEst, 100*float64(restEst)/float64(s.Bytes))
	}
	fmt.Fprintf(w, "\nThe modules only the copy engine brings: %s together (estimated, as above); the standard library's "+
		"packages only it uses are in Go's row.\n\n", mb(engine))
}
