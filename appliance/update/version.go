package update

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// version is a release as the Makefile names it, 0.1.0+20261203: a
// semantic version (one to three numbers; a pre-release after '-'), then
// build identifiers after '+' (the build's date, and whatever a test adds:
// 0.1.0+20261203.b). Versions are ordered by their numbers, then a
// pre-release before its release (as semantic versioning has it), then by
// the build identifiers, which semantic versioning ignores but which tell
// two builds of one release apart: numbers by value, before words, words
// in ASCII order, and a longer list after its own prefix.
type version struct {
	nums  [3]uint64
	pre   []string
	build []string
}

// versionSyntax: 1 to 3 numbers, then -pre and +build, each of dotted
// identifiers.
var versionSyntax = regexp.MustCompile(`^([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$`)

// CheckVersion says whether s is a version a box can order (parseVersion):
// the image builder refuses to write a bundle of another.
func CheckVersion(s string) error {
	_, err := parseVersion(s)
	return err
}

// parseVersion reads a version; one it cannot order is an error that
// says what a version looks like.
func parseVersion(s string) (version, error) {
	m := versionSyntax.FindStringSubmatch(s)
	if m == nil {
		return version{}, fmt.Errorf("version %q: not a version this box can order (like 0.1.0+20261203: numbers, then -pre-release and +build)", s)
	}
	var v version
	for i, n := range m[1:4] {
		if n == "" {
			continue
		}
		x, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return version{}, fmt.Errorf("version %q: %w", s, err)
		}
		v.nums[i] = x
	}
	if m[4] != "" {
		v.pre = strings.Split(m[4], ".")
	}
	if m[5] != "" {
		v.build = strings.Split(m[5], ".")
	}
	return v, nil
}

// compare is -1 when v is older than w, 0 when they are the same release
// and build, +1 when v is newer.
func (v version) compare(w version) int {
	for i := range v.nums {
		if c := cmp.Compare(v.nums[i], w.nums[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(v.pre) == 0 && len(w.pre) > 0:
		return 1
	case len(v.pre) > 0 && len(w.pre) == 0:
		return -1
	}
	if c := compareIDs(v.pre, w.pre); c != 0 {
		return c
	}
	return compareIDs(v.build, w.build)
}

// compareIDs orders dotted identifiers as semantic versioning orders a
// pre-release's.
func compareIDs(a, b []string) int {
	for i := range min(len(a), len(b)) {
		x, xerr := strconv.ParseUint(a[i], 10, 64)
		y, yerr := strconv.ParseUint(b[i], 10, 64)
		var c int
		switch {
		case xerr == nil && yerr == nil:
			c = cmp.Compare(x, y)
		case xerr == nil:
			c = -1 // a number before a word
		case yerr == nil:
			c = 1
		default:
			c = strings.Compare(a[i], b[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}
