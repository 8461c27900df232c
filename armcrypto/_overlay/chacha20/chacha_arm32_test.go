// bonesync's armcrypto overlay: added to golang.org/x/crypto/chacha20 when
// armcrypto's tests run it (armcrypto/main.go). Not compiled on its
// own.

package chacha20

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// randomKeyNonce is a key and a nonce drawn from rng.
func randomKeyNonce(rng *rand.Rand) (key, nonce []byte) {
	key, nonce = make([]byte, KeySize), make([]byte, NonceSize)
	for j := range key {
		key[j] = byte(rng.Uint32())
	}
	for j := range nonce {
		nonce[j] = byte(rng.Uint32())
	}
	return key, nonce
}

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
		key, nonce := randomKeyNonce(rng)
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

// At the counter's end: a stream that starts a few blocks before the
// counter wraps, read in random pieces, gives exactly the key stream of
// blocks up to 2^32-1 and then panics with "counter overflow" on the call
// that needs one more block, where the one-block code (amd64's) panics.
// Before the fix, a short read with the counter at 2^32-2 made both of the
// buffer's blocks, left the counter at 0 without overflow, and a later
// call reused the key stream of block 0.
func TestCounterEndArm32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 4000
	if testing.Short() {
		n = 1000
	}
	for i := 0; i < n; i++ {
		key, nonce := randomKeyNonce(rng)
		left := 1 + rng.IntN(6) // blocks before the counter wraps
		start := uint32(1<<32 - uint64(left))
		// The model: the key stream of blocks start..2^32-1, one block at
		// a time by the untouched generic code.
		ref, _ := NewUnauthenticatedCipher(key, nonce)
		stream := make([]byte, left*blockSize)
		for b := range left {
			ref.counter = start + uint32(b)
			ref.xorKeyStreamBlocksGeneric(stream[b*blockSize:(b+1)*blockSize], stream[b*blockSize:(b+1)*blockSize])
		}
		c, _ := NewUnauthenticatedCipher(key, nonce)
		c.SetCounter(start)
		inPlace := i%2 == 0
		used := 0
		for call := 0; call < 30; call++ {
			size := rng.IntN(200)
			if call%7 == 6 {
				size = rng.IntN(5)
			}
			src := make([]byte, size)
			for j := range src {
				src[j] = byte(rng.Uint32())
			}
			dst := make([]byte, size)
			if inPlace {
				copy(dst, src)
			}
			panicked := func() (p bool) {
				defer func() {
					if r := recover(); r != nil {
						if r != "chacha20: counter overflow" {
							t.Fatalf("case %d: panic %v", i, r)
						}
						p = true
					}
				}()
				if inPlace {
					c.XORKeyStream(dst, dst)
				} else {
					c.XORKeyStream(dst, src)
				}
				return false
			}()
			over := used+size > len(stream)
			if panicked != over {
				t.Fatalf("case %d (%d blocks left), call %d: %d bytes after %d: panicked %v, want %v", i, left, call, size, used, panicked, over)
			}
			if over {
				break
			}
			for j := range size {
				if dst[j] != src[j]^stream[used+j] {
					t.Fatalf("case %d (%d blocks left), call %d: byte %d of %d after %d differs from the key stream", i, left, call, j, size, used)
				}
			}
			used += size
		}
	}
}
