package logtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Printable text is kept, every control escaped, and a cut said: at 64
// bytes, or at 16 where the wanted text shows a cut.
func TestClean(t *testing.T) {
	huge := strings.Repeat("x", 500<<10)
	for _, c := range []struct{ in, want string }{
		{"alice", "alice"},
		{"", ""},
		{"bob smith", "bob smith"},
		{"Zoë 日本 🙂", "Zoë 日本 🙂"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"admin\r\n<3>forged line", `admin\r\n<3>forged line`},
		{"a\x00b\tc\x7f", `a\x00b\tc\x7f`},
		{"c1 \u0085 \u009b2J", `c1 \u0085 \u009b2J`},
		{"bidi \u202egpj.exe", `bidi \u202egpj.exe`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff\xfe utf8 \xe6\x97", `bad \xff\xfe utf8 \xe6\x97`},
		{"kept \ufffd", "kept \ufffd"},
		{"back\\slash", `back\slash`},
		{"0123456789abcdef", "0123456789abcdef"},
		{"0123456789abcdefg", "0123456789abcdef…(+1 bytes)"},
		{"0123456789abcde\x1b", "0123456789abcde…(+1 bytes)"}, // an escape is not split
		{"0123456789abcd日本", "0123456789abcd…(+6 bytes)"},     // nor a character
		{huge, strings.Repeat("x", 16) + "…(+511984 bytes)"},
		{strings.Repeat("\x1b", 100), strings.Repeat(`\x1b`, 4) + "…(+96 bytes)"},
	} {
		limit := 64
		if strings.Contains(c.want, "…") {
			limit = 16
		}
		if got := Clean(c.in, limit); got != c.want {
			t.Errorf("Clean(%.40q, %d) = %q, want %q", c.in, limit, got, c.want)
		}
	}
}

// Whatever comes in, what goes out is bounded, valid UTF-8, printable,
// and clean already.
func TestCleanBounded(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("\x00\x1b\xff日\u2028", 100<<10),
		strings.Repeat("é", 1000),
		string([]byte{0xf4, 0x90, 0x80, 0x80}), // beyond U+10FFFF
	} {
		got := Clean(in, 200)
		if len(got) > 200+Marker {
			t.Errorf("Clean(%.20q...) is %d bytes, over %d", in, len(got), 200+Marker)
		}
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\x00\x1b\n\r\u2028") {
			t.Errorf("Clean(%.20q...) = %.60q: not clean", in, got)
		}
		if again := Clean(got, 200+Marker); again != got {
			t.Errorf("Clean(Clean(%.20q...)) = %.60q, want it unchanged", in, again)
		}
	}
}
