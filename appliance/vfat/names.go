package vfat

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	dirEntrySize = 32
	// Directory entry attributes ("FAT Directory Structure", DIR_Attr):
	// a file written and not yet backed up, the volume label, and the
	// four bits together that mark a long-name entry.
	attrArchive  = 0x20
	attrVolumeID = 0x08
	attrLongName = 0x0F
	// A long name is at most 255 UTF-16 units, 13 to an entry, the last
	// (first on disk) flagged 0x40 in its order byte ("Long File Name
	// Implementation").
	maxLongName   = 255
	charsPerEntry = 13
	lastLongEntry = 0x40
)

// entry is a file's directory entry: its 8.3 short name, as the 11 bytes
// of DIR_Name, its long name as UTF-16 (nil when the short name says it
// all), and its first cluster (0 for an empty file).
type entry struct {
	short   [11]byte
	long    []uint16
	cluster uint16
}

// slots is how many 32-byte directory entries e takes.
func (e entry) slots() int {
	return 1 + (len(e.long)+charsPerEntry-1)/charsPerEntry
}

// write writes e's long-name entries and its short entry for f at byte at
// of the root directory and returns where the next begins.
func (e entry) write(root []byte, at int, f File) int {
	le := binary.LittleEndian
	if e.long != nil {
		sum := checksum(e.short)
		// The name is padded to whole entries: a 0 unit after it, if
		// room, then 0xFFFF ("Long File Name Implementation").
		units := append([]uint16(nil), e.long...)
		if len(units)%charsPerEntry != 0 {
			units = append(units, 0)
		}
		for len(units)%charsPerEntry != 0 {
			units = append(units, 0xFFFF)
		}
		n := len(units) / charsPerEntry
		// The entries go in reverse: the last part of the name first,
		// the first part just before the short entry.
		for ord := n; ord >= 1; ord-- {
			d := root[at : at+dirEntrySize]
			d[0] = byte(ord)
			if ord == n {
				d[0] |= lastLongEntry
			}
			d[11] = attrLongName
			d[13] = sum
			part := units[(ord-1)*charsPerEntry:][:charsPerEntry]
			// Units 1-5 at 1, 6-11 at 14, 12-13 at 28; LDIR_FstClusLO
			// (26) is 0.
			for i, u := range part {
				switch {
				case i < 5:
					le.PutUint16(d[1+2*i:], u)
				case i < 11:
					le.PutUint16(d[14+2*(i-5):], u)
				default:
					le.PutUint16(d[28+2*(i-11):], u)
				}
			}
			at += dirEntrySize
		}
	}
	d := root[at : at+dirEntrySize]
	copy(d[0:11], e.short[:])
	d[11] = attrArchive
	date, clock, hundredths := stamp(f.ModTime)
	// Created, last accessed and written all at ModTime: the image
	// records no other time. FstClusHI (20) is 0 on FAT12.
	d[13] = hundredths
	le.PutUint16(d[14:], clock)
	le.PutUint16(d[16:], date)
	le.PutUint16(d[18:], date)
	le.PutUint16(d[22:], clock)
	le.PutUint16(d[24:], date)
	le.PutUint16(d[26:], e.cluster)
	le.PutUint32(d[28:], uint32(len(f.Data)))
	return at + dirEntrySize
}

// checksum is the short name's checksum that each of its long-name
// entries carries, so that a driver can tell they belong together: a
// right rotation of the sum by one bit before each byte is added
// ("Long File Name Implementation", ChkSum).
func checksum(short [11]byte) byte {
	var sum byte
	for _, c := range short {
		sum = (sum&1)<<7 + sum>>1 + c
	}
	return sum
}

// shortChar says whether c may stand in an 8.3 name as it is: upper-case
// letters, digits and the punctuation the specification lists ("FAT
// Directory Structure", DIR_Name), of ASCII only here.
func shortChar(c rune) bool {
	return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("!#$%&'()-@^_`{}~", c)
}

// upper is r upper-cased if it is an ASCII letter, else r: short names
// and labels hold ASCII only here, so that they mean the same in any OEM
// code page.
func upper(r rune) rune {
	if 'a' <= r && r <= 'z' {
		return r - 'a' + 'A'
	}
	return r
}

// directory checks the files' names and gives each its entry: the short
// names that are the long ones upper-cased first, so that none of them
// meets a generated one, then the generated ones with their "~N" tails.
func directory(files []File) ([]entry, error) {
	entries := make([]entry, len(files))
	seen := map[string]string{}
	used := map[[11]byte]bool{}
	for i, f := range files {
		if err := checkName(f.Name); err != nil {
			return nil, err
		}
		key := strings.ToUpper(f.Name)
		if other, ok := seen[key]; ok {
			return nil, fmt.Errorf("vfat: names %q and %q are the same name to FAT, which ignores case", other, f.Name)
		}
		seen[key] = f.Name
		if short, ok := fits83(f.Name); ok {
			entries[i].short = short
			used[short] = true
			if formatShort(short) != f.Name {
				entries[i].long = utf16.Encode([]rune(f.Name))
			}
		}
	}
	for i, f := range files {
		if entries[i].short[0] != 0 {
			continue
		}
		entries[i].short = generated(f.Name, used)
		used[entries[i].short] = true
		entries[i].long = utf16.Encode([]rune(f.Name))
	}
	return entries, nil
}

// checkName refuses what is not a long name Windows, macOS and Linux all
// take ("Long File Name Implementation" lists the characters refused).
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("vfat: a file has no name")
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("vfat: name %q: not UTF-8", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7F {
			return fmt.Errorf("vfat: name %q: control character %U", name, r)
		}
		if strings.ContainsRune(`/\:*?"<>|`, r) {
			return fmt.Errorf("vfat: name %q: %q may not be in a FAT name", name, r)
		}
	}
	// Windows drops a name's trailing periods and spaces: such a file
	// could not be opened by its name there.
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return fmt.Errorf("vfat: name %q: ends in a period or a space", name)
	}
	if n := len(utf16.Encode([]rune(name))); n > maxLongName {
		return fmt.Errorf("vfat: name %q: %d UTF-16 units long, more than %d", name, n, maxLongName)
	}
	return nil
}

// fits83 gives name's short name when name is an 8.3 name but for case:
// a base of 1 to 8 characters, at most one period, an extension of at
// most 3, all of them short-name characters once upper-cased.
func fits83(name string) ([11]byte, bool) {
	short := [11]byte{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}
	base, ext, dotted := strings.Cut(name, ".")
	if base == "" || len(base) > 8 || len(ext) > 3 || dotted && ext == "" || strings.Contains(ext, ".") {
		return short, false
	}
	for i, part := range []string{base, ext} {
		for j, r := range part {
			if r = upper(r); !shortChar(r) {
				return short, false
			}
			short[i*8+j] = byte(r)
		}
	}
	return short, true
}

// formatShort is a short name as it is written: "BASE.EXT", or "BASE".
func formatShort(short [11]byte) string {
	base := strings.TrimRight(string(short[:8]), " ")
	if ext := strings.TrimRight(string(short[8:]), " "); ext != "" {
		return base + "." + ext
	}
	return base
}

// generated gives a long name a short name none of used has, in the way
// of "Long File Name Implementation" ("The Basis-Name Generation
// Algorithm", "The Numeric-Tail Generation Algorithm"): spaces and
// leading periods dropped, letters upper-cased, characters a short name
// cannot hold made "_", the base before the last period cut to 8 (other
// periods dropped) and the extension to 3, then a "~N" tail, the lowest
// N that makes the name unique, cutting the base to make room.
func generated(name string, used map[[11]byte]bool) [11]byte {
	s := strings.TrimLeft(strings.ReplaceAll(name, " ", ""), ".")
	base, ext := s, ""
	if i := strings.LastIndex(s, "."); i >= 0 {
		base, ext = s[:i], s[i+1:]
	}
	b := shortPart(strings.ReplaceAll(base, ".", ""), 8)
	if b == "" {
		b = "_"
	}
	e := shortPart(ext, 3)
	for n := 1; ; n++ {
		tail := "~" + strconv.Itoa(n)
		short := [11]byte{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}
		copy(short[:8], b[:min(len(b), 8-len(tail))]+tail)
		copy(short[8:], e)
		if !used[short] {
			return short
		}
	}
}

// shortPart is s upper-cased, with "_" for each character a short name
// cannot hold, cut to n bytes.
func shortPart(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() == n {
			break
		}
		if r = upper(r); !shortChar(r) {
			r = '_'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// volumeLabel checks label and returns it as the 11 bytes the boot
// sector's BS_VolLab and the label's directory entry hold: upper-cased,
// padded with spaces; "NO NAME" when label is "", as the specification
// says for a volume without one ("Boot Sector and BPB", BS_VolLab).
func volumeLabel(label string) ([11]byte, error) {
	vol := [11]byte{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}
	if label == "" {
		copy(vol[:], "NO NAME")
		return vol, nil
	}
	if len(label) > len(vol) {
		return vol, fmt.Errorf("vfat: label %q: longer than %d characters", label, len(vol))
	}
	// Spaces pad a label: one at its end would be lost, one at its
	// start shown by some hosts and not others.
	if strings.HasPrefix(label, " ") || strings.HasSuffix(label, " ") {
		return vol, fmt.Errorf("vfat: label %q: begins or ends with a space", label)
	}
	for i, r := range label {
		if r = upper(r); !shortChar(r) && r != ' ' {
			return vol, fmt.Errorf("vfat: label %q: %q may not be in a label", label, r)
		}
		vol[i] = byte(r)
	}
	return vol, nil
}
