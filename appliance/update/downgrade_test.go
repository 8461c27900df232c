package update

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Versions in the order a box takes them, the Makefile's and the VM
// test's among them; each line is older than the next.
func TestVersionOrder(t *testing.T) {
	order := [][]string{
		{"0.0.9"},
		{"0.1.0-rc.1"},
		{"0.1.0-rc.2+20261201"},
		{"0.1.0", "0.1"},
		{"0.1.0+0"},
		{"0.1.0+20261202"},
		{"0.1.0+20261203"},
		{"0.1.0+20261203.b"},
		{"0.1.0+20261203.failserve"},
		{"0.1.0+20261203.panicinit"},
		{"0.1.1+20250101"},
		{"0.2.0"},
		{"0.10.0"},
		{"1", "1.0.0"},
	}
	for i, line := range order {
		for _, a := range line {
			va, err := parseVersion(a)
			if err != nil {
				t.Fatalf("parseVersion(%q) = %v", a, err)
			}
			for j, other := range order {
				for _, b := range other {
					vb, _ := parseVersion(b)
					if got, want := va.compare(vb), cmp.Compare(i, j); got != want {
						t.Errorf("parseVersion(%q).compare(%q) = %d, want %d", a, b, got, want)
					}
				}
			}
		}
	}
	for _, bad := range []string{"", "unknown", "dev", "v1.2.3", "1..2", "1.2.3.4", "1.2.3+", "1.2.3-", "1.0'; reset; echo '", "99999999999999999999999"} {
		if _, err := parseVersion(bad); err == nil || !strings.Contains(err.Error(), "not a version") && !strings.Contains(err.Error(), "range") {
			t.Errorf("parseVersion(%q) = %v, want an error", bad, err)
		}
	}
}

// A bundle older than the highest version run is refused, before any
// write, with the way to allow it; the console's allowance lets one
// through, within the hour, once; the version committed after a trial is
// recorded as the highest, and never lowered.
func TestDowngrade(t *testing.T) {
	const a, b = "0.1.0+20261203", "0.1.0+20261203.b"
	m := newMemCard(t, a)
	state := ownerTrusts(t)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	boot := func() *Card {
		slot, trial := uboot(m)
		return &Card{Running: Running{Slot: slot, Trial: trial}, io: m, State: state, now: func() time.Time { return now }}
	}
	files := map[string]string{"zImage": "kernel", "initrd.img": "initrd"}
	older := bundleOf(t, "0.1.0+20261202", files, testKey)
	c := boot()
	before := clone(m)
	_, err := c.Apply(bytes.NewReader(older), "qemu-virt", io.Discard)
	var bad *BadBundle
	if !errors.Is(err, ErrDowngrade) || !errors.As(err, &bad) || !strings.Contains(err.Error(), "update allow-downgrade") || !strings.Contains(err.Error(), a) {
		t.Errorf("an older bundle than the running slot's: %v, want ErrDowngrade naming %s and the way to allow it", err, a)
	}
	unchanged(t, m, before, "the refused downgrade")
	if _, err := c.Apply(bytes.NewReader(bundleOf(t, "unknown", files, testKey)), "qemu-virt", io.Discard); err == nil || !strings.Contains(err.Error(), "not a version") {
		t.Errorf("a bundle whose version cannot be ordered: %v", err)
	}
	unchanged(t, m, before, "the unordered version")

	// b: taken, and recorded as run once its trial is committed.
	if _, err := c.Apply(bytes.NewReader(bundleOf(t, b, files, testKey)), "qemu-virt", io.Discard); err != nil {
		t.Fatal(err)
	}
	c = boot()
	if h, _ := highest(state); h != "" {
		t.Errorf("Highest before the commit = %q, want none", h)
	}
	if done, err := c.Commit(); !done || err != nil {
		t.Fatalf("Commit = %v, %v", done, err)
	}
	if h, err := highest(state); h != b || err != nil {
		t.Errorf("Highest after the commit = %q, %v, want %q", h, err, b)
	}

	// Back to a (slot a still holds it, but a bundle is what is asked):
	// refused; allowed at the console, taken once.
	back := bundleOf(t, a, files, testKey)
	if _, err := c.Apply(bytes.NewReader(back), "qemu-virt", io.Discard); !errors.Is(err, ErrDowngrade) {
		t.Errorf("back to %s without the allowance: %v", a, err)
	}
	if err := AllowDowngrade(state, now); err != nil {
		t.Fatal(err)
	}
	now = now.Add(allowFor + time.Second)
	if _, err := c.Apply(bytes.NewReader(back), "qemu-virt", io.Discard); !errors.Is(err, ErrDowngrade) {
		t.Errorf("an allowance more than %v old: %v", allowFor, err)
	}
	AllowDowngrade(state, now)
	if _, err := c.Apply(bytes.NewReader(back), "qemu-virt", io.Discard); err != nil {
		t.Fatalf("back to %s with the allowance: %v", a, err)
	}
	if _, err := os.Stat(filepath.Join(state, allowFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the allowance is still there after its install: %v", err)
	}
	c = boot()
	if done, err := c.Commit(); !done || err != nil {
		t.Fatalf("Commit of the downgrade = %v, %v", done, err)
	}
	if h, _ := highest(state); h != b {
		t.Errorf("Highest after committing the older %s = %q, want %q still", a, h, b)
	}
	// Running a now, a is still older than the highest run.
	if _, err := c.Apply(bytes.NewReader(back), "qemu-virt", io.Discard); !errors.Is(err, ErrDowngrade) {
		t.Errorf("%s again, the allowance spent: %v", a, err)
	}
	if _, err := c.Apply(bytes.NewReader(bundleOf(t, b, files, testKey)), "qemu-virt", io.Discard); err != nil {
		t.Errorf("%s again, the highest run: %v", b, err)
	}
}

func unchanged(t *testing.T, m, before memCard, what string) {
	t.Helper()
	for name, was := range before {
		if !bytes.Equal(m[name], was) {
			t.Errorf("%s changed %s on the card", what, name)
		}
	}
}
