package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The overlay takes, and only where it should: the store's own test of an
// upload's digests fails in the build without them (zero SHA-1s), and the
// whole appliance still builds with it.
func TestNohashOverlay(t *testing.T) {
	dir := t.TempDir()
	wd, _ := filepath.Abs("..")
	t.Chdir(wd)
	overlay, err := nohashOverlay(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "build", "-overlay="+overlay, "-o", filepath.Join(dir, "bonesync-nohash"), "./appliance").CombinedOutput()
	if err != nil {
		t.Fatalf("the build without digests: %v\n%s", err, out)
	}
	out, err = exec.Command("go", "test", "-count=1", "-overlay="+overlay, "-run", "TestUploadKeepsDateAndDigests", "./appliance/store").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "SHA1:[0 0 0") {
		t.Fatalf("with the overlay the store still hashes (the overlay did not take): %v\n%s", err, out)
	}
}
