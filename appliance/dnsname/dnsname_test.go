package dnsname

import (
	"strings"
	"testing"
)

func TestValidLabel(t *testing.T) {
	for s, want := range map[string]bool{
		"bonesync": true, "nas-2": true, "B0x": true, "": false, "-a": false, "a-": false,
		"a.b": false, "a_b": false, "ü": false, strings.Repeat("a", 63): true, strings.Repeat("a", 64): false,
	} {
		if got := ValidLabel(s); got != want {
			t.Errorf("ValidLabel(%q) = %v, want %v", s, got, want)
		}
	}
}
