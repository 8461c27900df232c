// Package benchkeys holds the benchmark-only keys, made once by gen.go and
// embedded in the binary. They are published in the source: they are only
// ever used to measure handshakes on loopback, never to serve.
package benchkeys

//go:generate go run gen.go

import (
	"crypto"
	"embed"
	"fmt"

	"github.com/bonesync/bonesync/appliance/keys"
)

//go:embed *.pem
var files embed.FS

// Get returns the benchmark key of the named type.
func Get(name keys.Name) (crypto.Signer, error) {
	b, err := files.ReadFile(string(name) + ".pem")
	if err != nil {
		return nil, fmt.Errorf("no benchmark key for %s", name)
	}
	return keys.ParsePEM(b)
}
