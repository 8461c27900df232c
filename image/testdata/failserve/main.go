// Command failserve is the update test's broken update whose server exits
// at start: bonesync's own PID 1 (package boot), which supervises a server
// that never serves, so that the box comes back to the previous version by
// itself. It lives with the test data: no release carries it, and the
// shipped binary has no switch for it.
package main

import (
	"fmt"
	"os"

	"github.com/bonesync/bonesync/appliance/boot"
)

// Version is set by the test's build, as the Makefile sets bonesync's.
var Version string

func main() {
	if os.Getpid() == 1 {
		if Version != "" {
			boot.Version = Version
		}
		boot.Main() // never returns
	}
	fmt.Fprintln(os.Stderr, "failserve: this build's server exits at start (the update test's broken update)")
	os.Exit(1)
}
