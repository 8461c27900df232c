package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// layout is what the image's MBR says.
type layout struct {
	bootStart, bootSize, dataStart, dataSize uint32
	bootActive                               bool
	bootType, dataType                       byte
}

func readLayout(r io.ReaderAt) (layout, error) {
	mbr := make([]byte, 512)
	if _, err := r.ReadAt(mbr, 0); err != nil {
		return layout{}, err
	}
	if mbr[510] != 0x55 || mbr[511] != 0xaa {
		return layout{}, errors.New("no MBR signature")
	}
	p1, p2 := mbr[446:462], mbr[462:478]
	return layout{
		bootActive: p1[0] == 0x80, bootType: p1[4],
		bootStart: binary.LittleEndian.Uint32(p1[8:]), bootSize: binary.LittleEndian.Uint32(p1[12:]),
		dataType:  p2[4],
		dataStart: binary.LittleEndian.Uint32(p2[8:]), dataSize: binary.LittleEndian.Uint32(p2[12:]),
	}, nil
}

// verify checks the image the way the AM335x boot ROM and fsck would:
// partition table, active flag, FAT total sectors equal to the partition
// size and hidden sectors equal to its start, MLO the first file in the root
// directory, and both file systems clean.
func verify(o *options, img string) error {
	f, err := os.Open(img)
	if err != nil {
		return err
	}
	defer f.Close()
	l, err := readLayout(f)
	if err != nil {
		return err
	}
	var problems []string
	check := func(ok bool, format string, a ...any) {
		if !ok {
			problems = append(problems, fmt.Sprintf(format, a...))
		}
	}
	check(l.bootActive, "partition 1 is not active")
	check(l.bootType == typeFAT32LBA, "partition 1 type %#x, want FAT32 LBA", l.bootType)
	check(l.dataType == typeLinux, "partition 2 type %#x, want Linux", l.dataType)
	check(l.bootStart%2048 == 0 && l.dataStart%2048 == 0, "partitions not 1 MiB aligned")
	check(l.dataStart >= l.bootStart+l.bootSize, "partitions overlap")

	bs := make([]byte, 512)
	if _, err := f.ReadAt(bs, int64(l.bootStart)*512); err != nil {
		return err
	}
	total := uint32(binary.LittleEndian.Uint16(bs[19:]))
	if total == 0 {
		total = binary.LittleEndian.Uint32(bs[32:])
	}
	check(binary.LittleEndian.Uint16(bs[11:]) == 512, "FAT bytes per sector %d", binary.LittleEndian.Uint16(bs[11:]))
	check(total == l.bootSize, "FAT total sectors %d, partition size %d", total, l.bootSize)
	hidden := binary.LittleEndian.Uint32(bs[28:])
	check(hidden == l.bootStart, "FAT hidden sectors %d, partition start %d", hidden, l.bootStart)
	first, err := firstRootEntry(f, int64(l.bootStart)*512, bs)
	if err != nil {
		return err
	}
	check(first == "MLO", "first file in the FAT root directory is %q, want MLO", first)

	for _, p := range []struct {
		name        string
		start, size uint32
		tool        string
		args        []string
	}{
		{"boot.vfat", l.bootStart, l.bootSize, "fsck.vfat", []string{"-n"}},
		{"data.ext4", l.dataStart, l.dataSize, "e2fsck", []string{"-fn"}},
	} {
		part := filepath.Join(o.work, "check-"+p.name)
		if err := extractPart(f, int64(p.start)*512, int64(p.size)*512, part); err != nil {
			return err
		}
		if out, err := sh(nil, p.tool, append(p.args, part)...); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", p.tool, strings.TrimSpace(out)))
		}
		os.Remove(part)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Fprintf(o.log, "verify: MBR, active FAT32 at %d (%d sectors, hidden %d), MLO first, fsck.vfat and e2fsck clean\n", l.bootStart, total, hidden)
	return nil
}

// firstRootEntry returns the name of the first file in a FAT32 root
// directory, skipping the volume label and long-name entries.
func firstRootEntry(r io.ReaderAt, base int64, bs []byte) (string, error) {
	reserved := int64(binary.LittleEndian.Uint16(bs[14:]))
	fats := int64(bs[16])
	fatSize := int64(binary.LittleEndian.Uint32(bs[36:]))
	perCluster := int64(bs[13])
	root := int64(binary.LittleEndian.Uint32(bs[44:]))
	sector := reserved + fats*fatSize + (root-2)*perCluster
	dir := make([]byte, perCluster*512)
	if _, err := r.ReadAt(dir, base+sector*512); err != nil {
		return "", err
	}
	for i := 0; i+32 <= len(dir); i += 32 {
		e := dir[i : i+32]
		switch {
		case e[0] == 0:
			return "", nil
		case e[0] == 0xe5 || e[11] == 0x0f || e[11]&0x08 != 0:
			continue
		}
		name := strings.TrimRight(string(e[0:8]), " ")
		if ext := strings.TrimRight(string(e[8:11]), " "); ext != "" {
			name += "." + ext
		}
		return name, nil
	}
	return "", nil
}

func extractPart(r io.ReaderAt, off, size int64, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, io.NewSectionReader(r, off, size))
	return err
}
