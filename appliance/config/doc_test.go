package config

import (
	"os"
	"strings"
	"testing"
)

// The config reference (docs/config.md) holds Example() as it is: a
// setting added, removed or explained anew here must be there too.
func TestConfigDocCurrent(t *testing.T) {
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, after, ok1 := strings.Cut(doc, "<!-- config-example: begin")
	block, _, ok2 := strings.Cut(after, "<!-- config-example: end")
	_, block, ok3 := strings.Cut(block, "```\n")
	block, _, ok4 := strings.Cut(block, "```\n")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatal("docs/config.md lacks its generated block (between the config-example markers)")
	}
	if block != Example() {
		t.Error("docs/config.md is stale: run make docs")
	}
}
