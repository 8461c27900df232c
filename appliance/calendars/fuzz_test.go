package calendars

import (
	"bytes"
	"strings"
	"testing"

	"github.com/emersion/go-ical"
)

// FuzzObject: whatever body a client PUTs, the check never panics, and an
// object it accepts holds no more components, nested no deeper, and no
// more properties or parameters on one, than the shape limits allow: the
// count before parsing is never fooled into letting the parser build more.
func FuzzObject(f *testing.F) {
	event := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T100000Z\r\nSUMMARY:a\r\n folded\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	for _, s := range []string{event, strings.ReplaceAll(event, "\r\n", "\n"), strings.ReplaceAll(event, "BEGIN:VEVENT", "BEGIN;X=1:VEVENT"),
		"BEGIN:VCARD\r\nVERSION:4.0\r\nFN:a\r\nEND:VCARD\r\n", "BEG\r\n IN:VCALENDAR\r\n", strings.Repeat("BEGIN:X\r\n", 9), "",
		strings.Replace(event, "SUMMARY:a", "SUMMARY;A=\"x;y:z\",b;C=d\r\n ;E=f:a", 1)} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, calendar bool) {
		kind := AddressBooks
		if calendar {
			kind = Calendars
		}
		if validObject(kind, body) != nil || !calendar {
			return
		}
		cal, err := ical.NewDecoder(bytes.NewReader(body)).Decode()
		if err != nil {
			t.Fatalf("accepted, but does not decode: %v", err)
		}
		n, depth := count(cal.Component, 1)
		if n > maxComponents || depth > maxDepth {
			t.Fatalf("accepted with %d components %d deep; the limits are %d and %d", n, depth, maxComponents, maxDepth)
		}
		if props, params := countProps(cal.Component); props > maxProperties || params > maxParams {
			t.Fatalf("accepted with %d properties, %d parameter values on one; the limits are %d and %d", props, params, maxProperties, maxParams)
		}
	})
}

// count is c's components, itself included, and how deep they nest.
func count(c *ical.Component, depth int) (n, deepest int) {
	n, deepest = 1, depth
	for _, child := range c.Children {
		cn, cd := count(child, depth+1)
		n += cn
		deepest = max(deepest, cd)
	}
	return n, deepest
}

// countProps is c's properties, its components' included, and the most
// parameter values one of them has.
func countProps(c *ical.Component) (n, params int) {
	for _, ps := range c.Props {
		for _, p := range ps {
			n++
			k := 0
			for _, vs := range p.Params {
				k += len(vs)
			}
			params = max(params, k)
		}
	}
	for _, child := range c.Children {
		cn, cp := countProps(child)
		n += cn
		params = max(params, cp)
	}
	return n, params
}
