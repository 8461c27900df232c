package kmod

import (
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"of:N*T*Cti,omap4-rngC*", "of:NrngT(null)Cti,omap4-rng", false}, // the alias without C* covers it
		{"of:N*T*Cti,omap4-rng", "of:Nrng@48310000T<NULL>Cti,omap4-rng", true},
		{"of:N*T*Cti,omap4-rngC*", "of:NrngT<NULL>Cti,omap4-rngCti,other", true},
		{"of:N*T*Cti,omap4-rng", "of:NrngT<NULL>Cti,omap4-rngx", false},
		{"mdio:0000000000000111110000011111????", "mdio:00000000000001111100000111110001", true},
		{"mdio:0000000000000111110000011111????", "mdio:0000000000000111110000011111000", false},
		{"pci:v00001AF4d00001000sv*sd*bc*sc*i*", "pci:v00001AF4d00001000sv00001AF4sd00000001bc02sc00i00", true},
		{"virtio:d00000001v*", "virtio:d00000001v00001AF4", true},
		{"[!]]", "a", true}, {"[!]]", "]", false}, {"[]a]", "]", true}, {"a[b", "a[b", true},
		{"a[0-9]b", "a5b", true}, {"a[!0-9]b", "a5b", false}, {"a[^x]b", "ayb", true},
		{"a*/c", "ab/b/c", true}, {`a\*b`, "a*b", true}, {`a\*b`, "axb", false}, {"", "", true}, {"?", "", false},
	} {
		if got := Glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestAliases(t *testing.T) {
	a, err := ReadAliases(strings.NewReader("# comment\nalias of:N*T*Cti,omap3-wdtC* omap_wdt\nalias of:N*T*Cti,omap3-wdt omap_wdt\nalias virtio:d00000001v* virtio_net\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Match("of:NwdtT(null)Cti,omap3-wdt"); len(got) != 1 || got[0] != "omap_wdt" {
		t.Errorf("Match(wdt) = %v, want [omap_wdt]", got)
	}
	if got := a.Match("virtio:d00000002v00001AF4"); len(got) != 0 {
		t.Errorf("Match(virtio blk) = %v, want none", got)
	}
	if _, err := ReadAliases(strings.NewReader("alias onlytwo\n")); err == nil {
		t.Error("ReadAliases accepted a malformed line")
	}
}

func TestReadDeps(t *testing.T) {
	deps, byName, err := ReadDeps(strings.NewReader("kernel/fs/nls/nls_iso8859-1.ko:\nkernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko kernel/fs/mbcache.ko\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := byName["nls_iso8859_1"]; got != "kernel/fs/nls/nls_iso8859-1.ko" {
		t.Errorf("byName[nls_iso8859_1] = %q", got)
	}
	if got := deps["kernel/fs/ext4/ext4.ko"]; len(got) != 2 || got[0] != "kernel/fs/jbd2/jbd2.ko" {
		t.Errorf("deps[ext4] = %v", got)
	}
	if Canonical("sdhci-omap.ko") != "sdhci_omap" {
		t.Error("Canonical(sdhci-omap.ko)")
	}
}
