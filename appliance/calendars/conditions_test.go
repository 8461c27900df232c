package calendars

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/bonesync/bonesync/appliance/precond"
)

// An object's PUT and DELETE take the conditional headers as the files
// do (package precond): lists of tags, "*", weak tags that never match.
func TestObjectConditions(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureDefault(Calendars, "bob"); err != nil {
		t.Fatal(err)
	}
	cond := func(k, v string) Conditions {
		h := http.Header{}
		h.Add(k, v)
		return precond.Of(h)
	}
	put := func(c Conditions) (*Object, error) {
		o, _, err := s.Put(Calendars, "bob", DefaultCalendar, "e.ics", "u", []byte(fmt.Sprintf(zoned, "u", "x")), c)
		return o, err
	}
	if _, err := put(cond("If-Match", "*")); !errors.Is(err, ErrPrecondition) {
		t.Errorf("If-Match: * on no object = %v, want ErrPrecondition", err)
	}
	o, err := put(cond("If-None-Match", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		k, v string
		ok   bool
	}{
		{"If-None-Match", "*", false},
		{"If-Match", `"other"`, false},
		{"If-Match", `W/"` + o.ETag + `"`, false},
		{"If-Match", `"other", "` + o.ETag + `"`, true},
	} {
		_, err := put(cond(tc.k, tc.v))
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrPrecondition) {
			t.Errorf("PUT with %s: %s = %v, want ok %v", tc.k, tc.v, err, tc.ok)
		}
	}
	cur, err := s.Object(Calendars, "bob", DefaultCalendar, "e.ics")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(Calendars, "bob", DefaultCalendar, "e.ics", cond("If-Match", `"stale"`)); !errors.Is(err, ErrPrecondition) {
		t.Errorf("DELETE with a stale tag = %v, want ErrPrecondition", err)
	}
	if err := s.Delete(Calendars, "bob", DefaultCalendar, "e.ics", cond("If-Match", `"`+cur.ETag+`"`)); err != nil {
		t.Errorf("DELETE with the object's tag = %v", err)
	}
}
