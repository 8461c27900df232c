package copies

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
)

// Progress is a run's as it goes.
type Progress struct {
	Started time.Time `json:"started"`
	At      time.Time `json:"at"` // when these figures were taken
	Checked int64     `json:"files_checked"`
	Files   int64     `json:"files_sent"`
	Bytes   int64     `json:"bytes_sent"`
}

// ProgressEvery is how often a run writes its progress into status.json.
const ProgressEvery = 15 * time.Second

// Status is the last run's outcome as the box keeps it (status.json in
// Dir), for the console's status, /status.json and the notices; and the
// run going on, if one is.
type Status struct {
	Running     *Progress `json:"running,omitempty"`
	Target      string    `json:"target"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	Files       int64     `json:"files_sent"`
	Bytes       int64     `json:"bytes_sent"`
	Errors      int64     `json:"errors"`
	Error       string    `json:"error,omitempty"`
	LastSuccess time.Time `json:"last_success,omitzero"`
	// HostKey is the SFTP target's changed host key that refused the
	// last run, until it is accepted; nil: none.
	HostKey *HostKeyChanged `json:"host_key_changed,omitempty"`
	// Interrupted: the run was stopped before its end (the box stopped);
	// AfterCut: this run completed one that was cut short (Interrupted,
	// or a power cut, which leaves Running).
	Interrupted bool `json:"interrupted,omitempty"`
	AfterCut    bool `json:"completed_after_cut,omitempty"`
}

// ReadStatus reads the last run's outcome from dir (Dir); ok is false if
// no run was made.
func ReadStatus(dir string) (st Status, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil || json.Unmarshal(b, &st) != nil {
		return Status{}, false
	}
	return st, true
}

// WriteStatus keeps st as the status in dir (Dir), for ReadStatus.
func WriteStatus(dir string, st Status) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return state.WriteFile(filepath.Join(dir, "status.json"), b, 0o600)
}

// Stale says whether the progress recorded is of a run that was cut
// short (no figures for three times ProgressEvery).
func (st Status) Stale() bool {
	return st.Running != nil && time.Since(st.Running.At) > 3*ProgressEvery
}

// String is the status in one line.
func (st Status) String() string {
	if p := st.Running; p != nil {
		run := fmt.Sprintf("running since %s: %d files checked, %d sent (%d bytes)", p.Started.Local().Format("2006-01-02 15:04"), p.Checked, p.Files, p.Bytes)
		if st.Stale() {
			run = fmt.Sprintf("cut short after %s (%d files sent): the next run completes it", p.Started.Local().Format("2006-01-02 15:04"), p.Files)
		}
		if st.Ended.IsZero() {
			return run
		}
		st.Running = nil
		return run + "; before: " + st.String()
	}
	when := st.Ended.Local().Format("2006-01-02 15:04")
	if st.Error != "" {
		last := "never"
		if !st.LastSuccess.IsZero() {
			last = st.LastSuccess.Local().Format("2006-01-02 15:04")
		}
		return fmt.Sprintf("to %s failed at %s (%s); last good copy: %s", st.Target, when, st.Error, last)
	}
	if st.AfterCut {
		return fmt.Sprintf("to %s completed at %s after an interrupted run: %d files sent (%d bytes)", st.Target, when, st.Files, st.Bytes)
	}
	return fmt.Sprintf("to %s made at %s: %d files sent (%d bytes)", st.Target, when, st.Files, st.Bytes)
}
