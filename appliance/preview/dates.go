package preview

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// datesFile is where the dates photos were taken are kept, per user:
// read from each JPEG's EXIF once, by id and version. Its name changes
// when what it is read by does: taken.json, of DateTimeOriginal alone,
// held "none" for what DateTime dates, and the sweep removes it as any
// file of no live version.
const datesFile = "taken-2.json"

// Taken is when each picture in pics was taken, by its EXIF
// (DateTimeOriginal, else IFD0's DateTime), or the zero time when it says
// neither (or is not a JPEG), for the caller to take the file's
// modification time: the photos page orders by it. What was read once is
// kept.
func (m *Maker) Taken(user string, pics []Source) []time.Time {
	m.dates.Lock()
	defer m.dates.Unlock()
	index := m.loadDates(user)
	changed := false
	out := make([]time.Time, len(pics))
	for i, src := range pics {
		key := fmt.Sprintf("%016x-%s", src.ID, src.Version)
		when, ok := index[key]
		if !ok {
			when = takenOf(src)
			index[key], changed = when, true
		}
		if when != 0 {
			out[i] = time.Unix(when, 0).UTC()
		}
	}
	if changed {
		m.saveDates(user, index)
	}
	return out
}

// takenOf reads a picture's EXIF date (probeJPEG's taken): 0 for none.
func takenOf(src Source) int64 {
	f, err := src.Open()
	if err != nil {
		return 0
	}
	defer f.Close()
	info, err := probeJPEG(f)
	if err != nil || info.taken.IsZero() {
		return 0
	}
	return info.taken.Unix()
}

func (m *Maker) datesPath(user string) (string, error) {
	dir, err := m.Store.OwnDir("previews")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, user, datesFile), nil
}

func (m *Maker) loadDates(user string) map[string]int64 {
	index := map[string]int64{}
	if name, err := m.datesPath(user); err == nil {
		if b, err := os.ReadFile(name); err == nil {
			json.Unmarshal(b, &index) // damaged: read again from the photos
		}
	}
	return index
}

func (m *Maker) saveDates(user string, index map[string]int64) {
	name, err := m.datesPath(user)
	if err != nil {
		return
	}
	b, err := json.Marshal(index)
	if err == nil {
		err = writeCache(name, b)
	}
	if err != nil { // a cache: read again from the photos next time
		m.Log.Warn("photo dates not kept", "user", user, "err", err)
	}
}

// pruneDates drops the dates of what no file has any more.
func (m *Maker) pruneDates(user string, live map[string]bool) {
	m.dates.Lock()
	defer m.dates.Unlock()
	index := m.loadDates(user)
	n := len(index)
	for k := range index {
		if !live[k] {
			delete(index, k)
		}
	}
	if len(index) != n {
		m.saveDates(user, index)
	}
}
