package emmc

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
)

// RecordFile is the last flash's record, in the card's state directory:
// PID 1 writes it, the server shows it (the admin page, /status.json). The
// eMMC's copy of the state never carries it.
const RecordFile = "emmc.json"

// Phase is where a flash stands.
type Phase string

const (
	Flashing Phase = "flashing" // under way, or cut off by a power cut (then flash again)
	Done     Phase = "done"     // the eMMC is verified and bootable; the card steps aside
	Failed   Phase = "failed"   // stopped on an error (in Error); the card boots as before
)

// Record is a flash's record.
type Record struct {
	Phase    Phase     `json:"phase"`
	Device   string    `json:"device"` // the eMMC, e.g. mmcblk1
	Size     int64     `json:"size"`
	Files    bool      `json:"files"` // the card's files were copied too
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
}

// ReadRecord is the record in stateDir; ok is false if the eMMC was never
// flashed from this card.
func ReadRecord(stateDir string) (r Record, ok bool, err error) {
	ok, err = state.ReadJSON(filepath.Join(stateDir, RecordFile), &r, "an eMMC flash record", func() bool { return r.Phase != "" })
	return r, ok, err
}

// Write saves the record, atomically.
func (r Record) Write(stateDir string) error {
	return state.WriteJSON(filepath.Join(stateDir, RecordFile), r, 0o600)
}

// Advice is what the owner does after a verified flash.
const Advice = "power off (`poweroff`), take the card out, and power on without holding S2: the box then runs from the eMMC, with the CA, the users and the files as they were at the flash. Changes made on the card after the flash are not on the eMMC."

// String is the record for the console and the admin page.
func (r Record) String() string {
	at := r.Started.Format("2006-01-02 15:04")
	switch r.Phase {
	case Done:
		return fmt.Sprintf("the system was copied to the eMMC (%s, %.1f GB) and verified at %s: %s", r.Device, float64(r.Size)/1e9, r.Finished.Format("2006-01-02 15:04"), Advice)
	case Failed:
		return fmt.Sprintf("the flash of the eMMC begun at %s stopped: %s. The card boots as before, and the eMMC is left as it was or unbootable; a flash again starts over.", at, r.Error)
	}
	return fmt.Sprintf("a flash of the eMMC (%s) began at %s and has not finished (or a power cut stopped it: the card boots as before, and `emmc flash` starts again)", r.Device, at)
}
