// bonesync's armcrypto overlay: added to golang.org/x/crypto/chacha20 for
// GOARCH=arm (see armcrypto/main.go). Not compiled on its own.

//go:build arm && gc && !purego

package chacha20

import "golang.org/x/sys/cpu"

// Two blocks at a time: chachaNEON's unit.
const bufSize = 2 * blockSize

// useNEON is whether the kernel reports NEON (HWCAP): every Cortex-A8
// has it, but an ARMv7 core without it runs the generic code.
var useNEON = cpu.ARM.HasNEON

// one is block B's counter step in chachaNEON.
var one = [4]uint32{1, 0, 0, 0}

// chachaNEON (chacha_arm32_arm.s, written by armcrypto/gen) XORs n bytes
// of src, a multiple of 128, with the key stream of state into dst and
// advances state's counter by n/64.
//
//go:noescape
func chachaNEON(dst, src *byte, n int, state *[16]uint32, one *[4]uint32)

// xorKeyStreamBlocks XORs whole buffers (two blocks each) of key stream.
//
// A buffer of two blocks may take the counter's last block, 2^32-1, and
// wrap the counter to 0: XORKeyStream pads a short tail to a whole buffer
// and checks only "more than two blocks left" before it does, so with the
// counter at 2^32-2 a one-block request made both blocks and left a
// counter of 0, and a later call made key stream again from block 0
// (reused; the one-block code panics there). Setting overflow makes the
// next call that needs another block panic with "counter overflow", as
// the one-block code does; the buffered tail of block 2^32-1 stays usable.
// (One difference remains, on the safe side: SetCounter(2^32-1) after
// such a read panics, where the one-block code allows it.)
func (s *Cipher) xorKeyStreamBlocks(dst, src []byte) {
	if uint64(s.counter)+uint64(len(src)/blockSize) >= 1<<32 {
		s.overflow = true // XORKeyStream reads it only on its next call
	}
	if !useNEON || len(src) == 0 {
		s.xorKeyStreamBlocksGeneric(dst, src)
		return
	}
	if len(dst) != len(src) || len(src)%bufSize != 0 {
		panic("chacha20: internal error: wrong dst and/or src length")
	}
	state := [16]uint32{j0, j1, j2, j3,
		s.key[0], s.key[1], s.key[2], s.key[3], s.key[4], s.key[5], s.key[6], s.key[7],
		s.counter, s.nonce[0], s.nonce[1], s.nonce[2]}
	chachaNEON(&dst[0], &src[0], len(src), &state, &one)
	s.counter = state[12]
}
