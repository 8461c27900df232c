package datadisk

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
)

// RecordFile is the adoption's record, in the state directory on the card:
// which disk holds the files, and how far moving them there has gone. It is
// the one switch between the card's store and the disk's: a power cut
// leaves it saying either "moving" (the card's store is in use, the move
// starts again) or "switched" (the disk's is, complete).
const RecordFile = "datadisk.json"

// Phase is where an adoption stands.
type Phase string

const (
	Moving   Phase = "moving"   // the disk is formatted and being filled; the card serves
	Switched Phase = "switched" // the disk holds the files; the card's are removed
	Failed   Phase = "failed"   // the move stopped on an error (in Error); the card serves
)

// Record is the adoption's record.
type Record struct {
	UUID   string `json:"uuid"`
	Device string `json:"device"` // as it was adopted (sda), for people
	Serial string `json:"serial,omitempty"`
	Size   int64  `json:"size"`
	Phase  Phase  `json:"phase"`
	Error  string `json:"error,omitempty"`

	Started  time.Time `json:"started"`
	Switched time.Time `json:"switched,omitzero"`
	// How far the move is, as of Updated.
	Files      int64     `json:"files"`
	Bytes      int64     `json:"bytes"`
	TotalFiles int64     `json:"total_files"`
	Total      int64     `json:"total"`
	Updated    time.Time `json:"updated"`
}

// ReadRecord is the record in the state directory stateDir; ok is false if
// no disk was ever adopted.
func ReadRecord(stateDir string) (r Record, ok bool, err error) {
	ok, err = state.ReadJSON(filepath.Join(stateDir, RecordFile), &r, "a data disk record", func() bool { return r.UUID != "" })
	return r, ok, err
}

// Write saves the record, atomically.
func (r Record) Write(stateDir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(filepath.Join(stateDir, RecordFile), append(b, '\n'), 0o600)
}

// Note records how far p has gone.
func (r *Record) Note(p *Progress) {
	r.Files, r.Bytes = p.Files.Load()+p.Skipped.Load(), p.Bytes.Load()
	r.TotalFiles, r.Total = p.TotalFiles.Load(), p.Total.Load()
	r.Updated = time.Now()
}

// String is the record for the console and the status page.
func (r Record) String() string {
	switch r.Phase {
	case Switched:
		return fmt.Sprintf("files on the USB disk %s (%.1f GB), since %s", r.UUID, float64(r.Size)/1e9, r.Switched.Format("2006-01-02 15:04"))
	case Failed:
		return fmt.Sprintf("moving the files to the USB disk %s stopped: %s; the card still holds them and serves them", r.UUID, r.Error)
	}
	pct := 0.0
	if r.Total > 0 {
		pct = 100 * float64(r.Bytes) / float64(r.Total)
	}
	return fmt.Sprintf("moving the files to the USB disk %s: %d of %d files checked, %.0f%% of the bytes copied (as of %s); the card serves until every file is checked",
		r.UUID, r.Files, r.TotalFiles, pct, r.Updated.Format("15:04:05"))
}

// Choose is the data disk to use: the config's data_disk, unless it is
// Card and a disk was adopted (then that disk, by its UUID). It returns
// Card for the card.
func Choose(configured string, r Record, adopted bool) string {
	if configured != "" && configured != Card {
		return configured
	}
	if adopted && r.Phase == Switched {
		return r.UUID
	}
	return Card
}
