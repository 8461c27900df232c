package kmod

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// Canonical is a module's name as the kernel knows it: file names mix '-'
// and '_', module names use '_'.
func Canonical(name string) string {
	name = strings.TrimSuffix(path.Base(name), ".ko")
	return strings.ReplaceAll(name, "-", "_")
}

// ReadDeps parses modules.dep ("path: dep-path dep-path ..."), returning
// each module's dependencies and the path of each module name.
func ReadDeps(r io.Reader) (deps map[string][]string, byName map[string]string, err error) {
	deps, byName = map[string][]string{}, map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		mod, rest, ok := strings.Cut(line, ":")
		if !ok {
			return nil, nil, fmt.Errorf("modules.dep line %d: %q", n, line)
		}
		deps[mod] = strings.Fields(rest)
		byName[Canonical(mod)] = mod
	}
	return deps, byName, sc.Err()
}
