package calendars

import (
	"os"
	"path/filepath"
	"strings"
)

// What parsing an object keeps, measured with go-ical and go-vcard
// (TestParseCost holds the estimate above what they allocate beside the
// copies of parameter values, which are garbage as soon as made and are
// bounded apart, by maxParamCopies): a few bytes per byte of text
// (the line read, then the value kept), about 270 bytes per property (its
// struct, its name and the map it is filed in) and about 140 per
// parameter value (a map entry and a slice). A typical event of 900 bytes
// allocates 18 bytes per byte; a flat object of short properties 38.
const (
	costPerByte      = 8
	costPerProperty  = 320
	costPerParam     = 160
	costPerComponent = 1024
)

// parseCost is what decoding an object of shape sh allocates, at most.
func parseCost(sh shape) int64 {
	return costPerByte*sh.bytes + costPerProperty*sh.properties + costPerParam*sh.params + costPerComponent*sh.components
}

// putCost is a PUT's draw: the object parsed twice (checked here, then
// by go-webdav), encoded again, and the body and the encoding held.
func putCost(sh shape) int64 { return 2*parseCost(sh) + 3*sh.bytes }

// readCostPerByte is a stored object read and parsed for an answer, per
// byte of it: the parse of the costliest shape the limits take (73 bytes
// a byte measured by TestParseCost, for a flat object of short lines; a
// typical event 37) and its text in the answer. Stored objects were
// checked (checkShape) as they were put, and are not counted line by line
// again.
const readCostPerByte = 80

// expandCost is what a query's expansion of recurrences holds at most:
// one period's instances from rrule-go (maxTimeset times a year of days)
// and the EXDATEs of one component (maxInstances).
const expandCost = 1 << 20

// readCost is the draw of an answer that reads and parses objects of
// collection t: the named ones (a multiget), or every one. (go-webdav
// holds every matched object parsed until it writes the answer; only an
// answer written as a stream would hold less.)
func (s *Store) readCost(t target, names []string) int64 {
	dir, err := s.collDir(t.kind, t.owner, t.ocoll)
	if s.Memory == nil || err != nil {
		return 0
	}
	var n int64
	if names == nil {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), t.kind.ext()) && e.Type().IsRegular() {
				if fi, err := e.Info(); err == nil {
					n += fi.Size()
				}
			}
		}
	}
	// A name not found here may be an object of another collection (a
	// multiget's hrefs may name any the user reads): the most one can be.
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		} else {
			n += s.Limits.Object
		}
	}
	return n * readCostPerByte
}

// reportCost is a REPORT's draw: the objects a multiget names, or every
// object of the collection and the expansion of a query.
func (s *Store) reportCost(t target, body []byte) int64 {
	names := multigetNames(body)
	if names != nil {
		return s.readCost(t, names)
	}
	return s.readCost(t, nil) + expandCost
}
