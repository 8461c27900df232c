package kmod

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A modules directory made by hand, to test the parts that need no kernel.
func fakeModules(t *testing.T) *Modules {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"modules.dep": "kernel/a/top-mod.ko: kernel/b/mid.ko kernel/c/low.ko\n" +
			"kernel/b/mid.ko: kernel/c/low.ko\n" +
			"kernel/c/low.ko:\n" +
			"kernel/d/other.ko.xz: kernel/c/low.ko\n" +
			"kernel/e/cyc1.ko: kernel/e/cyc2.ko\n" +
			"kernel/e/cyc2.ko: kernel/e/cyc1.ko\n",
		"modules.builtin": "kernel/f/in-kernel.ko\n",
		"modules.alias": "# Aliases extracted from modules themselves.\n" +
			"alias of:N*T*Cvendor,fooC* top_mod\n" +
			"alias of:N*T*Cvendor,foo top_mod\n" +
			"alias of:NledsT*Cgpio-leds other\n" +
			"alias of:N*T*Cvendor,foo-v[0-9]C* mid\n" +
			"alias platform:foo low\n",
		"modules.builtin.modinfo": "in_kernel.alias=of:N*T*Cvendor,barC*\x00in_kernel.license=GPL\x00" +
			"in_kernel.alias=of:N*T*Cvendor,bar\x00other_builtin.alias=platform:x\x00",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := ReadModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestModulesFake(t *testing.T) {
	m := fakeModules(t)
	got, err := m.Closure([]string{"other", "top-mod", "in_kernel", "low"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"low", "other", "mid", "top_mod"}; !slices.Equal(got, want) {
		t.Errorf("Closure = %v, want %v", got, want)
	}
	if _, err := m.Closure([]string{"cyc1"}); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("Closure(cycle) error = %v, want a cycle", err)
	}
	if got := m.Path("other"); got != "kernel/d/other.ko.xz" {
		t.Errorf("Path(other) = %q", got)
	}
	for _, tc := range []struct {
		compatible    []string
		mods, builtin []string
	}{
		{[]string{"vendor,foo"}, []string{"top_mod"}, nil},
		{[]string{"vendor,foo", "vendor,generic"}, []string{"top_mod"}, nil},
		{[]string{"vendor,board-foo", "vendor,foo"}, []string{"top_mod"}, nil},
		{[]string{"vendor,foo-v2"}, nil, nil}, // the alias wants a further compatible
		{[]string{"vendor,foo-v2", "vendor,foo"}, []string{"mid", "top_mod"}, nil},
		{[]string{"vendor,foo-vx"}, nil, nil},
		{[]string{"vendor,fo"}, nil, nil},
		{[]string{"vendor,bar"}, nil, []string{"in_kernel"}},
		{[]string{"gpio-leds"}, []string{"other"}, nil}, // the node could be named leds
	} {
		mods, builtin := m.ModulesFor(tc.compatible)
		if !slices.Equal(mods, tc.mods) || !slices.Equal(builtin, tc.builtin) {
			t.Errorf("ModulesFor(%q) = %v, %v, want %v, %v", tc.compatible, mods, builtin, tc.mods, tc.builtin)
		}
	}
	// With the node's name known, the name in the alias counts.
	for _, tc := range []struct {
		name string
		want []string
	}{{"leds", []string{"other"}}, {"leds@0", []string{"other"}}, {"lights", nil}} {
		if got, _ := m.ModulesForNode(&tc.name, []string{"gpio-leds"}); !slices.Equal(got, tc.want) {
			t.Errorf("modulesForNode(%q, gpio-leds) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Match is what PID 1 does with a device's modalias at boot: the loadable
// modules whose aliases match it, in file order.
func TestMatch(t *testing.T) {
	m := fakeModules(t)
	for _, tc := range []struct {
		modalias string
		want     []string
	}{
		{"of:NfooT(null)Cvendor,foo", []string{"top_mod"}},
		{"of:NfooT(null)Cvendor,foo-v2Cvendor,foo", []string{"top_mod", "mid"}},
		{"of:NledsT(null)Cgpio-leds", []string{"other"}},
		{"of:NlampsT(null)Cgpio-leds", nil},
		{"of:NbarT(null)Cvendor,bar", nil}, // built in: nothing to load
		{"platform:foo", []string{"low"}},
	} {
		if got := m.Match(tc.modalias); !slices.Equal(got, tc.want) {
			t.Errorf("Match(%q) = %v, want %v", tc.modalias, got, tc.want)
		}
	}
	if Canonical("kernel/fs/nls/nls_iso8859-1.ko") != "nls_iso8859_1" || Canonical("sdhci-omap.ko.xz") != "sdhci_omap" {
		t.Error("Canonical")
	}
	if got := m.Deps("top-mod"); !slices.Equal(got, []string{"mid", "low"}) {
		t.Errorf("Deps(top-mod) = %v", got)
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"abc", "ab", false},
		{"*", "", true},
		{"*", "a/b/c", true}, // '*' matches '/' (fnmatch without FNM_PATHNAME)
		{"a*c", "a/x/c", true},
		{"a*c", "abcd", false},
		{"a*c*", "abcd", true},
		{"a?c", "abc", true},
		{"a?c", "a/c", true},
		{"a?c", "ac", false},
		{"[abc]x", "bx", true},
		{"[abc]x", "dx", false},
		{"[!abc]x", "dx", true},
		{"[^abc]x", "ax", false},
		{"[a-c]", "b", true},
		{"[a-c]", "d", false},
		{"[]]", "]", true},
		{"[!]]", "a", true},
		{"[a-]", "-", true},
		{"[ab", "[ab", true}, // no ']': a literal '['
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"**a", "bba", true},
		{"*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"mdio:0000000000100010010101100001????", "mdio:00000000001000100101011000011010", true},
		{"mdio:000000000100110111010000011?0110", "mdio:00000000010011011101000001110110", true},
		{"of:N*T*Cti,omap4-rngC*", "of:NrngT(null)Cti,omap4-rng", false},
		{"of:N*T*Cti,omap4-rngC*", "of:NrngT(null)Cti,omap4-rngCti,other", true},
		{"of:N*T*Cti,omap4-rng", "of:Nrng@48310000T<NULL>Cti,omap4-rng", true},
		{"of:N*T*Cti,omap4-rng", "of:NrngT<NULL>Cti,omap4-rngx", false},
		{"pci:v00001AF4d00001000sv*sd*bc*sc*i*", "pci:v00001AF4d00001000sv00001AF4sd00000001bc02sc00i00", true},
		{"virtio:d00000001v*", "virtio:d00000001v00001AF4", true},
		{"[!]]", "]", false}, {"[]a]", "]", true}, {"a[b", "a[b", true},
		{"a[0-9]b", "a5b", true}, {"a[!0-9]b", "a5b", false}, {"a[^x]b", "ayb", true},
		{"usb:v1D6Bp0002d*dc*dsc*dp*ic*isc*ip*in*", "usb:v1D6Bp0002d0601dc09dsc00dp03ic09isc00ip00in00", true},
	} {
		if got := Glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestGlobAnyString(t *testing.T) {
	// A subject with parts unknown (AnyString) matches if some string in
	// their place would.
	leds := "leds"
	for _, tc := range []struct {
		pattern    string
		name, typ  *string
		compatible []string
		want       bool
	}{
		{"of:N*T*Cgpio-leds", nil, nil, []string{"gpio-leds"}, true},
		{"of:N*T*Cgpio-ledsC*", nil, nil, []string{"gpio-leds"}, false},
		{"of:N*T*Cgpio-ledsC*", nil, nil, []string{"gpio-leds", "x"}, true},
		{"of:NledsT*Cgpio-leds", nil, nil, []string{"gpio-leds"}, true},
		{"of:NledsT*Cgpio-leds", &leds, nil, []string{"gpio-leds"}, true},
		{"of:NlampsT*Cgpio-leds", &leds, nil, []string{"gpio-leds"}, false},
		{"of:N*TserialC*", nil, nil, []string{"ns16550a"}, true},
		{"of:N*T*", nil, nil, []string{"anything"}, true}, // the pattern's '*' takes the rest
		{"of:N*T*CfooC*", nil, nil, []string{"bar"}, false},
		{"of:N*TfooCbar", nil, nil, []string{"bar"}, true},
		{"of:N*T[A-Z]Cbar", nil, nil, []string{"bar"}, false},
		{"of:N*T[A-z]Cbar", nil, nil, []string{"bar"}, true},
		{"of:N?T?Cx", nil, nil, []string{"x"}, true},
		{"of:N[a-z]T*Cx", nil, nil, []string{"x"}, true},
		{"of:N*T*Cx", nil, nil, []string{"y"}, false},
		{"usb:v*", nil, nil, []string{"x"}, false},
		{"*Cx", nil, nil, []string{"x"}, true},
	} {
		got := MatchSubject(tc.pattern, OFModalias(tc.name, tc.typ, tc.compatible))
		if got != tc.want {
			t.Errorf("MatchSubject(%q, name %v, %q) = %v, want %v", tc.pattern, tc.name != nil, tc.compatible, got, tc.want)
		}
	}
}
