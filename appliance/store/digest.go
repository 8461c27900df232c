package store

import (
	"crypto/sha1"
	"hash"
)

// newSHA1 makes the hash every upload's SHA-1 digest is computed with as
// its bytes stream in. This file is alone on purpose: `make bench`
// measures what the digest costs against a build in which it is replaced
// (go build -overlay) by bench/_nohash/digest.go, which hashes nothing.
func newSHA1() hash.Hash { return sha1.New() }
