// bonesync's armcrypto overlay: added to golang.org/x/crypto/internal/poly1305
// when armcrypto's tests run it (armcrypto/main.go). Not compiled on
// its own.

// (armcrypto/main.go puts the constraint of the file the code under
// test replaces here.)
//go:build arm || purego || !gc

package poly1305

import (
	"math/rand/v2"
	"testing"
)

// The 26-bit MAC against the untouched 64-bit sumGeneric: random keys
// (including all-ones, the largest r), messages of every length up to
// 300 bytes and longer ones, written in random pieces.
func TestMAC26Differential(t *testing.T) {
	// Both paths: the full blocks two at a time (the NEON lanes, or their
	// Go form) and one at a time.
	// (Not the NEON lanes on a core without NEON.)
	defer func(v bool) { useNEON = v }(useNEON)
	for _, pairs := range []bool{useNEON || pairsInGo, false} {
		useNEON = pairs
		testMAC26(t)
	}
}

func testMAC26(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for i := 0; i < n; i++ {
		var key [32]byte
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		if i%7 == 0 {
			for j := range key {
				key[j] = 0xff
			}
		}
		size := i % 301
		if i%50 == 0 {
			size = rng.IntN(70000)
		}
		msg := make([]byte, size)
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		if i%11 == 0 {
			for j := range msg {
				msg[j] = 0xff
			}
		}
		var want, got [TagSize]byte
		sumGeneric(&want, msg, &key)
		m := New(&key)
		for rest := msg; len(rest) > 0; {
			k := rng.IntN(len(rest) + 1)
			if i%3 == 0 {
				k = len(rest)
			}
			m.Write(rest[:k])
			rest = rest[k:]
		}
		copy(got[:], m.Sum(nil))
		if got != want {
			t.Fatalf("pairs %v, key %x, %d-byte message: tag %x, want %x", useNEON, key, len(msg), got, want)
		}
	}
}
