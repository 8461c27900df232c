// Command droppederr is the project's own lint for the one kind of error
// that loses data silently: the error of an encoder, a write, a sync, a
// rename or a close of a file written, dropped. Year 10000 once made
// `data, _ := json.Marshal(book)` fail, and the share book was written
// empty. `make test-unit` runs it over the shipped packages.
//
// It reports a call to one of the functions below whose error result is
// not used: the call made as a statement (or deferred), or its error
// assigned to _. A Close of an *os.File is reported only in a function
// that also writes or syncs that file (closing a file only read loses
// nothing). A drop that is meant (the cleanup of a write that already
// failed, a cache that may be lost) says so with a comment on its line or
// the line before: `// dropped: WHY`.
package main

import "golang.org/x/tools/go/analysis/singlechecker"

func main() { singlechecker.Main(Analyzer) }
