package main

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
)

// The lint fails on the dropped errors planted in testdata/src/planted
// (among them `data, _ := json.Marshal(x)`, the share book's bug), and on
// nothing else there: each `// want` must be reported, and every report
// must be wanted.
func TestPlanted(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), Analyzer, "planted")
}
