// Package kmod is the kernel's module metadata (modules.dep, modules.alias,
// modules.builtin and modules.builtin.modinfo, as depmod writes them) and
// the one implementation of its rules: module names, load order, and alias
// matching the way kmod and udev do it. The image builder uses it to choose
// and check the modules it puts in the initramfs; PID 1 uses it to load the
// drivers for the devices present (Loader).
package kmod

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Modules is a kernel's module metadata read from lib/modules/VERSION (after
// depmod). Module names are kept the way the kernel spells them, with '_'
// where file names may have '-' (sdhci-omap.ko is module sdhci_omap); every
// method accepts either spelling.
type Modules struct {
	dir     string
	path    map[string]string   // module -> .ko path relative to dir
	deps    map[string][]string // module -> modules it needs, as modules.dep lists them
	builtin map[string]bool     // modules.builtin
	aliases []alias             // modules.alias, in file order
	// builtinAliases are the alias= records of modules.builtin.modinfo.
	builtinAliases []alias
}

type alias struct {
	pattern string // an fnmatch pattern, e.g. of:N*T*Cti,omap4-rngC*
	module  string
}

// Canonical turns a file name or module name into the kernel's module name:
// kernel/drivers/mmc/host/sdhci-omap.ko -> sdhci_omap.
func Canonical(s string) string {
	s = path.Base(s)
	for _, ext := range []string{".ko.xz", ".ko.zst", ".ko.gz", ".ko"} {
		if strings.HasSuffix(s, ext) {
			s = strings.TrimSuffix(s, ext)
			break
		}
	}
	return strings.ReplaceAll(s, "-", "_")
}

// ReadModules reads the module metadata in dir (.../lib/modules/VERSION).
// modules.dep and modules.alias come from depmod: run `depmod -b ROOT
// VERSION` on an extracted kernel package first.
func ReadModules(dir string) (*Modules, error) {
	m := &Modules{
		dir:     dir,
		path:    map[string]string{},
		deps:    map[string][]string{},
		builtin: map[string]bool{},
	}
	if err := eachLine(filepath.Join(dir, "modules.dep"), func(line string) error {
		ko, rest, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("no ':' in %q", line)
		}
		name := Canonical(ko)
		m.path[name] = ko
		var deps []string
		for _, d := range strings.Fields(rest) {
			deps = append(deps, Canonical(d))
		}
		m.deps[name] = deps
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%w (run depmod first)", err)
	}
	// modules.builtin is optional: an initramfs carries only what it loads.
	if err := eachLine(filepath.Join(dir, "modules.builtin"), func(line string) error {
		m.builtin[Canonical(line)] = true
		return nil
	}); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := eachLine(filepath.Join(dir, "modules.alias"), func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "alias" {
			return fmt.Errorf("bad alias line %q", line)
		}
		m.aliases = append(m.aliases, alias{pattern: f[1], module: Canonical(f[2])})
		return nil
	}); err != nil {
		return nil, err
	}
	// modules.builtin.modinfo is optional (kernels before 5.2 lack it).
	info, err := os.ReadFile(filepath.Join(dir, "modules.builtin.modinfo"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for rec := range bytes.SplitSeq(info, []byte{0}) {
		mod, kv, ok := strings.Cut(string(rec), ".")
		if !ok {
			continue
		}
		if a, ok := strings.CutPrefix(kv, "alias="); ok {
			m.builtinAliases = append(m.builtinAliases, alias{pattern: a, module: Canonical(mod)})
		}
	}
	return m, nil
}

// eachLine calls f with each line of file that is neither blank nor a
// comment.
func eachLine(file string, f func(string) error) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if err := f(line); err != nil {
			return fmt.Errorf("%s:%d: %w", file, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// Has reports whether a loadable module of that name exists.
func (m *Modules) Has(name string) bool {
	_, ok := m.path[Canonical(name)]
	return ok
}

// Builtin reports whether the module is listed in modules.builtin.
func (m *Modules) Builtin(name string) bool { return m.builtin[Canonical(name)] }

// Path returns the module's .ko file relative to the modules directory
// (kernel/drivers/...), or "" if there is no such loadable module.
func (m *Modules) Path(name string) string { return m.path[Canonical(name)] }

// Deps returns the modules that name needs directly, as modules.dep lists
// them.
func (m *Modules) Deps(name string) []string { return m.deps[Canonical(name)] }

// Closure returns names plus everything they depend on (modules.dep), each
// once, dependencies before dependents (a valid load order). The order is
// deterministic: names in the order given, each preceded by those of its
// dependencies not already listed, in the order modprobe would load them.
// Unknown names are an error naming them; builtin names are dropped.
func (m *Modules) Closure(names []string) ([]string, error) {
	var (
		out     []string
		unknown []string
		state   = map[string]int{} // 1 visiting, 2 done
		visit   func(string, []string) error
	)
	visit = func(n string, chain []string) error {
		switch state[n] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("kernel modules depend on each other in a cycle: %s", strings.Join(append(chain, n), " -> "))
		}
		state[n] = 1
		chain = append(slices.Clip(chain), n)
		// modprobe loads the dependencies modules.dep lists from the last
		// to the first.
		deps := m.deps[n]
		for i := len(deps) - 1; i >= 0; i-- {
			if err := visit(deps[i], chain); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, n)
		return nil
	}
	for _, raw := range names {
		n := Canonical(raw)
		if _, ok := m.path[n]; !ok {
			if !m.builtin[n] && !slices.Contains(unknown, raw) {
				unknown = append(unknown, raw)
			}
			continue
		}
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("kernel has no module %s (neither loadable nor built in)", strings.Join(unknown, ", "))
	}
	return out, nil
}

// Match returns the loadable modules whose aliases match a device's
// modalias (as the kernel writes it under /sys/devices), each once, in the
// order of modules.alias.
func (m *Modules) Match(modalias string) []string {
	subj := subject(modalias)
	var out []string
	for _, a := range m.aliases {
		if !slices.Contains(out, a.module) && MatchSubject(a.pattern, subj) {
			out = append(out, a.module)
		}
	}
	return out
}

// ModulesFor returns the loadable modules whose aliases match a device-tree
// node with these compatible strings, and the builtin drivers that match it
// through alias= records of modules.builtin.modinfo. The node's name and
// device_type are unknown, so they match whatever an alias asks of them (any
// string without uppercase letters, as node names and types are), as for a
// node with the right name and type. Both lists are sorted.
func (m *Modules) ModulesFor(compatible []string) (mods []string, builtin []string) {
	return m.ModulesForNode(nil, compatible)
}

// ModulesForNode is ModulesFor for a node whose name is known (name != nil).
func (m *Modules) ModulesForNode(name *string, compatible []string) (mods []string, builtin []string) {
	subj := OFModalias(name, nil, compatible)
	match := func(as []alias) []string {
		var out []string
		for _, a := range as {
			if !slices.Contains(out, a.module) && MatchSubject(a.pattern, subj) {
				out = append(out, a.module)
			}
		}
		sort.Strings(out)
		return out
	}
	return match(m.aliases), match(m.builtinAliases)
}

// AnyString in a glob subject stands for any string of the characters
// anyChar allows.
const AnyString = -1

// OFModalias is the modalias the kernel gives a device-tree node,
// "of:N<name>T<type>C<compat1>C<compat2>...", as a glob subject in which a
// nil name or type is AnyString. (Were a name or type allowed to be truly
// anything, "CfooC" in it would fake compatible strings and every alias
// ending in "C*" would match.) As the kernel does, the name is the node
// name without its unit address and spaces in compatible strings become '_'.
func OFModalias(name, typ *string, compatible []string) []int {
	var s []int
	lit := func(str string) {
		for i := 0; i < len(str); i++ {
			s = append(s, int(str[i]))
		}
	}
	part := func(p *string) {
		if p == nil {
			s = append(s, AnyString)
		} else {
			lit(*p)
		}
	}
	lit("of:N")
	if name != nil {
		n, _, _ := strings.Cut(*name, "@")
		name = &n
	}
	part(name)
	lit("T")
	part(typ)
	for _, c := range compatible {
		lit("C")
		lit(strings.ReplaceAll(c, " ", "_"))
	}
	return s
}

// Glob reports whether s matches the fnmatch(3) pattern (flags 0, as
// kmod uses it for modules.alias): '*' matches any run of characters,
// including '/', '?' any one character, '[...]' a class ('!' or '^' negates,
// ranges a-z, a leading ']' is literal; a '[' without its ']' is literal),
// and '\' quotes the next character.
func Glob(pattern, s string) bool { return MatchSubject(pattern, subject(s)) }

// subject is s as a glob subject: its characters, none of them AnyString.
func subject(s string) []int {
	subj := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		subj[i] = int(s[i])
	}
	return subj
}

// globElem is one element of a compiled glob pattern.
type globElem struct {
	kind  byte // 'c' one char, '?' any char, '[' class, '*' any run
	c     byte
	neg   bool
	class []byte // pairs lo, hi
}

func (e globElem) matches(c int) bool {
	switch e.kind {
	case '?':
		return true
	case 'c':
		return c == int(e.c)
	case '[':
		in := false
		for i := 0; i+1 < len(e.class); i += 2 {
			if c >= int(e.class[i]) && c <= int(e.class[i+1]) {
				in = true
				break
			}
		}
		return in != e.neg
	}
	return false
}

// anyChar reports whether c may be part of what an AnyString stands for: a
// node name or device_type, which are lowercase by convention, so never the
// uppercase letters that separate the parts of a modalias (N, T, C).
func anyChar(c int) bool { return c < 'A' || c > 'Z' }

// takesAnyChar reports whether a one-character element matches some
// character an AnyString may stand for.
func (e globElem) takesAnyChar() bool {
	switch e.kind {
	case '?':
		return true
	case 'c':
		return anyChar(int(e.c))
	}
	for c := 0; c < 256; c++ {
		if anyChar(c) && e.matches(c) {
			return true
		}
	}
	return false
}

func compileGlob(p string) []globElem {
	var out []globElem
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if len(out) == 0 || out[len(out)-1].kind != '*' {
				out = append(out, globElem{kind: '*'})
			}
		case '?':
			out = append(out, globElem{kind: '?'})
		case '\\':
			if i+1 < len(p) {
				i++
			}
			out = append(out, globElem{kind: 'c', c: p[i]})
		case '[':
			if e, n, ok := compileClass(p[i:]); ok {
				out = append(out, e)
				i += n - 1
			} else {
				out = append(out, globElem{kind: 'c', c: '['})
			}
		default:
			out = append(out, globElem{kind: 'c', c: c})
		}
	}
	return out
}

// compileClass compiles the class p starts with, returning it and its
// length, or ok false if it has no closing ']'.
func compileClass(p string) (e globElem, n int, ok bool) {
	e.kind = '['
	i := 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		e.neg = true
		i++
	}
	first := true
	for i < len(p) {
		c := p[i]
		if c == ']' && !first {
			return e, i + 1, true
		}
		first = false
		if c == '\\' && i+1 < len(p) {
			i++
			c = p[i]
		}
		lo, hi := c, c
		if i+2 < len(p) && p[i+1] == '-' && p[i+2] != ']' {
			hi = p[i+2]
			if hi == '\\' && i+3 < len(p) {
				hi = p[i+3]
				i++
			}
			i += 2
		}
		if lo <= hi {
			e.class = append(e.class, lo, hi)
		}
		i++
	}
	return e, 0, false
}

// MatchSubject matches the pattern against a subject of characters in
// which AnyString stands for any string without uppercase letters (see
// anyChar): it reports whether some string the subject stands for matches. Both are explored together, an element or a
// character at a time; every step advances one of them, so the search is a
// walk over a small grid, remembered cell by cell.
func MatchSubject(pattern string, subj []int) bool {
	// Fast reject on the literal prefix, which holds for nearly every
	// alias a subject is tried against.
	for i := 0; i < len(pattern) && i < len(subj); i++ {
		c := pattern[i]
		if c == '*' || c == '?' || c == '[' || c == '\\' || subj[i] == AnyString {
			break
		}
		if int(c) != subj[i] {
			return false
		}
	}
	pe := compileGlob(pattern)
	w := len(subj) + 1
	memo := make([]int8, (len(pe)+1)*w) // 0 unknown, 1 no, 2 yes
	var match func(i, j int) bool
	match = func(i, j int) bool {
		k := i*w + j
		if memo[k] != 0 {
			return memo[k] == 2
		}
		r := false
		switch {
		case i == len(pe) && j == len(subj):
			r = true
		case j < len(subj) && subj[j] == AnyString:
			// The any-string ends here, or yields characters that the
			// next element takes.
			r = match(i, j+1)
			if !r && i < len(pe) {
				r = (pe[i].kind == '*' || pe[i].takesAnyChar()) && match(i+1, j)
			}
		case i < len(pe) && pe[i].kind == '*':
			// The star stops here, or takes one more character.
			r = match(i+1, j) || (j < len(subj) && match(i, j+1))
		case i < len(pe) && j < len(subj):
			r = pe[i].matches(subj[j]) && match(i+1, j+1)
		}
		if r {
			memo[k] = 2
		} else {
			memo[k] = 1
		}
		return r
	}
	return match(0, 0)
}
