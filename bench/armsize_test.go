package main

import "testing"

// A symbol's name says its package, and the build info its module.
func TestModuleOfSymbol(t *testing.T) {
	mods := []string{"github.com/bonesync/bonesync", "github.com/rclone/rclone", "gopkg.in/yaml.v3", "golang.org/x/crypto", "golang.org/x/crypto/x509roots/fallback"}
	for name, want := range map[string]string{
		"github.com/rclone/rclone/fs/sync.(*syncCopyMove).run":       "github.com/rclone/rclone",
		"type:*github.com/rclone/rclone/fs.Fs":                       "github.com/rclone/rclone",
		"go:itab.*github.com/rclone/rclone/fs/hash.x,io.Writer":      "github.com/rclone/rclone",
		"gopkg.in/yaml%2ev3.(*parser).parse":                         "gopkg.in/yaml.v3",
		"golang.org/x/crypto/x509roots/fallback/bundle..gobytes.1":   "golang.org/x/crypto/x509roots/fallback",
		"golang.org/x/crypto/ssh.(*Client).Dial":                     "golang.org/x/crypto",
		"slices.SortFunc[go.shape.[]github.com/rclone/rclone/fs.Fs]": "Go",
		"vendor/golang.org/x/net/idna.idnaValues":                    "Go",
		"runtime.mheap_": "Go",
		"github.com/bonesync/bonesync/appliance/copies/engine.(*Copier).Run": "github.com/bonesync/bonesync",
		"go:func.*":         unnamed,
		"go:string.\"abc\"": unnamed,
	} {
		if got := moduleOf(packageOf(name), mods); got != want {
			t.Errorf("moduleOf(packageOf(%q)) = %q, want %q", name, got, want)
		}
	}
}
