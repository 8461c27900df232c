package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An encoding error reaches the caller and the old file stays: a share
// book with a time in year 10000 must not become an empty one.
func TestWriteJSONKeepsTheOldFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "book.json")
	if err := WriteJSON(p, map[string]time.Time{"ok": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	err := WriteJSON(p, map[string]time.Time{"bad": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, 0o600)
	if err == nil {
		t.Fatal("WriteJSON of a year-10000 time = nil, want an error")
	}
	after, _ := os.ReadFile(p)
	if string(after) != string(before) {
		t.Errorf("file after a failed write = %q, want the old %q", after, before)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

func TestStorable(t *testing.T) {
	for _, c := range []struct {
		at time.Time
		ok bool
	}{
		{time.Time{}, true}, // none
		{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), true},
		{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1), false}, // the end of 9999-12-31
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), false},
		{time.Unix(1<<40, 0), false},
	} {
		err := Storable("expiry", c.at)
		if (err == nil) != c.ok {
			t.Errorf("Storable(%v) = %v, want ok %v", c.at, err, c.ok)
		}
		var u *Unstorable
		if err != nil && !errors.As(err, &u) {
			t.Errorf("Storable(%v) = %T, want *Unstorable", c.at, err)
		}
	}
}

func TestReadJSON(t *testing.T) {
	dir := t.TempDir()
	type rec struct{ Name string }
	var r rec
	valid := func() bool { return r.Name != "" }
	p := filepath.Join(dir, "r.json")
	if ok, err := ReadJSON(p, &r, "a record", valid); ok || err != nil {
		t.Errorf("no file: %v, %v", ok, err)
	}
	for _, bad := range []string{"{", `{"Name":""}`} {
		os.WriteFile(p, []byte(bad), 0o600)
		if ok, err := ReadJSON(p, &r, "a record", valid); ok || !IsDamaged(err) || !strings.Contains(err.Error(), "not a record") {
			t.Errorf("%q: %v, %v", bad, ok, err)
		}
	}
	if err := WriteJSON(p, rec{"x"}, 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := ReadJSON(p, &r, "a record", valid); !ok || err != nil || r.Name != "x" {
		t.Errorf("a record WriteJSON wrote: %v, %v, %+v", ok, err, r)
	}
}
