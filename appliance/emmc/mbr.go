// Package emmc copies the running system from the card to the board's
// eMMC (the console's `emmc flash`): the boot partition sector for sector,
// read back past every cache and compared, and a data partition with a
// fresh ext4 (datadisk.Mkfs) that the caller fills with the state; the
// partition table, which makes the eMMC bootable, is written last. It
// knows the eMMC's layout (package partition reads and names partitions),
// not PID 1: what to copy into the data partition, and stopping the
// server meanwhile, are the caller's.
package emmc

import (
	"fmt"

	"github.com/bonesync/bonesync/appliance/partition"
)

// NewMBR is the eMMC's partition table: the card's first entry as it is
// (the active FAT boot partition, where the ROM finds MLO), a Linux data
// partition, and the eMMC's own disk signature, so that its PARTUUIDs are
// not the card's.
func NewMBR(card []byte, sig uint32, data partition.Part) ([]byte, error) {
	if _, ok := partition.Signature(card); !ok {
		return nil, fmt.Errorf("the card has no MBR")
	}
	if data.Start%partition.SectorSize != 0 || data.Size%partition.SectorSize != 0 || data.Size <= 0 {
		return nil, fmt.Errorf("data partition %+v is not whole sectors", data)
	}
	mbr := make([]byte, partition.SectorSize)
	copy(mbr[446:462], card[446:462]) // the boot partition's entry, as the card has it
	partition.SetSignature(mbr, sig)
	partition.SetEntry(mbr, 2, 0x83, false, data)
	return mbr, nil
}

// DataPart is where the eMMC's data partition goes: from the first MiB
// after the boot partition to the last whole MiB of a disk of size bytes.
func DataPart(boot partition.Part, size int64) partition.Part {
	const mib = 1 << 20
	start := (boot.Start + boot.Size + mib - 1) / mib * mib
	return partition.Part{Start: start, Size: max(0, (size-start)/mib*mib)}
}
