package partition

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BLKPG's operations.
const (
	blkpgAdd    = 1
	blkpgDelete = 2
	blkpgResize = 3
)

// blkpgPartition is struct blkpg_partition; the trailing pad keeps its
// size that of the C struct (8-byte aligned) on 32-bit ARM too.
type blkpgPartition struct {
	Start, Length int64
	Pno           int32
	Devname       [64]byte
	Volname       [64]byte
	_             [4]byte
}

type blkpgIoctlArg struct {
	Op, Flags, Datalen int32
	Data               unsafe.Pointer
}

// Add tells the kernel of partition n of the disk open as dev, without
// the disk's table: its device node appears, and nothing is written.
func Add(dev *os.File, n int, p Part) error { return blkpg(dev, blkpgAdd, n, p) }

// Delete makes the kernel forget partition n (EBUSY while it is mounted).
func Delete(dev *os.File, n int) error { return blkpg(dev, blkpgDelete, n, Part{}) }

// Resize tells the kernel partition n is now p, without a re-read of the
// whole table (which fails while another partition is mounted).
func Resize(dev *os.File, n int, p Part) error { return blkpg(dev, blkpgResize, n, p) }

func blkpg(dev *os.File, op int32, n int, p Part) error {
	part := blkpgPartition{Start: p.Start, Length: p.Size, Pno: int32(n)}
	arg := blkpgIoctlArg{Op: op, Datalen: int32(unsafe.Sizeof(part)), Data: unsafe.Pointer(&part)}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, dev.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg))); e != 0 {
		return e
	}
	return nil
}
