package precond

import (
	"net/http"
	"testing"
	"time"
)

func TestHold(t *testing.T) {
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		hdr    map[string][]string
		exists bool
		want   bool
	}{
		{map[string][]string{}, true, true},
		{map[string][]string{"If-Match": {`"e1"`}}, true, true},
		{map[string][]string{"If-Match": {`"x", "e1"`}}, true, true},
		{map[string][]string{"If-Match": {`"x"`, `"e1"`}}, true, true}, // over two lines
		{map[string][]string{"If-Match": {`W/"e1"`}}, true, false},
		{map[string][]string{"If-Match": {`"x"`}}, true, false},
		{map[string][]string{"If-Match": {`"e1"`}}, false, false},
		{map[string][]string{"If-Match": {`*`}}, true, true},
		{map[string][]string{"If-Match": {`*`}}, false, false},
		{map[string][]string{"If-None-Match": {`*`}}, true, false},
		{map[string][]string{"If-None-Match": {`*`}}, false, true},
		{map[string][]string{"If-None-Match": {`"e1"`}}, true, false},
		{map[string][]string{"If-None-Match": {`"x", "e1"`}}, true, false},
		{map[string][]string{"If-None-Match": {`W/"e1"`}}, true, true},
		{map[string][]string{"If-Unmodified-Since": {"Tue, 02 Jan 2024 03:04:05 GMT"}}, true, true},
		{map[string][]string{"If-Unmodified-Since": {"Tue, 02 Jan 2024 03:04:04 GMT"}}, true, false},
		// If-Match present: If-Unmodified-Since is not looked at (RFC 9110 13.2.2).
		{map[string][]string{"If-Match": {`"e1"`}, "If-Unmodified-Since": {"Sat, 01 Jan 2000 00:00:00 GMT"}}, true, true},
	} {
		h := http.Header{}
		for k, vs := range tc.hdr {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
		c := Of(h)
		if got := c.Hold(tc.exists, "e1", mtime); got != tc.want {
			t.Errorf("Of(%v).Hold(exists=%v) = %v, want %v", tc.hdr, tc.exists, got, tc.want)
		}
		if c.None() != (len(tc.hdr) == 0) {
			t.Errorf("Of(%v).None() = %v", tc.hdr, c.None())
		}
	}
}
