// bonesync's armcrypto overlay: added to golang.org/x/crypto/chacha20 when
// armcrypto's tests run it (armcrypto/main.go). Not compiled on its
// own.

package chacha20

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The build's xorKeyStreamBlocks (NEON on arm) against the untouched
// generic one: random keys, nonces, counters (up to the last blocks
// before the counter wraps) and lengths, in place and not, through
// XORKeyStream in random pieces.
func TestXORKeyStreamArm32Differential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 2000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		key := make([]byte, KeySize)
		nonce := make([]byte, NonceSize)
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		for j := range nonce {
			nonce[j] = byte(rng.Uint32())
		}
		size := rng.IntN(3000)
		if i%20 == 0 {
			size = rng.IntN(70000)
		}
		src := make([]byte, size)
		for j := range src {
			src[j] = byte(rng.Uint32())
		}
		fast, _ := NewUnauthenticatedCipher(key, nonce)
		ref, _ := NewUnauthenticatedCipher(key, nonce)
		var counter uint32
		switch i % 4 {
		case 1:
			counter = rng.Uint32() >> 8
		case 2:
			counter = 1<<32 - 1 - uint32(size/64) - 3 // near the end
		}
		fast.SetCounter(counter)
		ref.SetCounter(counter)
		want := make([]byte, size)
		for j := 0; j < size; j += blockSize {
			end := min(j+blockSize, size)
			buf := make([]byte, blockSize)
			copy(buf, src[j:end])
			ref.xorKeyStreamBlocksGeneric(buf, buf)
			copy(want[j:end], buf)
			ref.counter = counter + uint32(j/blockSize) + 1
		}
		got := make([]byte, size)
		inPlace := i%3 == 0
		if inPlace {
			copy(got, src)
		}
		for rest := 0; rest < size; {
			k := rest + rng.IntN(size-rest+1)
			if i%5 == 0 {
				k = size
			}
			if inPlace {
				fast.XORKeyStream(got[rest:k], got[rest:k])
			} else {
				fast.XORKeyStream(got[rest:k], src[rest:k])
			}
			rest = k
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: %d bytes from counter %d (in place %v): the key stream differs", i, size, counter, inPlace)
		}
	}
}
