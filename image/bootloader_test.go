package main

import (
	"os"
	"slices"
	"testing"

	"github.com/bonesync/bonesync/board"
)

func TestScriptCommands(t *testing.T) {
	got := scriptCommands("# c\nif load a b; then echo \"x; not this\"; fi\nif load a b; then\n\tenv import x; fi\nfor s in a b; do echo \"x ${s}\"; done\nif test -n x && bootz 1; then setenv y; fi\n")
	if want := []string{"bootz", "echo", "env", "load", "setenv", "test"}; !slices.Equal(got, want) {
		t.Errorf("scriptCommands = %v, want %v", got, want)
	}
}

// QEMU's U-Boot has every command the boot script uses (the board's is
// checked by every image build, which fails without them); a U-Boot
// without fatwrite does not pass.
func TestBootloaderCheck(t *testing.T) {
	virt, _ := board.Load("qemu-virt")
	check := func(name string, bin []byte) {
		for _, c := range CheckBootloader(bin) {
			if !c.OK {
				t.Errorf("%s: %s missing", name, c.What)
			}
		}
	}
	bin, err := os.ReadFile(virt.UBoot)
	if err != nil {
		t.Skipf("QEMU's U-Boot: %v (scripts/install-test-deps.sh)", err)
	}
	check("qemu_arm", bin)
	crippled := []byte(string(bin))
	for i := range len(crippled) - 32 {
		if string(crippled[i:i+32]) == "write file into a dos filesystem" {
			crippled[i] = 'W'
		}
	}
	bad := 0
	for _, c := range CheckBootloader(crippled) {
		if !c.OK {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("a U-Boot without fatwrite: %d checks fail, want 1", bad)
	}
}
