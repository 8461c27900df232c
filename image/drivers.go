package main

// The driver check: before an image is written, prove from the kernel
// package's own metadata (modules.dep, modules.alias, modules.builtin,
// modules.builtin.modinfo, all produced by depmod) and the board's device
// tree that every device the board needs will find its driver at boot,
// either built into the kernel or as a module in the initramfs.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/u-root/u-root/pkg/dt"

	"github.com/bonesync/bonesync/appliance/kmod"
	"github.com/bonesync/bonesync/board"
)

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
func CheckDrivers(b *board.Board, dtb []byte, m *kmod.Modules, included []string) []DriverCheck {
	inc := map[string]bool{}
	for _, n := range included {
		inc[kmod.Canonical(n)] = true
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

func checkNamedDevice(d board.Device, m *kmod.Modules, inc map[string]bool) DriverCheck {
	var c DriverCheck
	for _, name := range []string{d.Module, d.Builtin} {
		if name == "" {
			continue
		}
		n := kmod.Canonical(name)
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
	n := kmod.Canonical(d.Module)
	switch {
	case d.Module != "" && m.Has(n):
		c.Driver, c.How = n, HowNotIncluded
		c.Problem = fmt.Sprintf("module %s is not in the initramfs: add %s to the board's modules", n, n)
	case d.Module != "":
		c.Driver, c.How = n, HowNoModule
		c.Problem = fmt.Sprintf("kernel has no module %s, loadable or built in", n)
	default:
		c.How = HowNoDriver
		c.Problem = fmt.Sprintf("%s is not built into the kernel", kmod.Canonical(d.Builtin))
	}
	return c
}

func checkDTDevice(d board.Device, nodes []Node, dtbErr error, m *kmod.Modules, inc map[string]bool) DriverCheck {
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

func checkNode(d board.Device, n Node, m *kmod.Modules, inc map[string]bool) DriverCheck {
	mods, builtins := m.ModulesForNode(&n.Name, n.Compatible)
	if d.Module != "" && !slices.Contains(mods, kmod.Canonical(d.Module)) {
		mods = append(mods, kmod.Canonical(d.Module))
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
		return DriverCheck{Driver: kmod.Canonical(d.Builtin), How: HowBuiltinByName, OK: true}
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
		return DriverCheck{Driver: kmod.Canonical(d.Builtin), How: HowNoDriver, Problem: fmt.Sprintf(
			`no driver for %s (compatible "%s"): no module alias matches and %s is not built into the kernel`,
			n.Path, compat, kmod.Canonical(d.Builtin))}
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
