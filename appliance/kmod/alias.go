// Package kmod finds the kernel modules for the hardware present: it reads
// modules.alias and matches devices' modaliases against it the way udev does,
// so one initramfs serves every board it was built for.
package kmod

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Alias is one line of modules.alias: a glob over modaliases, and the module
// that drives them.
type Alias struct {
	Pattern, Module string
}

// Aliases is a parsed modules.alias.
type Aliases []Alias

// ReadAliases parses modules.alias ("alias PATTERN MODULE" lines).
func ReadAliases(r io.Reader) (Aliases, error) {
	var out Aliases
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 3 || f[0] != "alias" {
			return nil, fmt.Errorf("modules.alias line %d: %q", n, sc.Text())
		}
		out = append(out, Alias{Pattern: f[1], Module: f[2]})
	}
	return out, sc.Err()
}

// Match returns the modules whose patterns match modalias, each once, in
// file order.
func (a Aliases) Match(modalias string) []string {
	var mods []string
	for _, al := range a {
		if Glob(al.Pattern, modalias) && !slices.Contains(mods, al.Module) {
			mods = append(mods, al.Module)
		}
	}
	return mods
}

// Glob reports whether s matches pattern, with fnmatch(3) rules as the
// kernel's aliases use them: '*' matches any run of characters ('/' too),
// '?' any one, '[...]' a set or range ('!' or '^' negates), '\' escapes.
func Glob(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for len(pattern) > 0 && pattern[0] == '*' {
				pattern = pattern[1:]
			}
			if pattern == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if Glob(pattern, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		case '[':
			if s == "" {
				return false
			}
			// The set ends at the first ']' after an optional '!' or '^'
			// and a ']' right after them, which is literal.
			i := 1
			if i < len(pattern) && (pattern[i] == '!' || pattern[i] == '^') {
				i++
			}
			if i < len(pattern) && pattern[i] == ']' {
				i++
			}
			end := strings.IndexByte(pattern[i:], ']')
			if end < 0 { // unterminated: '[' is literal
				if s[0] != '[' {
					return false
				}
				pattern, s = pattern[1:], s[1:]
				continue
			}
			end += i
			if !inSet(pattern[1:end], s[0]) {
				return false
			}
			pattern, s = pattern[end+1:], s[1:]
		case '\\':
			if len(pattern) > 1 {
				pattern = pattern[1:]
			}
			fallthrough
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		}
	}
	return s == ""
}

func inSet(set string, c byte) bool {
	neg := false
	if set != "" && (set[0] == '!' || set[0] == '^') {
		neg, set = true, set[1:]
	}
	found := false
	for i := 0; i < len(set); i++ {
		if i+2 < len(set) && set[i+1] == '-' {
			if set[i] <= c && c <= set[i+2] {
				found = true
			}
			i += 2
			continue
		}
		if set[i] == c {
			found = true
		}
	}
	return found != neg
}
