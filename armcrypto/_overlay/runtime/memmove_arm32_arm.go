// bonesync's armcrypto overlay: added to the runtime for GOARCH=arm (see
// armcrypto/main.go). Not compiled on its own.

package runtime

import (
	"internal/cpu"
	"unsafe"
)

// memmoveNEON is whether memmove (memmove_arm32_arm.s) may copy
// misaligned bytes with NEON: the kernel reports it (HWCAP_NEON). It is
// false, and every copy the runtime's own, until the runtime's init runs.
var memmoveNEON bool

func init() { memmoveNEON = cpu.HWCap&(1<<12) != 0 }

// memmoveGeneric is the runtime's memmove (memmove_arm.s, its TEXT
// renamed by the overlay), where memmove sends every other copy and the
// tail of a NEON one.
//
//go:noescape
func memmoveGeneric(to, from unsafe.Pointer, n uintptr)
