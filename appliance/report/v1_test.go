package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"testing"
)

// release01 is the state bonesync 0.1 wrote (a quick benchmark on a PC):
// report.json and decision.json exactly as they were on disk.
func release01(t *testing.T) (report, decision []byte) {
	t.Helper()
	f, err := os.Open("testdata/v1/report.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if report, err = io.ReadAll(z); err != nil {
		t.Fatal(err)
	}
	if decision, err = os.ReadFile("testdata/v1/decision.json"); err != nil {
		t.Fatal(err)
	}
	return report, decision
}

// sameJSON compares two documents as data, not as bytes.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// The files an older release wrote are read by this one, every field of
// them: written back, they are the same documents.
func TestReadsRelease01State(t *testing.T) {
	repJSON, decJSON := release01(t)
	r, err := Parse(repJSON)
	if err != nil {
		t.Fatalf("Parse(0.1's report.json): %v", err)
	}
	if len(r.TLS) == 0 || r.TLS[0].Full1 == nil || len(r.TLS[0].Full1.LatencySamples) == 0 || r.Choice.TLS.Key == "" || r.Machine.CPU == "" {
		t.Fatalf("0.1's report read as %+v", r)
	}
	again, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, repJSON, again) {
		t.Error("0.1's report.json, read and written again, is not the same document")
	}
	c, err := ParseDecision(decJSON)
	if err != nil {
		t.Fatalf("ParseDecision(0.1's decision.json): %v", err)
	}
	if c.TLS.Key != r.Choice.TLS.Key || c.SSH.Key == "" {
		t.Errorf("0.1's decision read as %+v", c)
	}
	d, err := EncodeDecision(c)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, decJSON, d) {
		t.Errorf("0.1's decision.json, read and written again, differs:\n%s\n%s", decJSON, d)
	}
	if _, err := Parse(bytes.Replace(repJSON, []byte(`"version": 1`), []byte(`"version": 9`), 1)); err == nil {
		t.Error("a report of an unknown version was read")
	}
}
