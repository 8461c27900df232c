package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// writeOutputs writes IMG.xz (single-threaded, so the bytes repeat), IMG.bmap
// (bmaptool: flashing skips the empty space) and SHA256SUMS, which also
// lists the update bundle.
func writeOutputs(o *options, img, bundle string) error {
	xz := img + ".xz"
	os.Remove(xz)
	if _, err := sh(nil, "xz", "-k", "-f", "-6", "-T1", img); err != nil {
		return err
	}
	bmap := strings.TrimSuffix(img, ".img") + ".bmap"
	if _, err := sh(nil, "bmaptool", "create", "-o", bmap, img); err != nil {
		return err
	}
	var lines []string
	for _, f := range []string{img, xz, bmap, bundle} {
		sum, err := fileSum(f)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s  %s", sum, filepath.Base(f)))
	}
	sort.Strings(lines)
	return os.WriteFile(filepath.Join(filepath.Dir(img), "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
