package emmc

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/partition"
)

// Job is one flash of the eMMC from the card.
type Job struct {
	Card string // the card's whole disk, e.g. /dev/mmcblk0
	EMMC string // the eMMC's, e.g. /dev/mmcblk1
	// BootEnvAt and BootEnv: the sector of the boot partition, in bytes
	// from its start, that the copy holds in place of the card's
	// (boot.env without the card's moved mark: update.Card.CopyBootEnv).
	BootEnvAt int64
	BootEnv   []byte
	// Signature is the eMMC's disk signature (not the card's).
	Signature uint32
	// DataLabel is the data file system's label, as the card's.
	DataLabel string
	// Mount is an empty folder where the new data file system is mounted
	// for Fill, which copies the state (and the files) into root and
	// checks what it wrote.
	Mount string
	Fill  func(ctx context.Context, root string) error
	Log   *slog.Logger
	Now   time.Time
}

// Run flashes the eMMC. Its order is what makes a power cut harmless: the
// eMMC's first MiB (the partition table and the ROM's raw-mode places)
// is zeroed first, so a half-written eMMC is one the ROM does not boot
// and the board boots the card as before; the partition table is written
// last, once the boot partition has been read back and the data
// partition filled and checked. The card is only read.
func (j *Job) Run(ctx context.Context) error {
	card, err := os.Open(j.Card)
	if err != nil {
		return err
	}
	defer card.Close()
	mbr := make([]byte, partition.SectorSize)
	if _, err := card.ReadAt(mbr, 0); err != nil {
		return fmt.Errorf("the card's partition table: %w", err)
	}
	boot := partition.Entry(mbr, 1)
	dev, err := os.OpenFile(j.EMMC, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer dev.Close() // dropped: every write is synced before it counts
	size, err := deviceSize(dev)
	if err != nil {
		return err
	}
	data := DataPart(boot, size)
	if data.Size < 64<<20 {
		return fmt.Errorf("the eMMC (%d MiB) has no room for the system and a data partition", size>>20)
	}
	// The table the eMMC gets last, made before anything is written: a
	// card whose table it cannot be made from is refused with the eMMC
	// untouched.
	table, err := NewMBR(mbr, j.Signature, data)
	if err != nil {
		return err
	}
	j.Log.Info("emmc: wiping the eMMC's partition table", "dev", j.EMMC)
	forgetParts(dev)
	if err := writeSynced(dev, make([]byte, 1<<20), 0); err != nil {
		return fmt.Errorf("wipe the eMMC's first MiB: %w", err)
	}
	j.Log.Info("emmc: copying the boot partition", "mib", boot.Size>>20)
	sum, err := copyBoot(ctx, card, dev, boot, j.BootEnvAt, j.BootEnv, j.Log)
	if err != nil {
		return fmt.Errorf("copy the boot partition: %w", err)
	}
	j.Log.Info("emmc: reading the boot partition back")
	if err := verify(j.EMMC, boot, sum); err != nil {
		return err
	}
	if err := j.fillData(ctx, dev, data); err != nil {
		return err
	}
	j.Log.Info("emmc: writing the eMMC's partition table")
	if err := writeSynced(dev, table, 0); err != nil {
		return fmt.Errorf("write the eMMC's partition table: %w", err)
	}
	forgetParts(dev)
	unix.IoctlSetInt(int(dev.Fd()), unix.BLKRRPART, 0) // dropped: the table is on the eMMC; the kernel sees it at the next boot if not now
	return nil
}

// fillData makes the data partition's ext4 and lets Fill copy into it,
// through a partition the kernel is told of (BLKPG) but that no table on
// the eMMC names yet.
func (j *Job) fillData(ctx context.Context, dev *os.File, data partition.Part) error {
	j.Log.Info("emmc: making the data file system", "mib", data.Size>>20)
	var uuid [16]byte
	if _, err := io.ReadFull(randReader, uuid[:]); err != nil {
		return err
	}
	uuid[6], uuid[8] = uuid[6]&0x0f|0x40, uuid[8]&0x3f|0x80
	if err := datadisk.Mkfs(&section{dev, data.Start}, data.Size, datadisk.Format{Label: j.DataLabel, UUID: uuid, Now: j.Now}); err != nil {
		return fmt.Errorf("format the data partition: %w", err)
	}
	if err := partition.Add(dev, 2, data); err != nil {
		return fmt.Errorf("tell the kernel of the data partition: %w", err)
	}
	defer partition.Delete(dev, 2) // dropped: the table written last names it again
	part := "/dev/" + partition.Name(filepath.Base(j.EMMC), 2)
	if err := waitFor(part); err != nil {
		return err
	}
	if err := os.MkdirAll(j.Mount, 0o700); err != nil {
		return err
	}
	if err := unix.Mount(part, j.Mount, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOATIME, ""); err != nil {
		return fmt.Errorf("mount %s: %w", part, err)
	}
	j.Log.Info("emmc: copying the state", "to", part)
	err := j.Fill(ctx, j.Mount)
	if d, e := os.Open(j.Mount); e == nil {
		if e := unix.Syncfs(int(d.Fd())); e != nil && err == nil {
			err = fmt.Errorf("sync the data partition: %w", e)
		}
		d.Close()
	}
	if e := unix.Unmount(j.Mount, 0); e != nil && err == nil {
		err = fmt.Errorf("unmount %s: %w", j.Mount, e)
	}
	return err
}

// copyBoot copies the card's boot partition to the same place on the
// eMMC, with patch at patchAt, and returns the SHA-256 of what it wrote.
func copyBoot(ctx context.Context, card, dev *os.File, boot partition.Part, patchAt int64, patch []byte, log *slog.Logger) ([]byte, error) {
	h := sha256.New()
	buf := make([]byte, 1<<20)
	next := boot.Size / 4
	patched := len(patch) == 0
	for off := int64(0); off < boot.Size; off += int64(len(buf)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := buf[:min(int64(len(buf)), boot.Size-off)]
		if _, err := card.ReadAt(b, boot.Start+off); err != nil {
			return nil, fmt.Errorf("read the card: %w", err)
		}
		if patchAt >= off && patchAt+int64(len(patch)) <= off+int64(len(b)) {
			copy(b[patchAt-off:], patch)
			patched = true
		}
		h.Write(b)
		if _, err := dev.WriteAt(b, boot.Start+off); err != nil {
			return nil, fmt.Errorf("write the eMMC: %w", err)
		}
		if off+int64(len(b)) >= next {
			log.Info("emmc: boot partition copied", "mib", (off+int64(len(b)))>>20, "of", boot.Size>>20)
			next += boot.Size / 4
		}
	}
	if !patched {
		// The card's mark would be copied with it: an eMMC that boots
		// nothing.
		return nil, fmt.Errorf("boot.env at %d is not within one piece of the copy", patchAt)
	}
	if err := dev.Sync(); err != nil {
		return nil, fmt.Errorf("sync the eMMC: %w", err)
	}
	return h.Sum(nil), nil
}

// verify reads the boot partition back from the eMMC past every cache
// (the device's buffers dropped, then O_DIRECT) and compares its SHA-256.
func verify(path string, boot partition.Part, want []byte) error {
	got, err := readDirect(path, boot)
	if err != nil {
		return fmt.Errorf("read the eMMC back: %w", err)
	}
	if string(got) != string(want) {
		return errors.New("the boot partition read back from the eMMC differs from what was written: the eMMC is failing (it is left unbootable)")
	}
	return nil
}

// readDirect is the SHA-256 of part of the device at path, read with
// O_DIRECT after BLKFLSBUF (a file system that refuses O_DIRECT, in
// tests, is read with its cached pages dropped).
func readDirect(path string, p partition.Part) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if errors.Is(err, unix.EINVAL) {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	unix.IoctlSetInt(int(f.Fd()), unix.BLKFLSBUF, 0) // dropped: a plain file has no buffers; O_DIRECT reads past them anyway
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	buf, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // page-aligned, as O_DIRECT wants
	if err != nil {
		return nil, err
	}
	defer unix.Munmap(buf)
	h := sha256.New()
	for off := int64(0); off < p.Size; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), p.Size-off)]
		if _, err := f.ReadAt(b, p.Start+off); err != nil {
			return nil, err
		}
		h.Write(b)
	}
	return h.Sum(nil), nil
}

func writeSynced(f *os.File, b []byte, off int64) error {
	if _, err := f.WriteAt(b, off); err != nil {
		return err
	}
	return f.Sync()
}

// section is the data partition as datadisk.Mkfs writes it: the whole
// disk from an offset.
type section struct {
	f     *os.File
	start int64
}

func (s *section) WriteAt(b []byte, off int64) (int, error) { return s.f.WriteAt(b, s.start+off) }
func (s *section) Sync() error                              { return s.f.Sync() }

func deviceSize(f *os.File) (int64, error) {
	var n uint64
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&n))); e != 0 {
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return 0, fmt.Errorf("%s: size: %w", f.Name(), e)
		}
		return st.Size(), nil
	}
	return int64(n), nil
}

// forgetParts drops the kernel's partitions of the eMMC (what an earlier
// system or flash left), so that its device nodes go before the table does.
func forgetParts(dev *os.File) {
	for n := 1; n <= 4; n++ {
		partition.Delete(dev, n) // dropped: most are not there
	}
}

func waitFor(path string) error {
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not appear", path)
}
