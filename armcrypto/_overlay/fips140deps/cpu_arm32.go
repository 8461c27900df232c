// bonesync's armcrypto overlay: added to the standard library's
// crypto/internal/fips140deps/cpu for GOARCH=arm (see armcrypto/main.go).
// Not compiled on its own.

//go:build arm

package cpu

import "internal/cpu"

// hwcapNEON is Linux's HWCAP_NEON.
const hwcapNEON = 1 << 12

// ARMHasNEON is whether the kernel reports NEON: the FIPS module's
// packages may not read internal/cpu themselves, and SHA-512's NEON
// block (crypto/internal/fips140/sha512) asks here.
var ARMHasNEON = cpu.HWCap&hwcapNEON != 0
