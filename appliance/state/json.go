package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// WriteJSON is the one checked path for a state file in JSON: v encoded,
// then written as WriteFile writes (temp, fsync, rename, fsync of the
// directory). An encoding error (a time past year 9999, a value JSON
// cannot hold) reaches the caller and nothing is written: the old file
// stays as it was, never replaced by an empty or partial one.
func WriteJSON(path string, v any, perm fs.FileMode) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("write %s: encode: %w", path, err)
	}
	return WriteFile(path, data, perm)
}

// ReadJSON reads the state file path into v, the reader of what WriteJSON
// wrote: ok is false when there is none. A file that does not decode, or
// that valid (given the decoded v's check) refuses, is Damaged, named as
// what it should have been.
func ReadJSON(path string, v any, what string, valid func() bool) (ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil || !valid() {
		return false, &Damaged{Path: path, Reason: fmt.Sprintf("not %s (%v)", what, err)}
	}
	return true, nil
}

// The times a state file can hold and read back: JSON's times are RFC
// 3339's, years 0000 to 9999; the box keeps to years 1 to 9999.
var (
	FirstTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	LastTime  = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// Unstorable is a time a client asked to keep that no state file can
// hold: it is refused where it comes in (a 400), never stored.
type Unstorable struct {
	What string // what it is for: "expiry", "X-OC-Mtime"...
	At   time.Time
}

func (e *Unstorable) Error() string {
	return fmt.Sprintf("%s %s is outside the dates the box keeps (years %d to %d)",
		e.What, e.At.UTC().Format(time.RFC3339), FirstTime.Year(), LastTime.Year())
}

// Storable checks that t, a time a client sets (what it is for in
// what), can be kept and read back; the error is an *Unstorable.
func Storable(what string, t time.Time) error {
	if t.IsZero() || (!t.Before(FirstTime) && !t.After(LastTime)) {
		return nil
	}
	return &Unstorable{What: what, At: t}
}
