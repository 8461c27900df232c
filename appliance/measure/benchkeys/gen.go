//go:build ignore

// gen makes the benchmark-only keys embedded in the binary, so that the first
// boot of a slow board does not spend minutes generating RSA-4096 keys only to
// throw them away. They are public: never serve with them.
//
//	go generate ./appliance/measure/benchkeys
package main

import (
	"crypto/rand"
	"log"
	"os"

	"github.com/bonesync/bonesync/appliance/keys"
)

func main() {
	for _, t := range keys.Types {
		n := t.Name
		k, err := keys.Generate(n, rand.Reader)
		if err != nil {
			log.Fatal(err)
		}
		b, err := keys.MarshalPEM(k)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(string(n)+".pem", b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
