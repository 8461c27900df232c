package boot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/datadisk"
)

// What `emmc` says the eMMC holds, from its first sectors: blank, a flash
// a power cut stopped (the boot partition's start, no table), or another
// system's table.
func TestEMMCHolds(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "emmc")
	write := func(b []byte, off int64) {
		f, err := os.OpenFile(disk, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	write(make([]byte, 2<<20), 0)
	none := filepath.Join(dir, "no-partition")
	if got := emmcHolds(disk, none); got != "nothing (blank)" {
		t.Errorf("a blank eMMC holds %q", got)
	}
	write([]byte("FAT32   "), 1<<20+82)
	if got := emmcHolds(disk, none); !strings.HasPrefix(got, "a copy that did not finish") {
		t.Errorf("a cut flash holds %q", got)
	}
	write([]byte{0x55, 0xaa}, 510)
	if got := emmcHolds(disk, none); !strings.HasPrefix(got, "another system") {
		t.Errorf("an eMMC with a table and no bonesync holds %q", got)
	}
	write([]byte{0xed, 0x5e, 0x0e, 0x0b}, 440)
	data := filepath.Join(dir, "data")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := datadisk.Mkfs(f, 64<<20, datadisk.Format{Label: DataLabel, Now: time.Unix(1e9, 0)}); err != nil {
		t.Fatal(err)
	}
	if got := emmcHolds(disk, data); got != "a bonesync system (boot partition 0b0e5eed-01)" {
		t.Errorf("a flashed eMMC holds %q", got)
	}
}
