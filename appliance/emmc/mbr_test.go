package emmc

import (
	"encoding/binary"
	"testing"

	"github.com/bonesync/bonesync/appliance/partition"
)

// The eMMC's table: the card's boot entry as it is, a data partition to
// the end, its own signature.
func TestNewMBR(t *testing.T) {
	card := make([]byte, 512)
	e := card[446:]
	e[0], e[4] = 0x80, 0x0c
	binary.LittleEndian.PutUint32(e[8:], 2048)
	binary.LittleEndian.PutUint32(e[12:], 256<<11)
	binary.LittleEndian.PutUint32(card[440:], 0x0b0e5eed)
	card[510], card[511] = 0x55, 0xaa
	boot := partition.Entry(card, 1)
	if boot != (partition.Part{Start: 1 << 20, Size: 256 << 20}) {
		t.Fatalf("the card's boot partition = %+v", boot)
	}
	data := DataPart(boot, 4<<30-12345)
	if data.Start != 257<<20 || data.Size != 4<<30-257<<20-1<<20 {
		t.Errorf("DataPart = %+v", data)
	}
	sig, err := NewSignature(0x0b0e5eed)
	if err != nil || sig == 0 || sig == 0x0b0e5eed {
		t.Fatalf("NewSignature = %x %v", sig, err)
	}
	mbr, err := NewMBR(card, sig, data)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := partition.Signature(mbr); !ok || got != sig {
		t.Errorf("Signature = %x %v, want %x", got, ok, sig)
	}
	if string(mbr[446:462]) != string(card[446:462]) {
		t.Error("the boot entry is not the card's")
	}
	p2 := mbr[462:]
	if p2[0] != 0 || p2[4] != 0x83 || int64(binary.LittleEndian.Uint32(p2[8:]))*512 != data.Start || int64(binary.LittleEndian.Uint32(p2[12:]))*512 != data.Size {
		t.Errorf("partition 2 = % x", p2[:16])
	}
	if _, err := NewMBR(make([]byte, 512), sig, data); err == nil {
		t.Error("a card without an MBR was taken")
	}
}
