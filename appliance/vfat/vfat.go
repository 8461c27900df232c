// Package vfat writes a small read-only FAT volume image from files held
// in memory: the USB drive PID 1 serves through the mass storage gadget
// (the start page, the CA certificate, a report). The image is a
// "superfloppy", as USB sticks and the gadget's backing files usually
// are: no partition table, the FAT boot sector at byte 0. The box has no
// mkfs.vfat, so the image is made here.
//
// Not github.com/diskfs/go-diskfs: it writes FAT32 only, whose smallest
// volume (65,525 clusters, about 33 MiB) is far more than a drive of
// about 1 MiB held in RAM on a 512 MB board with a 40 MB memory target,
// and it brings much more than this needs.
//
// The volume is FAT12: as the files grow, the clusters grow (512 bytes to
// 4 KiB) rather than the FAT's width, so FAT16 is never needed for what
// Image takes (just under 16 MiB of files, eight times what the drive is
// for). Names are VFAT long names
// with an 8.3 short name each.
//
// The rules the code follows are those of Microsoft's FAT specification,
// "FAT: General Overview of On-Disk Format" (fatgen103, version 1.03),
// cited by its section names.
package vfat

import (
	"encoding/binary"
	"fmt"
	"time"
)

// File is one file of the volume, in its root directory.
type File struct {
	// Name is the file's long name, as the host shows it ("Start
	// here.html"); Image gives it an 8.3 short name as well.
	Name string
	// Data is the file's content.
	Data []byte
	// ModTime is stored in FAT's local-time fields as it is given (its
	// own location's date and clock, UTC on the box), clamped to the
	// years FAT can hold, 1980 to 2107.
	ModTime time.Time
}

const (
	sectorSize = 512
	// One reserved sector, the boot sector: what the specification asks
	// of FAT12 and FAT16 ("BPB_RsvdSecCnt").
	reservedSectors = 1
	// Two FATs, which the specification recommends for any FAT volume
	// ("BPB_NumFATs"): some drivers and checkers expect the copy.
	numFATs = 2
	// 512 root directory entries, the count the specification
	// recommends ("BPB_RootEntCnt"); 32 bytes each, 32 whole sectors.
	rootEntries = 512
	rootSectors = rootEntries * dirEntrySize / sectorSize
	// A FAT12 volume has fewer than 4085 clusters ("FAT Type
	// Determination": the count alone decides the type). A margin of 16
	// is kept against readers that count a few clusters differently.
	maxClusters = 4085 - 1 - 16
	// Clusters of at most 4 KiB: past that, files would waste a cluster's
	// slack for a size the drive is not for.
	maxSectorsPerCluster = 8
	// The smallest image, 256 KiB: above the smallest floppies every FAT
	// driver has read (160 KiB), and little in RAM.
	minSectors = 256 * 1024 / sectorSize
	// Images grow in steps of 64 KiB, a multiple of the track below: the
	// slack past the files.
	stepSectors = 64 * 1024 / sectorSize
	// A geometry for the BPB's CHS fields, which nothing uses on a USB
	// drive but which mtools checks the size against: 32 sectors per
	// track, 64 heads, as mkfs.fat gives an image file.
	sectorsPerTrack = 32
	heads           = 64
	// Media 0xF8, "fixed" media, what the specification gives for
	// anything that is not a floppy ("BPB_Media"); FAT[0] repeats it.
	media = 0xF8
	// FAT12's end-of-chain mark ("FAT Data Structure").
	endOfChain = 0xFFF
)

// geometry is a volume's layout: sectors per cluster, sectors per FAT,
// all the sectors, and the data clusters they leave.
type geometry struct {
	spc, fatSectors, totalSectors, clusters int
}

// dataStart is the first sector of cluster 2, the first data cluster
// ("FAT Data Structure": the data region follows the reserved sectors,
// the FATs and the root directory).
func (g geometry) dataStart() int {
	return reservedSectors + numFATs*g.fatSectors + rootSectors
}

// Image returns a FAT12 volume image holding files in its root
// directory, in the order given, labelled label (at most 11 characters of
// those an 8.3 name may hold, and inner spaces; upper-cased; "" for
// none), with id as the volume serial number. The image is as small as
// the files need, rounded up to 64 KiB, and at least 256 KiB: a multiple
// of 512 bytes, as the Linux mass storage gadget wants. The same input
// gives the same bytes; nothing depends on the clock.
//
// Image refuses, with an error that says why, a name that is empty, not
// UTF-8, longer than 255 UTF-16 units, holding a control character or one
// of / \ : * ? " < > |, or ending in a period or a space; two names the
// same but for case; more files than the root directory's 512 entries
// hold (a long name takes an entry for each 13 characters, besides its
// short one); and files that do not fit FAT12 with 4 KiB clusters.
func Image(label string, id uint32, files []File) ([]byte, error) {
	vol, err := volumeLabel(label)
	if err != nil {
		return nil, err
	}
	entries, err := directory(files)
	if err != nil {
		return nil, err
	}
	used := 0
	if label != "" {
		used++
	}
	for _, e := range entries {
		used += e.slots()
	}
	if used > rootEntries {
		return nil, fmt.Errorf("vfat: %d files need %d root directory entries, more than the %d there are", len(files), used, rootEntries)
	}
	sizes := make([]int, len(files))
	for i, f := range files {
		sizes[i] = len(f.Data)
	}
	g, err := plan(sizes)
	if err != nil {
		return nil, err
	}
	img := make([]byte, g.totalSectors*sectorSize)
	bootSector(img[:sectorSize], g, vol, id)
	fat := writeData(img, g, files, entries)
	for i := range numFATs {
		off := (reservedSectors + i*g.fatSectors) * sectorSize
		copy(img[off:off+g.fatSectors*sectorSize], fat)
	}
	root := img[(reservedSectors+numFATs*g.fatSectors)*sectorSize:][:rootSectors*sectorSize]
	writeRoot(root, vol, label != "", files, entries)
	return img, nil
}

// plan picks the smallest cluster that keeps the volume FAT12, and the
// size of the volume that holds files of these sizes: rounded up to
// 64 KiB, or down by tracks where that would pass FAT12's clusters.
func plan(sizes []int) (geometry, error) {
	total := 0
	for _, n := range sizes {
		total += n
	}
	for spc := 1; spc <= maxSectorsPerCluster; spc *= 2 {
		need := 0
		for _, n := range sizes {
			need += (n + spc*sectorSize - 1) / (spc * sectorSize)
		}
		if need > maxClusters {
			continue
		}
		t := reservedSectors + numFATs*fatSectors(need) + rootSectors + need*spc
		t = max(minSectors, (t+stepSectors-1)/stepSectors*stepSectors)
		g := layout(t, spc)
		for g.clusters < need {
			g = layout(g.totalSectors+sectorsPerTrack, spc)
		}
		for g.clusters > maxClusters {
			g = layout(g.totalSectors-sectorsPerTrack, spc)
		}
		if g.clusters >= need {
			return g, nil
		}
	}
	return geometry{}, fmt.Errorf("vfat: %d bytes of files do not fit a FAT12 volume of %d-byte clusters", total, maxSectorsPerCluster*sectorSize)
}

// layout is the geometry of a volume of t sectors and clusters of spc.
// Its FATs are sized for every cluster the sectors after the root
// directory could hold, and then take some of them: a FAT longer than
// its clusters need is allowed ("FAT Data Structure": the entries past
// the last cluster are not used).
func layout(t, spc int) geometry {
	g := geometry{spc: spc, totalSectors: t}
	g.fatSectors = fatSectors((t - reservedSectors - rootSectors) / spc)
	g.clusters = (t - g.dataStart()) / spc
	return g
}

// fatSectors is how many sectors a FAT12 FAT of n data clusters takes:
// 12 bits an entry, and two entries before the first data cluster's.
func fatSectors(n int) int {
	bytes := ((n+2)*3 + 1) / 2
	return (bytes + sectorSize - 1) / sectorSize
}

// setFAT12 sets FAT12 entry n to v: two entries share three bytes, the
// even one in the low 12 bits, the odd one in the high 12 ("FAT Data
// Structure").
func setFAT12(fat []byte, n int, v uint16) {
	off := n * 3 / 2
	if n%2 == 0 {
		fat[off] = byte(v)
		fat[off+1] = fat[off+1]&0xF0 | byte(v>>8)&0x0F
	} else {
		fat[off] = fat[off]&0x0F | byte(v<<4)
		fat[off+1] = byte(v >> 4)
	}
}

// writeData writes the files' data into their clusters, one file after
// the other from cluster 2, sets each file's first cluster in its entry,
// and returns the FAT that chains them.
func writeData(img []byte, g geometry, files []File, entries []entry) []byte {
	fat := make([]byte, g.fatSectors*sectorSize)
	// FAT[0] holds the media byte in its low 8 bits, the rest set;
	// FAT[1] an end-of-chain mark ("FAT Data Structure").
	setFAT12(fat, 0, 0xF00|media)
	setFAT12(fat, 1, endOfChain)
	clusterSize := g.spc * sectorSize
	next := 2
	for i, f := range files {
		if len(f.Data) == 0 {
			continue // an empty file has cluster 0 and no chain
		}
		entries[i].cluster = uint16(next)
		n := (len(f.Data) + clusterSize - 1) / clusterSize
		off := (g.dataStart() + (next-2)*g.spc) * sectorSize
		copy(img[off:], f.Data)
		for c := next; c < next+n-1; c++ {
			setFAT12(fat, c, uint16(c+1))
		}
		setFAT12(fat, next+n-1, endOfChain)
		next += n
	}
	return fat
}

// bootSector writes the boot sector and its BIOS parameter block ("Boot
// Sector and BPB", the fields up to offset 36 common to all FATs, and
// those from 36 for FAT12 and FAT16).
func bootSector(b []byte, g geometry, vol [11]byte, id uint32) {
	le := binary.LittleEndian
	// A short jump over the BPB to the boot code, and a NOP: one of the
	// two forms the specification allows ("BS_jmpBoot").
	copy(b[0:], []byte{0xEB, 0x3C, 0x90})
	// "MSWIN4.1", the OEM name the specification calls the most
	// compatible ("BS_OEMName").
	copy(b[3:11], "MSWIN4.1")
	le.PutUint16(b[11:], sectorSize)
	b[13] = byte(g.spc)
	le.PutUint16(b[14:], reservedSectors)
	b[16] = numFATs
	le.PutUint16(b[17:], rootEntries)
	// The total goes in the 16-bit field when it fits, else in the 32-bit
	// one, the other being 0 ("BPB_TotSec16", "BPB_TotSec32").
	if g.totalSectors < 0x10000 {
		le.PutUint16(b[19:], uint16(g.totalSectors))
	} else {
		le.PutUint32(b[32:], uint32(g.totalSectors))
	}
	b[21] = media
	le.PutUint16(b[22:], uint16(g.fatSectors))
	le.PutUint16(b[24:], sectorsPerTrack)
	le.PutUint16(b[26:], heads)
	// Hidden sectors (b[28:32]) 0: no partition precedes the volume.
	// Drive number 0x80, a hard disk's, as for any media that is not a
	// floppy ("BS_DrvNum"); then the extended boot signature 0x29, which
	// says the serial number, label and type follow ("BS_BootSig").
	b[36] = 0x80
	b[38] = 0x29
	le.PutUint32(b[39:], id)
	copy(b[43:54], vol[:])
	// Informational only: the cluster count decides the type ("BS_FilSysType").
	copy(b[54:62], "FAT12   ")
	// The boot code: should a PC's BIOS boot the drive, INT 18h hands
	// over to its next boot device; a halt loop if it returns.
	copy(b[62:], []byte{0xCD, 0x18, 0xF4, 0xEB, 0xFD})
	// The signature at the sector's end ("Boot Sector and BPB":
	// bytes 510 and 511, 0x55 and 0xAA).
	b[510], b[511] = 0x55, 0xAA
}

// writeRoot writes the root directory: the volume label's entry first,
// if there is a label, then each file's long-name entries and its short
// entry. The rest stays zero: a first byte of 0 says no entry follows
// ("FAT Directory Structure", DIR_Name[0]).
func writeRoot(root []byte, vol [11]byte, labelled bool, files []File, entries []entry) {
	at := 0
	newest := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range files {
		if f.ModTime.After(newest) {
			newest = f.ModTime
		}
	}
	if labelled {
		// The label's entry: its 11 bytes as the name, the attribute
		// ATTR_VOLUME_ID, no cluster; stamped with the newest file's
		// time, so that it too follows from the input.
		d := root[at : at+dirEntrySize]
		copy(d[0:11], vol[:])
		d[11] = attrVolumeID
		date, clock, _ := stamp(newest)
		binary.LittleEndian.PutUint16(d[22:], clock)
		binary.LittleEndian.PutUint16(d[24:], date)
		at += dirEntrySize
	}
	for i, f := range files {
		at = entries[i].write(root, at, f)
	}
}

// stamp is t as FAT's date, time and hundredths fields ("Date and Time
// Formats"): the date as years since 1980 (7 bits), month and day; the
// time as hours, minutes and seconds halved, the creation time's
// hundredths (0 to 199) giving the odd second and the fraction. Times
// outside 1980 to 2107 are clamped to the nearest FAT can hold.
func stamp(t time.Time) (date, clock uint16, hundredths byte) {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	ns := t.Nanosecond()
	switch {
	case y < 1980:
		y, mo, d, h, mi, s, ns = 1980, 1, 1, 0, 0, 0, 0
	case y > 2107:
		y, mo, d, h, mi, s, ns = 2107, 12, 31, 23, 59, 59, 990_000_000
	}
	date = uint16(y-1980)<<9 | uint16(mo)<<5 | uint16(d)
	clock = uint16(h)<<11 | uint16(mi)<<5 | uint16(s/2)
	hundredths = byte(s%2*100 + ns/10_000_000)
	return date, clock, hundredths
}
