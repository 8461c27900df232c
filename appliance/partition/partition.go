// Package partition reads MBR partition tables as the AM335x ROM, U-Boot
// and Linux read them, names partitions as the kernel does, and tells the
// kernel of a partition without the disk's table (BLKPG): for PID 1's
// card (its PARTUUID, growing its data partition) and the eMMC flash.
package partition

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// An MBR's fields.
const (
	SectorSize = 512
	sigOffset  = 440 // the disk signature, little-endian
	tableAt    = 446 // four 16-byte entries
)

// Part is a primary partition, in bytes.
type Part struct {
	Start, Size int64
}

// Signature is the disk signature of the MBR in sector, ok false if the
// sector holds no MBR (no 0x55AA at its end).
func Signature(sector []byte) (sig uint32, ok bool) {
	if len(sector) < SectorSize || sector[510] != 0x55 || sector[511] != 0xaa {
		return 0, false
	}
	return binary.LittleEndian.Uint32(sector[sigOffset:]), true
}

// Entry is partition n (1 to 4) of the MBR in sector, in bytes.
func Entry(sector []byte, n int) Part {
	e := sector[tableAt+16*(n-1):]
	return Part{Start: int64(binary.LittleEndian.Uint32(e[8:])) * SectorSize, Size: int64(binary.LittleEndian.Uint32(e[12:])) * SectorSize}
}

// SetEntry writes partition n (1 to 4) of the MBR in sector: its type
// (0x0c FAT32 LBA, 0x83 Linux), whether it is the active (boot) one, and
// where it is; the CHS fields say "use LBA", as Linux's tools write them.
// It makes the sector an MBR (0x55AA), and keeps the other entries.
func SetEntry(sector []byte, n int, typ byte, active bool, p Part) {
	e := sector[tableAt+16*(n-1) : tableAt+16*n]
	e[0] = 0
	if active {
		e[0] = 0x80
	}
	copy(e[1:4], []byte{0xfe, 0xff, 0xff})
	e[4] = typ
	copy(e[5:8], []byte{0xfe, 0xff, 0xff})
	binary.LittleEndian.PutUint32(e[8:], uint32(p.Start/SectorSize))
	binary.LittleEndian.PutUint32(e[12:], uint32(p.Size/SectorSize))
	sector[510], sector[511] = 0x55, 0xaa
}

// SetSize changes partition n's size in the MBR in sector, keeping the
// rest of its entry.
func SetSize(sector []byte, n int, size int64) {
	binary.LittleEndian.PutUint32(sector[tableAt+16*(n-1)+12:], uint32(size/SectorSize))
}

// SetSignature writes the MBR's disk signature.
func SetSignature(sector []byte, sig uint32) {
	binary.LittleEndian.PutUint32(sector[sigOffset:], sig)
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

// Name is the kernel's name for partition n of disk: sda2, vdb2,
// mmcblk1p2.
func Name(disk string, n int) string {
	if last := disk[len(disk)-1]; last >= '0' && last <= '9' {
		return fmt.Sprintf("%sp%d", disk, n)
	}
	return fmt.Sprintf("%s%d", disk, n)
}
