package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// nohashOverlay writes, in dir, a go build -overlay file that makes the
// build without digests: the store's newSHA1 (appliance/store/digest.go)
// replaced by bench/_nohash/digest.go, which hashes nothing. base, if not
// "", is an overlay file to add it to (the ARM crypto overlay's). It
// returns the file's path.
func nohashOverlay(dir, base string) (string, error) {
	var o struct{ Replace map[string]string }
	if base != "" {
		b, err := os.ReadFile(base)
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return "", fmt.Errorf("%s: %w", base, err)
		}
	}
	if o.Replace == nil {
		o.Replace = map[string]string{}
	}
	from, err1 := filepath.Abs("appliance/store/digest.go")
	to, err2 := filepath.Abs("bench/_nohash/digest.go")
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("the overlay's paths: %v %v", err1, err2)
	}
	o.Replace[from] = to
	b, err := json.Marshal(o)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "nohash-overlay.json")
	return out, os.WriteFile(out, b, 0o644)
}
