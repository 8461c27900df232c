package files

import (
	"strings"
	"testing"
)

func TestParseIf(t *testing.T) {
	lists, ok := parseIf(`<https://h/dav/a> (<opaquelocktoken:1> ["e"]) (Not <DAV:no-lock> [W/"e"])`)
	if !ok || len(lists) != 2 {
		t.Fatalf("parseIf = %+v, %v", lists, ok)
	}
	if lists[1].resource != "https://h/dav/a" || !lists[1].conds[0].not || lists[1].conds[0].token != "DAV:no-lock" || lists[1].conds[1].etag != "e" {
		t.Errorf("second list = %+v", lists[1])
	}
	// Bounded: a few conditions are all a client needs, and each costs a
	// lookup (a 900 KB header took 4.3 s of CPU).
	if _, ok := parseIf(strings.Repeat(`(["e"]) `, maxIfConditions)); !ok {
		t.Error("parseIf refused as many conditions as it takes")
	}
	for _, bad := range []string{"", "(", "(<a>", "<x>", "(Not)", "([x)", "junk",
		strings.Repeat(`(["e"]) `, maxIfConditions+1), "<" + strings.Repeat("x", maxIfHeader) + `> (["e"])`} {
		if _, ok := parseIf(bad); ok {
			t.Errorf("parseIf(%.40q...) accepted", bad)
		}
	}
}

func TestParseOCChecksum(t *testing.T) {
	for in, ok := range map[string]bool{
		"SHA1:" + "a9993e364706816aba3e25717850c26c9cd0d89d": true,
		"sha1:" + "a9993e364706816aba3e25717850c26c9cd0d89d": true,
		"MD5:900150983cd24fb0d6963f7d28e17f72":               true,
		"Adler32:024d0127":                                   true,
		"SHA1:abc":                                           false,
		"SHA256:00":                                          false,
		"nonsense":                                           false,
	} {
		if _, err := parseOCChecksum(in); (err == nil) != ok {
			t.Errorf("parseOCChecksum(%q) = %v", in, err)
		}
	}
	for in, want := range map[string]int64{"1500000000": 1500000000, "1500000000.5": 1500000000} {
		if got, err := parseUnixTime(in); err != nil || got.Unix() != want {
			t.Errorf("parseUnixTime(%q) = %v, %v", in, got, err)
		}
	}
	// 253402300800 is the first second of year 10000: no state file
	// holds it.
	for _, bad := range []string{"-1", "abc", "1e20", "", "253402300800", "1099511627776"} {
		if _, err := parseUnixTime(bad); err == nil {
			t.Errorf("parseUnixTime(%q) accepted", bad)
		}
	}
	if _, err := parseUnixTime("253402300799"); err != nil {
		t.Errorf("parseUnixTime(the last second of 9999) = %v, want taken", err)
	}
	if _, err := parseModTime("Sat, 01 Jan 10000 00:00:00 GMT"); err == nil {
		t.Error("parseModTime(year 10000) accepted")
	}
}
