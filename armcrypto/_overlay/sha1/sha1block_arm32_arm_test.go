// bonesync's armcrypto overlay: added to crypto/sha1 when armcrypto's
// tests run it under qemu-arm (armcrypto/main.go). Not compiled on its
// own.

//go:build !purego

package sha1

import (
	"internal/cpu"
	"math/rand/v2"
	"testing"
)

// The differential test must have run the NEON code where the board's
// core would: qemu-arm's Cortex-A8 reports NEON.
func TestNEONTested(t *testing.T) {
	if !useNEON && cpu.Platform >= "v7" {
		t.Fatal("an ARMv7 core without NEON reported (HWCAP): the NEON path went untested")
	}
}

// Both paths of block against Go's blockGeneric, from random digests over
// random data of 0 to 40 blocks (and a partial block, which is left
// alone), at eight alignments. The fallback is called directly, since
// qemu-arm's Cortex-A8 reports NEON; on a core without it only the
// fallback is compared.
func TestBlockPathsDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 41*chunk+8)
	for i := 0; i < 3000; i++ {
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		off := i % 8
		n := rng.IntN(41)*chunk + rng.IntN(2)*rng.IntN(chunk)
		if i%50 == 0 {
			n = 40 * chunk // a 0xff and 0x00 block among them
			for j := range chunk {
				buf[off+j], buf[off+chunk+j] = 0xff, 0
			}
		}
		p := buf[off : off+n]
		var want digest
		for j := range want.h {
			want.h[j] = rng.Uint32()
		}
		neon, arm := want, want
		blockGeneric(&want, p[:n&^(chunk-1)])
		blockARM(&arm, p)
		if useNEON {
			blockNEON(&neon, p)
		} else {
			neon = want
		}
		if neon.h != want.h || arm.h != want.h {
			t.Fatalf("case %d (%d bytes at offset %d): NEON %08x, ARM %08x, want %08x", i, n, off, neon.h, arm.h, want.h)
		}
	}
}
