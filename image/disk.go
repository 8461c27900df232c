package main

import (
	"encoding/binary"
	"io"
	"os"
)

// MBR partition types.
const (
	typeFAT32LBA = 0x0c
	typeLinux    = 0x83
)

// writeDisk puts the MBR and the two partitions into one image: partition 1
// the active FAT boot partition (the AM335x boot ROM looks for MLO on the
// active partition), partition 2 the ext4 data partition. The disk signature
// derives from SOURCE_DATE_EPOCH. Unwritten space stays a hole.
func writeDisk(o *options, bootImg, dataImg, out string) error {
	mbr := make([]byte, 512)
	binary.LittleEndian.PutUint32(mbr[440:], uint32(o.epoch.Unix())^0x0b0e5eed)
	putPart(mbr[446:], true, typeFAT32LBA, partStart, bootSectors)
	putPart(mbr[462:], false, typeLinux, partStart+bootSectors, dataSectors)
	mbr[510], mbr[511] = 0x55, 0xaa

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close() // dropped: the close that counts is at the end, checked; this one is after an error
	total := int64(partStart+bootSectors+dataSectors) * 512
	if err := f.Truncate(total); err != nil {
		return err
	}
	if _, err := f.WriteAt(mbr, 0); err != nil {
		return err
	}
	for _, p := range []struct {
		file  string
		start int64
	}{{bootImg, partStart}, {dataImg, partStart + bootSectors}} {
		if err := copyAt(f, p.file, p.start*512); err != nil {
			return err
		}
	}
	return f.Close()
}

// putPart writes a 16-byte partition entry with LBA addressing (CHS fields
// set to the "beyond CHS" value every current reader ignores).
func putPart(e []byte, active bool, typ byte, start, sectors uint32) {
	if active {
		e[0] = 0x80
	}
	copy(e[1:4], []byte{0xfe, 0xff, 0xff})
	e[4] = typ
	copy(e[5:8], []byte{0xfe, 0xff, 0xff})
	binary.LittleEndian.PutUint32(e[8:], start)
	binary.LittleEndian.PutUint32(e[12:], sectors)
}

// copyAt copies file into f at off, skipping all-zero blocks so the image
// stays sparse.
func copyAt(f *os.File, file string, off int64) error {
	src, err := os.Open(file)
	if err != nil {
		return err
	}
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !allZero(buf[:n]) {
			if _, err := f.WriteAt(buf[:n], off); err != nil {
				return err
			}
		}
		off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
