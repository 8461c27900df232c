// Package emmc copies the running system from the card to the board's
// eMMC (the console's `emmc flash`): the boot partition sector for sector,
// read back past every cache and compared, and a data partition with a
// fresh ext4 (datadisk.Mkfs) that the caller fills with the state; the
// partition table, which makes the eMMC bootable, is written last. It
// knows disks and partitions, not PID 1: what to copy into the data
// partition, and stopping the server meanwhile, are the caller's.
package emmc

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// An MBR's fields, as the AM335x ROM, U-Boot and Linux read them.
const (
	sectorSize = 512
	sigOffset  = 440 // the disk signature, little-endian
	partTable  = 446 // four 16-byte entries
)

// Signature is the disk signature of the MBR in sector, ok false if the
// sector holds no MBR (no 0x55AA at its end).
func Signature(sector []byte) (sig uint32, ok bool) {
	if len(sector) < sectorSize || sector[510] != 0x55 || sector[511] != 0xaa {
		return 0, false
	}
	return binary.LittleEndian.Uint32(sector[sigOffset:]), true
}

// PartUUID is partition n's PARTUUID on a disk with the MBR signature
// sig, as Linux and U-Boot's `part uuid` write it: SSSSSSSS-PP.
func PartUUID(sig uint32, n int) string { return fmt.Sprintf("%08x-%02x", sig, n) }

// ParsePartUUID reads an MBR PARTUUID (SSSSSSSS-PP, either case).
func ParsePartUUID(s string) (sig uint32, n int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok || len(a) != 8 || len(b) != 2 {
		return 0, 0, fmt.Errorf("PARTUUID %q is not an MBR's (SSSSSSSS-PP)", s)
	}
	s32, err := strconv.ParseUint(a, 16, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("PARTUUID %q: %w", s, err)
	}
	p, err := strconv.ParseUint(b, 16, 8)
	if err != nil || p < 1 || p > 4 {
		return 0, 0, fmt.Errorf("PARTUUID %q: no primary partition %s", s, b)
	}
	return uint32(s32), int(p), nil
}

// PartName is the kernel's name for partition n of disk: sda2, vdb2,
// mmcblk1p2.
func PartName(disk string, n int) string {
	if last := disk[len(disk)-1]; last >= '0' && last <= '9' {
		return fmt.Sprintf("%sp%d", disk, n)
	}
	return fmt.Sprintf("%s%d", disk, n)
}

// Part is a primary partition, in bytes.
type Part struct {
	Start, Size int64
}

// NewMBR is the eMMC's partition table: the card's first entry as it is
// (the active FAT boot partition, where the ROM finds MLO), a Linux data
// partition, and the eMMC's own disk signature, so that its PARTUUIDs are
// not the card's.
func NewMBR(card []byte, sig uint32, data Part) ([]byte, error) {
	if _, ok := Signature(card); !ok {
		return nil, fmt.Errorf("the card has no MBR")
	}
	if data.Start%sectorSize != 0 || data.Size%sectorSize != 0 || data.Size <= 0 {
		return nil, fmt.Errorf("data partition %+v is not whole sectors", data)
	}
	mbr := make([]byte, sectorSize)
	copy(mbr[partTable:partTable+16], card[partTable:partTable+16])
	binary.LittleEndian.PutUint32(mbr[sigOffset:], sig)
	e := mbr[partTable+16 : partTable+32]
	e[0] = 0 // not active
	copy(e[1:4], []byte{0xfe, 0xff, 0xff})
	e[4] = 0x83
	copy(e[5:8], []byte{0xfe, 0xff, 0xff})
	binary.LittleEndian.PutUint32(e[8:], uint32(data.Start/sectorSize))
	binary.LittleEndian.PutUint32(e[12:], uint32(data.Size/sectorSize))
	mbr[510], mbr[511] = 0x55, 0xaa
	return mbr, nil
}

// BootPart is the first partition an MBR names, in bytes.
func BootPart(mbr []byte) Part {
	e := mbr[partTable:]
	return Part{Start: int64(binary.LittleEndian.Uint32(e[8:])) * sectorSize, Size: int64(binary.LittleEndian.Uint32(e[12:])) * sectorSize}
}

// DataPart is where the eMMC's data partition goes: from the first MiB
// after the boot partition to the last whole MiB of a disk of size bytes.
func DataPart(boot Part, size int64) Part {
	const mib = 1 << 20
	start := (boot.Start + boot.Size + mib - 1) / mib * mib
	return Part{Start: start, Size: max(0, (size-start)/mib*mib)}
}
