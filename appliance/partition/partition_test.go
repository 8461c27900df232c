package partition

import (
	"encoding/binary"
	"testing"
)

func TestPartUUID(t *testing.T) {
	if got := PartUUID(0x0b0e5eed, 1); got != "0b0e5eed-01" {
		t.Errorf("PartUUID = %q", got)
	}
	sig, n, err := ParsePartUUID("0B0E5EED-02")
	if err != nil || sig != 0x0b0e5eed || n != 2 {
		t.Errorf("ParsePartUUID = %x %d %v", sig, n, err)
	}
	for _, bad := range []string{"", "0b0e5eed", "0b0e5eed-05", "0b0e5eed-00", "xyz0000-01", "12345678-9abc-def0-1234-56789abcdef0"} {
		if _, _, err := ParsePartUUID(bad); err == nil {
			t.Errorf("ParsePartUUID(%q) took it", bad)
		}
	}
	if Name("mmcblk1", 2) != "mmcblk1p2" || Name("vdb", 2) != "vdb2" || Name("sda", 1) != "sda1" {
		t.Error("Name")
	}
}

func TestMBR(t *testing.T) {
	mbr := make([]byte, SectorSize)
	if _, ok := Signature(mbr); ok {
		t.Error("a zeroed sector reads as an MBR")
	}
	binary.LittleEndian.PutUint32(mbr[440:], 0x0b0e5eed)
	binary.LittleEndian.PutUint32(mbr[462+8:], 526336)
	binary.LittleEndian.PutUint32(mbr[462+12:], 131072)
	mbr[510], mbr[511] = 0x55, 0xaa
	if sig, ok := Signature(mbr); !ok || sig != 0x0b0e5eed {
		t.Errorf("Signature = %x %v", sig, ok)
	}
	if p := Entry(mbr, 2); p != (Part{526336 * 512, 131072 * 512}) {
		t.Errorf("Entry 2 = %+v", p)
	}
}
