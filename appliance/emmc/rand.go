package emmc

import "crypto/rand"

// randReader makes the eMMC's disk signature and file-system UUID.
var randReader = rand.Reader

// NewSignature is a disk signature for the eMMC: random, not 0, not the
// card's.
func NewSignature(card uint32) (uint32, error) {
	b := make([]byte, 4)
	for {
		if _, err := randReader.Read(b); err != nil {
			return 0, err
		}
		s := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		if s != 0 && s != card {
			return s, nil
		}
	}
}
