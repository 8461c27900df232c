package state

import (
	"errors"
	"io/fs"
	"strings"
	"time"
)

// TimeFile is the state directory's record of the last time the box knew,
// the persistent half of the clock floor (see package clock).
type TimeFile struct{ Dir *Dir }

// Load returns the saved time, or the zero time if none was saved yet.
func (f TimeFile) Load() (time.Time, error) {
	b, err := f.Dir.Read(Clock)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}, &Damaged{Path: f.Dir.Join(Clock), Reason: "not an RFC 3339 time"}
	}
	return t, nil
}

// Save records t.
func (f TimeFile) Save(t time.Time) error {
	return f.Dir.Write(Clock, []byte(t.UTC().Format(time.RFC3339)+"\n"), 0o644)
}
