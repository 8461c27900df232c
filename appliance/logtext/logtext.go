// Package logtext is what text from outside becomes when it is written to
// a log or a record a person reads: a client names itself what it likes
// (a 500 KB user name, a path with a terminal's escape codes in it), and
// the log must neither grow with it nor replay it to the terminal that
// shows the log. The server's log handler (package sysd) and the audit
// log (package audit) both write through Clean: one escaping, one cut.
package logtext

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Clean returns s as it may be written in a log line: printable text
// (valid UTF-8 letters, marks, numbers, punctuation, symbols and spaces)
// kept as it is, and every other character escaped in Go's way, so that
// the line stays one line and nothing in it reaches a terminal as a
// control: \n, \r and \t, \x1b for ESC and the other C0 controls and
// DEL, \u0085 for a C1 control, \u202e for a format character (a
// direction override), \u2028 for a line separator, and \xff for each
// byte that is not UTF-8. A backslash is kept, so an escape is told apart
// from a literal only by context: the log is for people.
//
// The result holds at most limit bytes of s's text (escapes counted as
// written, none split); what is left out is told by a marker,
// "…(+N bytes)", N the bytes of s not shown. The result is therefore at
// most limit+Marker bytes, however long s is, and s is read only as far as
// the cut: a long s costs no more than a short one.
func Clean(s string, limit int) string {
	if fine(s, limit) {
		return s
	}
	b := make([]byte, 0, min(len(s), limit)+8)
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		n := len(b)
		b = escape(b, r, size, s[i])
		if len(b) > limit {
			b = b[:n]
			break
		}
		i += size
	}
	if i < len(s) {
		b = append(b, "…(+"...)
		b = strconv.AppendInt(b, int64(len(s)-i), 10)
		b = append(b, " bytes)"...)
	}
	return string(b)
}

// Marker is the most a cut adds to Clean's limit: "…(+N bytes)" for N of
// up to 19 digits.
const Marker = len("…(+ bytes)") + 19

// fine says whether s is short printable ASCII, kept as it is: the usual
// case (our own words, addresses, names), answered without a copy.
func fine(s string, limit int) bool {
	if len(s) > limit {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// escape appends rune r (size bytes of the text, first its first byte)
// to b, escaped unless printable.
func escape(b []byte, r rune, size int, first byte) []byte {
	const hex = "0123456789abcdef"
	switch {
	case r == utf8.RuneError && size <= 1:
		return append(b, '\\', 'x', hex[first>>4], hex[first&0xf])
	case unicode.IsGraphic(r):
		return utf8.AppendRune(b, r)
	case r == '\n':
		return append(b, '\\', 'n')
	case r == '\r':
		return append(b, '\\', 'r')
	case r == '\t':
		return append(b, '\\', 't')
	case r < 0x80:
		return append(b, '\\', 'x', hex[r>>4], hex[r&0xf])
	case r <= 0xffff:
		return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	b = append(b, '\\', 'U')
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hex[r>>shift&0xf])
	}
	return b
}
