package emmc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/bonesync/bonesync/appliance/partition"
)

// The boot partition's copy: the card's bytes at the same place, the
// patch in, and the read-back's digest the same; a byte changed on the
// eMMC after is caught.
func TestCopyBootAndVerify(t *testing.T) {
	dir := t.TempDir()
	boot := partition.Part{Start: 1 << 20, Size: 3<<20 + 4096}
	src := make([]byte, boot.Start+boot.Size)
	rand.New(rand.NewSource(1)).Read(src)
	cardPath, emmcPath := filepath.Join(dir, "card"), filepath.Join(dir, "emmc")
	os.WriteFile(cardPath, src, 0o644)
	os.WriteFile(emmcPath, make([]byte, len(src)), 0o644)
	card, _ := os.Open(cardPath)
	defer card.Close()
	dev, _ := os.OpenFile(emmcPath, os.O_RDWR, 0)
	defer dev.Close()
	patch := bytes.Repeat([]byte{'e'}, 512)
	patchAt := int64(2<<20 + 512)
	sum, err := copyBoot(context.Background(), card, dev, boot, patchAt, patch, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), src[boot.Start:]...)
	copy(want[patchAt:], patch)
	if s := sha256.Sum256(want); !bytes.Equal(sum, s[:]) {
		t.Error("copyBoot's digest is not the patched partition's")
	}
	got, _ := os.ReadFile(emmcPath)
	if !bytes.Equal(got[boot.Start:], want) || !bytes.Equal(got[:boot.Start], make([]byte, boot.Start)) {
		t.Error("the eMMC does not hold the patched partition at its place")
	}
	if err := verify(emmcPath, boot, sum); err != nil {
		t.Errorf("verify of a good copy: %v", err)
	}
	dev.WriteAt([]byte{got[boot.Start+77] ^ 1}, boot.Start+77)
	if err := verify(emmcPath, boot, sum); err == nil {
		t.Error("verify took a copy with a byte flipped")
	}
}
