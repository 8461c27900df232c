package datadisk

// The box has no mke2fs (its userland is this one binary), so adopting a
// disk formats it here: a plain ext4, as `mke2fs -t ext4 -I 256` would make
// it on a laptop, and as e2fsck accepts it (mkfs_test.go runs e2fsck -fn on
// every shape). The layout, from the kernel's ext4 documentation
// (Documentation/filesystems/ext4/):
//
//   - 4 KiB blocks, 32,768 blocks (128 MiB) a group, no flex_bg: each group
//     holds its block bitmap, inode bitmap and inode table;
//   - a copy of the superblock and the group descriptors in groups 0, 1 and
//     the powers of 3, 5 and 7 (sparse_super);
//   - 256-byte inodes: nanosecond times and room in the inode for the store's
//     record of a file (store/meta.go), as the card's data partition;
//   - one inode per 16 KiB of disk, as mke2fs's default;
//   - a journal (inode 8) of up to 64 MiB, zeroed, in group 0;
//   - uninit_bg: only group 0 and the last get written bitmaps; the others
//     are marked uninitialised (checksummed with CRC-16) and the kernel
//     fills them in on first use, and zeroes their inode tables in the
//     background. A 2 TB disk is formatted with 76 MiB of writes, 64 of
//     them the zeroed journal (measured on a sparse file, e2fsck clean).
//
// Not used: 64bit (a disk up to 16 TiB), flex_bg, metadata_csum, resize_inode.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

const (
	blockSize      = 4096
	blocksPerGroup = 8 * blockSize // one bitmap block's worth
	inodeSize      = 256
	bytesPerInode  = 16 << 10
	firstIno       = 11 // lost+found; 1-10 are reserved
	rootIno        = 2
	journalIno     = 8
	descSize       = 32
	maxBlocks      = 1<<32 - blocksPerGroup // without 64bit (and no uint32 overflow in the group count)
	minBlocks      = 4096                   // 16 MiB: room for the journal and a few files
)

// Feature flags (superblock s_feature_*).
const (
	compatHasJournal = 0x4
	compatExtAttr    = 0x8
	compatDirIndex   = 0x20

	incompatFiletype = 0x2
	incompatExtents  = 0x40

	roSparseSuper = 0x1
	roLargeFile   = 0x2
	roHugeFile    = 0x8
	roGdtCsum     = 0x10
	roDirNlink    = 0x20
	roExtraIsize  = 0x40
)

// Group descriptor flags.
const (
	bgInodeUninit  = 0x1
	bgBlockUninit  = 0x2
	bgItableZeroed = 0x4
)

// Format is what Mkfs writes.
type Format struct {
	Label string   // at most 16 bytes
	UUID  [16]byte // the file system's; also the seed of its directory hashes
	// Now stamps the file system's and its first inodes' times.
	Now time.Time
}

// Target is what Mkfs writes to: a block device or a file.
type Target interface {
	io.WriterAt
	Sync() error
}

// layout is the file system's geometry.
type layout struct {
	blocks         uint32
	groups         uint32
	inodesPerGroup uint32
	itableBlocks   uint32 // per group
	gdtBlocks      uint32
	journalBlocks  uint32
}

func plan(size int64) (layout, error) {
	n := size / blockSize
	if n > maxBlocks {
		return layout{}, fmt.Errorf("the disk holds %d GiB: this format (without ext4's 64bit feature) reaches 16 TiB", size>>30)
	}
	l := layout{blocks: uint32(n)}
	if l.blocks < minBlocks {
		return layout{}, fmt.Errorf("the disk holds %d MiB: too small for the files (at least %d MiB)", size>>20, minBlocks*blockSize>>20)
	}
	for {
		l.groups = (l.blocks + blocksPerGroup - 1) / blocksPerGroup
		ipg := uint32(int64(blocksPerGroup) * blockSize / bytesPerInode)
		if l.groups == 1 {
			ipg = uint32(int64(l.blocks) * blockSize / bytesPerInode)
		}
		ipg = (ipg + 15) &^ 15 // whole inode-table blocks (16 inodes each)
		l.inodesPerGroup = ipg
		l.itableBlocks = ipg * inodeSize / blockSize
		l.gdtBlocks = (l.groups*descSize + blockSize - 1) / blockSize
		// The last group must hold its own metadata with room to spare,
		// else it is dropped (as mke2fs does).
		last := l.blocks - (l.groups-1)*blocksPerGroup
		if l.groups > 1 && last < l.overhead(l.groups-1)+50 {
			l.blocks -= last
			continue
		}
		break
	}
	j := l.blocks / 64
	j = max(1024, min(j, 16384)) // 4 to 64 MiB
	l.journalBlocks = j
	if l.overhead(0)+2+j > min(l.blocks, blocksPerGroup) {
		return layout{}, errors.New("the disk is too small for a journal")
	}
	return l, nil
}

// hasSuper says whether group g holds a copy of the superblock and the
// descriptors (sparse_super: 0, 1, and powers of 3, 5, 7).
func hasSuper(g uint32) bool {
	if g <= 1 {
		return true
	}
	for _, p := range []uint32{3, 5, 7} {
		n := p
		for n < g {
			n *= p
		}
		if n == g {
			return true
		}
	}
	return false
}

// overhead is how many blocks at the start of group g the file system's
// own records take: superblock and descriptors, bitmaps, inode table.
func (l layout) overhead(g uint32) uint32 {
	n := 2 + l.itableBlocks
	if hasSuper(g) {
		n += 1 + l.gdtBlocks
	}
	return n
}

func (l layout) groupStart(g uint32) uint32 { return g * blocksPerGroup }
func (l layout) groupBlocks(g uint32) uint32 {
	if g == l.groups-1 {
		return l.blocks - g*blocksPerGroup
	}
	return blocksPerGroup
}

// blockBitmap, inodeBitmap and inodeTable are where group g keeps them.
func (l layout) blockBitmap(g uint32) uint32 {
	b := l.groupStart(g)
	if hasSuper(g) {
		b += 1 + l.gdtBlocks
	}
	return b
}
func (l layout) inodeBitmap(g uint32) uint32 { return l.blockBitmap(g) + 1 }
func (l layout) inodeTable(g uint32) uint32  { return l.blockBitmap(g) + 2 }

// Mkfs writes a new ext4 file system of size bytes on dev. What was on dev
// is lost. The superblock is written last, after everything it describes
// is synced: a power cut before leaves no file system a mount would take.
func Mkfs(dev Target, size int64, f Format) error {
	l, err := plan(size)
	if err != nil {
		return err
	}
	if len(f.Label) > 16 {
		return fmt.Errorf("label %q is longer than 16 bytes", f.Label)
	}
	now := uint32(f.Now.Unix())
	w := &writer{dev: dev}
	gdt, freeBlocks, freeInodes := l.descriptors(f.UUID)
	journal := l.writeGroup0(w, f.UUID, now)
	// The last group's block bitmap: its blocks past the end are marked
	// used (e2fsck checks the padding).
	if g := l.groups - 1; g > 0 {
		bb := make([]byte, blockSize)
		setBits(bb, 0, l.overhead(g))
		setBits(bb, l.groupBlocks(g), blocksPerGroup)
		w.block(l.blockBitmap(g), bb)
	}
	// The superblock's copies and the descriptors, then the superblock
	// itself once they are synced.
	sb := l.superblock(f, now, freeBlocks, freeInodes, journal)
	for g := uint32(1); g < l.groups; g++ {
		if !hasSuper(g) {
			continue
		}
		blk := make([]byte, blockSize)
		copy(blk, sb)
		binary.LittleEndian.PutUint16(blk[0x5A:], uint16(g))
		w.block(l.groupStart(g), blk)
		w.at(int64(l.groupStart(g)+1)*blockSize, gdt)
	}
	w.at(blockSize, gdt)
	if w.err != nil {
		return w.err
	}
	if err := dev.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	// Block 0: the first 1024 bytes zeroed (whatever boot sector or
	// partition table was there is gone, so nothing reads the disk as what
	// it was), then the superblock.
	blk := make([]byte, blockSize)
	copy(blk[1024:], sb)
	w.block(0, blk)
	if w.err != nil {
		return w.err
	}
	return dev.Sync()
}

// group0 is where group 0's own blocks are, after its inode table: the
// root folder, lost+found and the journal; used is the first block after.
func (l layout) group0() (root, lostFound, journal, used uint32) {
	root = l.inodeTable(0) + l.itableBlocks
	return root, root + 1, root + 2, root + 2 + l.journalBlocks
}

// descriptors are the group descriptors, checksummed, and the free blocks
// and inodes they count.
func (l layout) descriptors(uuid [16]byte) (gdt []byte, freeBlocks, freeInodes uint64) {
	_, _, _, used0 := l.group0()
	gdt = make([]byte, l.gdtBlocks*blockSize)
	le := binary.LittleEndian
	for g := uint32(0); g < l.groups; g++ {
		d := gdt[g*descSize : (g+1)*descSize]
		le.PutUint32(d[0:], l.blockBitmap(g))
		le.PutUint32(d[4:], l.inodeBitmap(g))
		le.PutUint32(d[8:], l.inodeTable(g))
		fb := l.groupBlocks(g) - l.overhead(g)
		fi := l.inodesPerGroup
		var flags uint16
		switch {
		case g == 0:
			fb = l.groupBlocks(0) - used0
			fi -= firstIno
			le.PutUint16(d[0x10:], 2) // the root folder and lost+found
			flags = bgItableZeroed
			le.PutUint16(d[0x1C:], uint16(l.inodesPerGroup-firstIno))
		case g == l.groups-1:
			flags = bgInodeUninit // its block bitmap is written: the padding
			le.PutUint16(d[0x1C:], uint16(l.inodesPerGroup))
		default:
			flags = bgInodeUninit | bgBlockUninit
			le.PutUint16(d[0x1C:], uint16(l.inodesPerGroup))
		}
		le.PutUint16(d[0xC:], uint16(fb))
		le.PutUint16(d[0xE:], uint16(fi))
		le.PutUint16(d[0x12:], flags)
		le.PutUint16(d[0x1E:], descChecksum(uuid, g, d))
		freeBlocks += uint64(fb)
		freeInodes += uint64(fi)
	}
	return gdt, freeBlocks, freeInodes
}

// writeGroup0 writes group 0: its bitmaps, a zeroed inode table with the
// first inodes, the two folders and the zeroed journal. It returns the
// journal's inode, which the superblock keeps a copy of.
func (l layout) writeGroup0(w *writer, uuid [16]byte, now uint32) (journal []byte) {
	rootBlock, lfBlock, journalStart, used0 := l.group0()
	bb := make([]byte, blockSize)
	setBits(bb, 0, used0)
	if l.groups == 1 {
		setBits(bb, l.blocks, blocksPerGroup)
	}
	w.block(l.blockBitmap(0), bb)
	ib := make([]byte, blockSize)
	setBits(ib, 0, firstIno)
	setBits(ib, l.inodesPerGroup, blocksPerGroup)
	w.block(l.inodeBitmap(0), ib)

	itable := make([]byte, l.itableBlocks*blockSize)
	ino := func(n uint32) []byte { return itable[(n-1)*inodeSize : n*inodeSize] }
	dirInode(ino(rootIno), 0o40755, 3, rootBlock, now)
	dirInode(ino(firstIno), 0o40700, 2, lfBlock, now)
	journal = ino(journalIno)
	extentInode(journal, 0o100600, 1, journalStart, l.journalBlocks, now)
	w.at(int64(l.inodeTable(0))*blockSize, itable)

	w.block(rootBlock, dirBlock(rootIno, rootIno, dirEntry{firstIno, "lost+found"}))
	w.block(lfBlock, dirBlock(firstIno, rootIno))
	w.zero(journalStart+1, l.journalBlocks-1)
	w.block(journalStart, journalSuper(l.journalBlocks, uuid))
	return journal
}

// superblock is the 1024-byte superblock (group 0's; its copies carry
// their group's number).
func (l layout) superblock(f Format, now uint32, freeBlocks, freeInodes uint64, journal []byte) []byte {
	sb := make([]byte, 1024)
	le := binary.LittleEndian
	le.PutUint32(sb[0x0:], l.groups*l.inodesPerGroup)
	le.PutUint32(sb[0x4:], l.blocks)
	le.PutUint32(sb[0x8:], l.blocks/100) // 1% kept for root, as on the card
	le.PutUint32(sb[0xC:], uint32(freeBlocks))
	le.PutUint32(sb[0x10:], uint32(freeInodes))
	le.PutUint32(sb[0x14:], 0) // first data block
	le.PutUint32(sb[0x18:], 2) // 1024 << 2
	le.PutUint32(sb[0x1C:], 2)
	le.PutUint32(sb[0x20:], blocksPerGroup)
	le.PutUint32(sb[0x24:], blocksPerGroup)
	le.PutUint32(sb[0x28:], l.inodesPerGroup)
	le.PutUint32(sb[0x30:], now)
	le.PutUint16(sb[0x36:], 0xFFFF) // no mount-count check
	le.PutUint16(sb[0x38:], 0xEF53)
	le.PutUint16(sb[0x3A:], 1) // clean
	le.PutUint16(sb[0x3C:], 2) // errors: remount read-only
	le.PutUint32(sb[0x40:], now)
	le.PutUint32(sb[0x4C:], 1) // dynamic revision
	le.PutUint32(sb[0x54:], firstIno)
	le.PutUint16(sb[0x58:], inodeSize)
	le.PutUint32(sb[0x5C:], compatHasJournal|compatExtAttr|compatDirIndex)
	le.PutUint32(sb[0x60:], incompatFiletype|incompatExtents)
	le.PutUint32(sb[0x64:], roSparseSuper|roLargeFile|roHugeFile|roGdtCsum|roDirNlink|roExtraIsize)
	copy(sb[0x68:], f.UUID[:])
	copy(sb[0x78:], f.Label)
	le.PutUint32(sb[0xE0:], journalIno)
	for i := 0; i < 4; i++ { // the directory hash seed
		copy(sb[0xEC+4*i:], f.UUID[4*((i+1)%4):4*((i+1)%4)+4])
	}
	sb[0xFC] = 1 // half_md4
	sb[0xFD] = 1 // s_jnl_blocks holds the journal inode's blocks
	le.PutUint32(sb[0x108:], now)
	copy(sb[0x10C:], journal[0x28:0x28+60])
	le.PutUint32(sb[0x10C+60:], 0)
	le.PutUint32(sb[0x10C+64:], l.journalBlocks*blockSize)
	le.PutUint16(sb[0x15C:], 32)
	le.PutUint16(sb[0x15E:], 32)
	le.PutUint32(sb[0x160:], 1) // directory hashes with signed chars, as on a PC
	return sb
}

// writer writes blocks, keeping the first error.
type writer struct {
	dev Target
	err error
}

func (w *writer) at(off int64, b []byte) {
	if w.err != nil {
		return
	}
	if _, err := w.dev.WriteAt(b, off); err != nil {
		w.err = fmt.Errorf("write at %d: %w", off, err)
	}
}

func (w *writer) block(n uint32, b []byte) { w.at(int64(n)*blockSize, b) }

func (w *writer) zero(start, count uint32) {
	z := make([]byte, 256*blockSize)
	for count > 0 && w.err == nil {
		n := min(count, 256)
		w.at(int64(start)*blockSize, z[:n*blockSize])
		start += n
		count -= n
	}
}

func setBits(b []byte, from, to uint32) {
	for i := from; i < to; i++ {
		b[i/8] |= 1 << (i % 8)
	}
}

// extentInode fills an inode whose data is one run of blocks.
func extentInode(b []byte, mode uint16, links uint16, start, count uint32, now uint32) {
	le := binary.LittleEndian
	le.PutUint16(b[0x0:], mode)
	size := uint64(count) * blockSize
	le.PutUint32(b[0x4:], uint32(size))
	le.PutUint32(b[0x6C:], uint32(size>>32))
	for _, off := range []int{0x8, 0xC, 0x10} { // atime, ctime, mtime
		le.PutUint32(b[off:], now)
	}
	le.PutUint32(b[0x90:], now) // crtime
	le.PutUint16(b[0x1A:], links)
	le.PutUint32(b[0x1C:], count*(blockSize/512))
	le.PutUint32(b[0x20:], 0x80000) // extents
	e := b[0x28:]
	le.PutUint16(e[0:], 0xF30A) // extent header
	le.PutUint16(e[2:], 1)
	le.PutUint16(e[4:], 4)
	le.PutUint16(e[6:], 0)
	le.PutUint32(e[12:], 0)             // from file block 0
	le.PutUint16(e[16:], uint16(count)) // at most 32,768
	le.PutUint16(e[18:], 0)
	le.PutUint32(e[20:], start)
	le.PutUint16(b[0x80:], 32) // extra inode size
}

func dirInode(b []byte, mode uint16, links uint16, block uint32, now uint32) {
	extentInode(b, mode, links, block, 1, now)
}

type dirEntry struct {
	ino  uint32
	name string
}

// dirBlock is a folder's one block: ".", ".." and the entries, the last
// one's record stretching to the block's end.
func dirBlock(self, parent uint32, more ...dirEntry) []byte {
	es := append([]dirEntry{{self, "."}, {parent, ".."}}, more...)
	b := make([]byte, blockSize)
	off := 0
	for i, e := range es {
		rec := (8 + len(e.name) + 3) &^ 3
		if i == len(es)-1 {
			rec = blockSize - off
		}
		binary.LittleEndian.PutUint32(b[off:], e.ino)
		binary.LittleEndian.PutUint16(b[off+4:], uint16(rec))
		b[off+6] = byte(len(e.name))
		b[off+7] = 2 // a folder
		copy(b[off+8:], e.name)
		off += rec
	}
	return b
}

// journalSuper is a clean, empty jbd2 journal's superblock (big-endian).
func journalSuper(blocks uint32, uuid [16]byte) []byte {
	b := make([]byte, blockSize)
	be := binary.BigEndian
	be.PutUint32(b[0x0:], 0xC03B3998) // magic
	be.PutUint32(b[0x4:], 4)          // superblock v2
	be.PutUint32(b[0xC:], blockSize)
	be.PutUint32(b[0x10:], blocks)
	be.PutUint32(b[0x14:], 1) // first log block
	be.PutUint32(b[0x18:], 1) // first transaction's sequence
	copy(b[0x30:], uuid[:])
	be.PutUint32(b[0x40:], 1) // one user: this file system
	return b
}

// descChecksum is uninit_bg's CRC-16 of a group descriptor: over the file
// system's UUID, the group's number and the descriptor up to the checksum.
func descChecksum(uuid [16]byte, g uint32, d []byte) uint16 {
	c := crc16(0xFFFF, uuid[:])
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], g)
	c = crc16(c, n[:])
	return crc16(c, d[:0x1E])
}

// crc16 is the CRC-16 e2fsprogs and the kernel use (ANSI, reflected 0xA001).
func crc16(crc uint16, b []byte) uint16 {
	for _, x := range b {
		crc ^= uint16(x)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}
