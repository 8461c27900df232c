package main

// The driver check: before an image is written, prove from the kernel
// package's own metadata (modules.dep, modules.alias, modules.builtin,
// modules.builtin.modinfo, all produced by depmod) and the board's device
// tree that every device the board needs will find its driver at boot,
// either built into the kernel or as a module in the initramfs.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bonesync/bonesync/board"
	"github.com/u-root/u-root/pkg/dt"
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
	aliases []modAlias          // modules.alias, in file order
	// builtinAliases are the alias= records of modules.builtin.modinfo.
	builtinAliases []modAlias
}

type modAlias struct {
	pattern string // an fnmatch pattern, e.g. of:N*T*Cti,omap4-rngC*
	module  string
}

// modName turns a file name or module name into the kernel's module name:
// kernel/drivers/mmc/host/sdhci-omap.ko -> sdhci_omap.
func modName(s string) string {
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
		name := modName(ko)
		m.path[name] = ko
		var deps []string
		for _, d := range strings.Fields(rest) {
			deps = append(deps, modName(d))
		}
		m.deps[name] = deps
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%w (run depmod first)", err)
	}
	if err := eachLine(filepath.Join(dir, "modules.builtin"), func(line string) error {
		m.builtin[modName(line)] = true
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachLine(filepath.Join(dir, "modules.alias"), func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "alias" {
			return fmt.Errorf("bad alias line %q", line)
		}
		m.aliases = append(m.aliases, modAlias{pattern: f[1], module: modName(f[2])})
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
			m.builtinAliases = append(m.builtinAliases, modAlias{pattern: a, module: modName(mod)})
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
	_, ok := m.path[modName(name)]
	return ok
}

// Builtin reports whether the module is listed in modules.builtin.
func (m *Modules) Builtin(name string) bool { return m.builtin[modName(name)] }

// Path returns the module's .ko file relative to the modules directory
// (kernel/drivers/...), or "" if there is no such loadable module.
func (m *Modules) Path(name string) string { return m.path[modName(name)] }

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
		n := modName(raw)
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

// ModulesFor returns the loadable modules whose aliases match a device-tree
// node with these compatible strings, and the builtin drivers that match it
// through alias= records of modules.builtin.modinfo. The node's name and
// device_type are unknown, so they match whatever an alias asks of them (any
// string without uppercase letters, as node names and types are), as for a
// node with the right name and type. Both lists are sorted.
func (m *Modules) ModulesFor(compatible []string) (mods []string, builtin []string) {
	return m.modulesForNode(nil, compatible)
}

// modulesForNode is ModulesFor for a node whose name is known (name != nil).
func (m *Modules) modulesForNode(name *string, compatible []string) (mods []string, builtin []string) {
	subj := ofModalias(name, nil, compatible)
	match := func(as []modAlias) []string {
		var out []string
		for _, a := range as {
			if !slices.Contains(out, a.module) && globMatchSubject(a.pattern, subj) {
				out = append(out, a.module)
			}
		}
		sort.Strings(out)
		return out
	}
	return match(m.aliases), match(m.builtinAliases)
}

// anyString in a glob subject stands for any string of the characters
// anyChar allows.
const anyString = -1

// ofModalias is the modalias the kernel gives a device-tree node,
// "of:N<name>T<type>C<compat1>C<compat2>...", as a glob subject in which a
// nil name or type is anyString. (Were a name or type allowed to be truly
// anything, "CfooC" in it would fake compatible strings and every alias
// ending in "C*" would match.) As the kernel does, the name is the node
// name without its unit address and spaces in compatible strings become '_'.
func ofModalias(name, typ *string, compatible []string) []int {
	var s []int
	lit := func(str string) {
		for i := 0; i < len(str); i++ {
			s = append(s, int(str[i]))
		}
	}
	part := func(p *string) {
		if p == nil {
			s = append(s, anyString)
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

// globMatch reports whether s matches the fnmatch(3) pattern (flags 0, as
// kmod uses it for modules.alias): '*' matches any run of characters,
// including '/', '?' any one character, '[...]' a class ('!' or '^' negates,
// ranges a-z, a leading ']' is literal; a '[' without its ']' is literal),
// and '\' quotes the next character.
func globMatch(pattern, s string) bool {
	subj := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		subj[i] = int(s[i])
	}
	return globMatchSubject(pattern, subj)
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

// anyChar reports whether c may be part of what an anyString stands for: a
// node name or device_type, which are lowercase by convention, so never the
// uppercase letters that separate the parts of a modalias (N, T, C).
func anyChar(c int) bool { return c < 'A' || c > 'Z' }

// takesAnyChar reports whether a one-character element matches some
// character an anyString may stand for.
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

// globMatchSubject matches the pattern against a subject of characters in
// which anyString stands for any string without uppercase letters (see
// anyChar): it reports whether some string the subject stands for matches. Both are explored together, an element or a
// character at a time; every step advances one of them, so the search is a
// walk over a small grid, remembered cell by cell.
func globMatchSubject(pattern string, subj []int) bool {
	// Fast reject on the literal prefix, which holds for nearly every
	// alias a subject is tried against.
	for i := 0; i < len(pattern) && i < len(subj); i++ {
		c := pattern[i]
		if c == '*' || c == '?' || c == '[' || c == '\\' || subj[i] == anyString {
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
		case j < len(subj) && subj[j] == anyString:
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

// Node is an enabled device-tree node: status absent, "okay" or "ok".
type Node struct {
	Path       string // "/", "/ocp/interconnect@48000000/segment@0/..."
	Name       string // name with unit address, "mmc@0"; "" for the root
	Compatible []string
}

// EnabledNodes parses a flattened device tree blob and returns every
// enabled node that has a compatible property, in tree order. A node under
// a disabled parent counts as disabled.
func EnabledNodes(dtb []byte) ([]Node, error) {
	fdt, err := dt.ReadFDT(bytes.NewReader(dtb))
	if err != nil {
		return nil, fmt.Errorf("device tree: %w", err)
	}
	if fdt.RootNode == nil {
		return nil, errors.New("device tree: no root node")
	}
	var out []Node
	var walk func(n *dt.Node, p string)
	walk = func(n *dt.Node, p string) {
		if !nodeEnabled(n) {
			return
		}
		if prop, ok := n.LookProperty("compatible"); ok {
			out = append(out, Node{Path: p, Name: n.Name, Compatible: stringList(prop.Value)})
		}
		for _, c := range n.Children {
			walk(c, strings.TrimSuffix(p, "/")+"/"+c.Name)
		}
	}
	walk(fdt.RootNode, "/")
	return out, nil
}

func nodeEnabled(n *dt.Node) bool {
	p, ok := n.LookProperty("status")
	if !ok {
		return true
	}
	s := strings.TrimRight(string(p.Value), "\x00")
	return s == "okay" || s == "ok"
}

// stringList decodes a device-tree <stringlist>: NUL-terminated strings.
func stringList(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// DriverCheck is one line of the driver check.
type DriverCheck struct {
	What    string // the board's name for the device
	Driver  string // the module or builtin driver found (or wanted)
	How     string // one of the How constants: "module in initramfs", ...
	OK      bool
	Problem string // why not OK, a sentence naming the fix where there is one
}

// How a driver was found, or not (DriverCheck.How).
const (
	HowModule        = "module in initramfs"
	HowBuiltin       = "built into the kernel"
	HowBuiltinByName = "built into the kernel (matched by name)"

	HowNotIncluded = "module not in initramfs"
	HowNoModule    = "no such module"
	HowNoNode      = "no enabled node"
	HowNoDTB       = "no device tree"
	HowNoDriver    = "no driver"
)

// CheckDrivers proves that every device the board needs has its driver in
// the initramfs (included: the module names going into it) or built into
// the kernel.
//
// A device with compatible strings needs an enabled node in dtb whose
// compatible list has one of them, and, for every such node, a driver: a
// module of included whose alias matches the node, a builtin driver whose
// alias matches, or the device's Builtin driver in modules.builtin (which
// stands in for builtin drivers that carry no alias, as builtins of kernels
// before 6.9 or so do not); the device's Module, if named, counts as
// matching too. A matching module left out of included is a failure saying
// which to add. A device with only a Module (or Builtin) needs that module
// in included or built in. With a nil dtb (boards whose firmware supplies
// the device tree) devices with compatible strings fail.
func CheckDrivers(b *board.Board, dtb []byte, m *Modules, included []string) []DriverCheck {
	inc := map[string]bool{}
	for _, n := range included {
		inc[modName(n)] = true
	}
	var nodes []Node
	var dtbErr error
	if dtb == nil {
		dtbErr = errors.New("no device tree to find it in")
	} else {
		nodes, dtbErr = EnabledNodes(dtb)
	}
	var out []DriverCheck
	for _, d := range b.Devices {
		var c DriverCheck
		switch {
		case len(d.Compatible) > 0:
			c = checkDTDevice(d, nodes, dtbErr, m, inc)
		case d.Module != "" || d.Builtin != "":
			c = checkNamedDevice(d, m, inc)
		default:
			c = DriverCheck{How: HowNoDriver, Problem: "board names neither compatible strings nor a module for it"}
		}
		c.What = d.What
		out = append(out, c)
	}
	return out
}

func checkNamedDevice(d board.Device, m *Modules, inc map[string]bool) DriverCheck {
	var c DriverCheck
	for _, name := range []string{d.Module, d.Builtin} {
		if name == "" {
			continue
		}
		n := modName(name)
		c.Driver = n
		switch {
		case m.Builtin(n):
			c.How, c.OK = HowBuiltin, true
			return c
		case inc[n] && m.Has(n):
			c.How, c.OK = HowModule, true
			return c
		}
	}
	n := modName(d.Module)
	switch {
	case d.Module != "" && m.Has(n):
		c.Driver, c.How = n, HowNotIncluded
		c.Problem = fmt.Sprintf("module %s is not in the initramfs: add %s to the board's modules", n, n)
	case d.Module != "":
		c.Driver, c.How = n, HowNoModule
		c.Problem = fmt.Sprintf("kernel has no module %s, loadable or built in", n)
	default:
		c.How = HowNoDriver
		c.Problem = fmt.Sprintf("%s is not built into the kernel", modName(d.Builtin))
	}
	return c
}

func checkDTDevice(d board.Device, nodes []Node, dtbErr error, m *Modules, inc map[string]bool) DriverCheck {
	want := strings.Join(d.Compatible, `" or "`)
	if dtbErr != nil {
		return DriverCheck{How: HowNoDTB, Problem: fmt.Sprintf(`compatible "%s": %v`, want, dtbErr)}
	}
	var matched []Node
	for _, n := range nodes {
		if slices.ContainsFunc(d.Compatible, func(c string) bool { return slices.Contains(n.Compatible, c) }) {
			matched = append(matched, n)
		}
	}
	if len(matched) == 0 {
		return DriverCheck{How: HowNoNode, Problem: fmt.Sprintf(`no enabled node in DTB with compatible "%s"`, want)}
	}
	// Every enabled node must find its driver; report the first that
	// does not, or how the first one does.
	var first DriverCheck
	for i, n := range matched {
		c := checkNode(d, n, m, inc)
		if !c.OK {
			return c
		}
		if i == 0 {
			first = c
		}
	}
	return first
}

func checkNode(d board.Device, n Node, m *Modules, inc map[string]bool) DriverCheck {
	mods, builtins := m.modulesForNode(&n.Name, n.Compatible)
	if d.Module != "" && !slices.Contains(mods, modName(d.Module)) {
		mods = append(mods, modName(d.Module))
	}
	for _, mod := range mods {
		if inc[mod] {
			return DriverCheck{Driver: mod, How: HowModule, OK: true}
		}
	}
	for _, mod := range mods {
		if m.Builtin(mod) { // a name in both lists: a stale modules.dep
			return DriverCheck{Driver: mod, How: HowBuiltin, OK: true}
		}
	}
	if len(builtins) > 0 {
		return DriverCheck{Driver: strings.Join(builtins, ","), How: HowBuiltin, OK: true}
	}
	if d.Builtin != "" && m.Builtin(d.Builtin) {
		return DriverCheck{Driver: modName(d.Builtin), How: HowBuiltinByName, OK: true}
	}
	var loadable []string
	for _, mod := range mods {
		if m.Has(mod) {
			loadable = append(loadable, mod)
		}
	}
	compat := strings.Join(n.Compatible, `", "`)
	switch {
	case len(loadable) == 1:
		return DriverCheck{Driver: loadable[0], How: HowNotIncluded, Problem: fmt.Sprintf(
			`module %s drives %s (compatible "%s") but is not in the initramfs: add %s to the board's modules`,
			loadable[0], n.Path, compat, loadable[0])}
	case len(loadable) > 1:
		return DriverCheck{Driver: strings.Join(loadable, ","), How: HowNotIncluded, Problem: fmt.Sprintf(
			`modules %s drive %s (compatible "%s") but none is in the initramfs: add one to the board's modules`,
			strings.Join(loadable, ", "), n.Path, compat)}
	case d.Builtin != "":
		return DriverCheck{Driver: modName(d.Builtin), How: HowNoDriver, Problem: fmt.Sprintf(
			`no driver for %s (compatible "%s"): no module alias matches and %s is not built into the kernel`,
			n.Path, compat, modName(d.Builtin))}
	}
	return DriverCheck{How: HowNoDriver, Problem: fmt.Sprintf(
		`no driver for %s (compatible "%s"): no module or builtin alias matches`, n.Path, compat)}
}

// FormatDriverChecks lays the checks out as a table, one device a line.
func FormatDriverChecks(checks []DriverCheck) string {
	rows := [][]string{{"", "DEVICE", "DRIVER", "HOW"}}
	for _, c := range checks {
		mark, how := "ok", c.How
		if !c.OK {
			mark, how = "FAIL", c.How+": "+c.Problem
		}
		rows = append(rows, []string{mark, c.What, c.Driver, how})
	}
	width := make([]int, 3)
	for _, r := range rows {
		for i := range width {
			width[i] = max(width[i], len(r[i]))
		}
	}
	var sb strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&sb, "%-*s  %-*s  %-*s  %s\n", width[0], r[0], width[1], r[1], width[2], r[2], r[3])
	}
	return sb.String()
}
