//go:build bonesync_failserve

package main

// A build whose server exits at once: the broken update that the update
// test (image/update_vm_test.go) applies, to see the box come back to the
// previous version by itself. Never in a release: only with this tag.
func init() { serveFails = true }
