//go:build benchnohash

package store

// The build `make bench` measures upload CPU against: uploads are not
// hashed, so the figure shows what hashing as the bytes stream costs. Never
// shipped.
func init() { digests = false }
