package server

import (
	"reflect"
	"testing"

	"github.com/bonesync/bonesync/appliance/choose"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/report"
)

// The report is kept as JSON and shown as it was given, with the
// server's own URLs.
func TestCurrentReport(t *testing.T) {
	rep := &report.Report{DurationS: 41.5, HostKeyFingerprint: "SHA256:abc", Notes: []string{"quick"}, Choice: choose.Choice{TLSPostQuantum: true}}
	rep.Policy.TargetMs = 150
	rep.Machine.CPU = "ARMv7 Processor rev 2 (v7l)"
	rep.URLs = []string{"https://old.example"}
	c := newCurrent(&provision.Box{Report: rep, Choice: rep.Choice}, []string{"https://bonesync.local"})
	if c.get().Report != nil || len(c.report) == 0 {
		t.Fatalf("the box keeps its parsed report (%v) or no JSON (%d bytes)", c.get().Report != nil, len(c.report))
	}
	got := c.Report()
	want := *rep
	want.URLs = []string{"https://bonesync.local"}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("Report() = %+v, want %+v", got, &want)
	}
	if !c.postQuantum() {
		t.Error("the box's choice lost")
	}
}
