package vfat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// The readers of the images: dosfstools' checker and mtools. Linux's
// own vfat driver needs root and a loop device, which tests do not have.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if p, err = exec.LookPath("/usr/sbin/" + name); err != nil {
			t.Fatalf("%s is missing: install the Debian package %s", name, pkg)
		}
	}
	return p
}

// run runs a tool on an image and returns its output; a failure fails
// the test.
func run(t *testing.T, name, pkg string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(tool(t, name, pkg), args...)
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1", "MTOOLSRC=/dev/null", "LC_ALL=C.UTF-8")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

func write(t *testing.T, img []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "drive.img")
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var when = time.Date(2025, 3, 14, 15, 9, 27, 0, time.UTC)

func file(name string, n int) File {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + len(name)) // content that differs by place and file
	}
	return File{Name: name, Data: data, ModTime: when}
}

// fsckSummary is fsck.fat's last line on a clean volume, the only line
// after its version.
var fsckSummary = regexp.MustCompile(`^\S+: (\d+) files, \d+/\d+ clusters$`)

// checkTools holds that fsck.vfat finds nothing to mend and that mtools
// reads back the label, the long names and the bytes (of the files
// named in copy, or all when copy is nil).
func checkTools(t *testing.T, img []byte, label string, files []File, copy []int) {
	t.Helper()
	p := write(t, img)
	out := run(t, "fsck.vfat", "dosfstools", "-n", p)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("fsck.vfat -n says more than a clean volume's two lines:\n%s", out)
	}
	m := fsckSummary.FindStringSubmatch(lines[1])
	entries := len(files) // fsck.fat counts the label's entry as a file
	if label != "" {
		entries++
	}
	if m == nil || m[1] != fmt.Sprint(entries) {
		t.Fatalf("fsck.vfat -n: %q, want %d entries", lines[1], entries)
	}
	info := string(run(t, "minfo", "mtools", "-i", p, "::"))
	if !strings.Contains(info, "disk type=\"FAT12   \"") {
		t.Errorf("minfo: not FAT12:\n%s", info)
	}
	labelOut := strings.TrimSpace(string(run(t, "mlabel", "mtools", "-s", "-i", p, "::")))
	if want := "Volume label is " + label; label != "" && labelOut != want {
		t.Errorf("mlabel -s: %q, want %q", labelOut, want)
	}
	if label == "" && !strings.Contains(labelOut, "has no label") {
		t.Errorf("mlabel -s: %q, want no label", labelOut)
	}
	listing := string(run(t, "mdir", "mtools", "-i", p, "::"))
	for _, f := range files {
		// A long name ends its line; a short one alone is shown as
		// its base and extension in columns.
		base, ext, _ := strings.Cut(f.Name, ".")
		if !strings.Contains(listing, "  "+f.Name+"\n") && !strings.Contains(listing, fmt.Sprintf("\n%-8s %-3s ", base, ext)) {
			t.Errorf("mdir does not list %q:\n%s", f.Name, listing)
		}
	}
	if copy == nil {
		for i := range files {
			copy = append(copy, i)
		}
	}
	for _, i := range copy {
		got := run(t, "mcopy", "mtools", "-i", p, "::/"+files[i].Name, "-")
		if !bytes.Equal(got, files[i].Data) {
			t.Errorf("mcopy %q: %d bytes, not the %d written", files[i].Name, len(got), len(files[i].Data))
		}
	}
}

// The volumes fsck.vfat and mtools read: none, one and three files, an
// empty file, a file of one cluster exactly and one of many.
func TestReaders(t *testing.T) {
	cases := []struct {
		name  string
		label string
		files []File
	}{
		{"no files", "BONESYNC", nil},
		{"no label", "", []File{file("report.txt", 100)}},
		{"one", "BONESYNC", []File{file("Start here.html", 3000)}},
		{"three", "bonesync", []File{file("Start here.html", 4000), file("ca.crt", 1200), file("REPORT.TXT", 900)}},
		{"empty file", "BONESYNC", []File{file("empty.txt", 0), file("after.txt", 10)}},
		{"one cluster", "BONESYNC", []File{file("one.bin", sectorSize), file("two.bin", sectorSize+1)}},
		{"many clusters", "BONESYNC", []File{file("big.bin", 700*1024), file("small.txt", 5)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := Image(c.label, 0x1234abcd, c.files)
			if err != nil {
				t.Fatal(err)
			}
			checkTools(t, img, strings.ToUpper(c.label), c.files, nil)
			label, got, err := readImage(img)
			if err != nil {
				t.Fatal(err)
			}
			if label != strings.ToUpper(c.label) {
				t.Errorf("label %q, want %q", label, c.label)
			}
			same(t, got, c.files)
		})
	}
}

// A volume at the limits: the root directory full to its last entry (one
// name of 255 characters, the rest needing a long-name entry each), and
// 4 KiB clusters to the last FAT12 may have.
func TestReadersAtLimits(t *testing.T) {
	long := strings.Repeat("n", maxLongName-4) + ".txt"
	files := []File{file(long, 10)}
	slots := 1 + 21 // the label's; the long name's 20 and its short one
	for i := 0; slots+2 <= rootEntries-4; i++ {
		files = append(files, file(fmt.Sprintf("file %03d.txt", i), 1000))
		slots += 2
	}
	files = append(files, file("File 999.txt", 1000), file("huge.bin", 0))
	files[len(files)-1].Data = make([]byte, (maxClusters-len(files)+1)*4096)
	img, err := Image("FULL", 1, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(img) < 15<<20 || img[13] != maxSectorsPerCluster {
		t.Fatalf("%d bytes, %d sectors a cluster: not the volume at its limits", len(img), img[13])
	}
	checkTools(t, img, "FULL", files, []int{0, 1, len(files) - 2, len(files) - 1})
	// One file more, one byte more: refused.
	if _, err := Image("FULL", 1, append(files, file("x", 0))); err == nil || !strings.Contains(err.Error(), "root directory") {
		t.Errorf("one more file: %v", err)
	}
	files[len(files)-1].Data = append(files[len(files)-1].Data, 0)
	if _, err := Image("FULL", 1, files); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("one more byte: %v", err)
	}
}

// Names that fit 8.3 in upper case stand alone; in lower case they keep
// the short name and gain a long one; the rest get a "~N" tail that never
// meets a name given as it is.
func TestShortNames(t *testing.T) {
	files := []File{
		file("Start here.html", 1), file("Start here too.html", 1), file("ca.crt", 1),
		file("REPORT.TXT", 1), file("STARTH~1.HTM", 1), file("a.b.c", 1), file("é+,x.tar.gz", 1), file(".profile", 1),
	}
	want := map[string]string{
		"Start here.html": "STARTH~2.HTM", "Start here too.html": "STARTH~3.HTM", "ca.crt": "CA.CRT",
		"REPORT.TXT": "REPORT.TXT", "STARTH~1.HTM": "STARTH~1.HTM", "a.b.c": "AB~1.C", "é+,x.tar.gz": "___XTA~1.GZ",
		".profile": "PROFIL~1",
	}
	img, err := Image("", 0, files)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := readImage(img)
	if err != nil {
		t.Fatal(err)
	}
	same(t, got, files)
	for _, f := range got {
		if want[f.Name] != f.short {
			t.Errorf("%q: short name %q, want %q", f.Name, f.short, want[f.Name])
		}
		if hasLong := f.short != f.Name; hasLong != f.long {
			t.Errorf("%q: a long name is %v, want %v", f.Name, f.long, hasLong)
		}
	}
	checkTools(t, img, "", files, nil)
}

func TestDeterministic(t *testing.T) {
	files := []File{file("Start here.html", 5000), file("ca.crt", 1500)}
	a, err := Image("BONESYNC", 7, files)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // past FAT's two-second clock: a time taken now would show
	b, err := Image("BONESYNC", 7, files)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same input gave two images")
	}
	changed := []File{files[0], file("ca.crt", 1500)}
	changed[1].Data[700] ^= 1
	c, err := Image("BONESYNC", 7, changed)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Fatal("a changed file gave the same image")
	}
	later := []File{files[0], files[1]}
	later[1].ModTime = when.Add(2 * time.Second)
	if d, err := Image("BONESYNC", 7, later); err != nil || bytes.Equal(a, d) {
		t.Fatalf("a changed time gave the same image (%v)", err)
	}
	if e, err := Image("BONESYNC", 8, files); err != nil || bytes.Equal(a, e) {
		t.Fatalf("a changed serial number gave the same image (%v)", err)
	}
}

// The boot sector's fixed fields, which the readers do not all insist on.
func TestBootSector(t *testing.T) {
	img, err := Image("BONESYNC", 0xCAFEF00D, []File{file("a.txt", 1)})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(img) != minSectors*sectorSize || len(img)%512 != 0 {
		t.Errorf("%d bytes, want the minimum %d", len(img), minSectors*sectorSize)
	}
	checks := []struct {
		what      string
		got, want uint64
	}{
		{"signature", uint64(le.Uint16(img[510:])), 0xAA55},
		{"bytes per sector", uint64(le.Uint16(img[11:])), 512},
		{"FATs", uint64(img[16]), 2},
		{"media", uint64(img[21]), 0xF8},
		{"sectors per track", uint64(le.Uint16(img[24:])), 32},
		{"heads", uint64(le.Uint16(img[26:])), 64},
		{"hidden sectors", uint64(le.Uint32(img[28:])), 0},
		{"total sectors", uint64(le.Uint16(img[19:])), uint64(len(img) / 512)},
		{"boot signature", uint64(img[38]), 0x29},
		{"serial", uint64(le.Uint32(img[39:])), 0xCAFEF00D},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %#x, want %#x", c.what, c.got, c.want)
		}
	}
	if string(img[43:54]) != "BONESYNC   " || string(img[54:62]) != "FAT12   " {
		t.Errorf("label %q, type %q", img[43:54], img[54:62])
	}
}

// Times are FAT's fields of the time as given, clamped to 1980-2107.
func TestTimes(t *testing.T) {
	cases := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 3, 14, 15, 9, 27, 0, time.UTC), "2025-03-14 15:09:26"},
		{time.Date(2025, 3, 14, 15, 9, 27, 0, time.FixedZone("X", 3600)), "2025-03-14 15:09:26"},
		{time.Time{}, "1980-01-01 00:00:00"},
		{time.Date(1979, 12, 31, 23, 59, 59, 0, time.UTC), "1980-01-01 00:00:00"},
		{time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), "2107-12-31 23:59:58"},
	}
	for _, c := range cases {
		date, clock, _ := stamp(c.in)
		got := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", 1980+date>>9, date>>5&15, date&31, clock>>11, clock>>5&63, clock&31*2)
		if got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		label string
		files []File
		want  string
	}{
		{"", []File{file("", 1)}, "no name"},
		{"", []File{file("a/b", 1)}, `'/'`},
		{"", []File{file(`a\b`, 1)}, `'\\'`},
		{"", []File{file("a:b", 1)}, `':'`},
		{"", []File{file("a*", 1)}, `'*'`},
		{"", []File{file("a?", 1)}, `'?'`},
		{"", []File{file(`a"`, 1)}, `'"'`},
		{"", []File{file("<a>", 1)}, `'<'`},
		{"", []File{file("a|b", 1)}, `'|'`},
		{"", []File{file("a\nb", 1)}, "control character"},
		{"", []File{file("a\x7f", 1)}, "control character"},
		{"", []File{file("a\xffb", 1)}, "not UTF-8"},
		{"", []File{file("a.", 1)}, "ends in"},
		{"", []File{file("a ", 1)}, "ends in"},
		{"", []File{file(strings.Repeat("x", 256), 1)}, "more than 255"},
		{"", []File{file("Report.txt", 1), file("REPORT.TXT", 1)}, "ignores case"},
		{"TOOLONGLABEL", nil, "longer than 11"},
		{" LEADING", nil, "begins or ends with a space"},
		{"TRAILING ", nil, "begins or ends with a space"},
		{"A.B", nil, `'.'`},
		{"ÉTÉ", nil, "may not be"},
	}
	for _, c := range cases {
		img, err := Image(c.label, 0, c.files)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "vfat: ") {
			t.Errorf("%q %q: %v, want an error saying %s", c.label, c.files, err, c.want)
		}
		if img != nil {
			t.Errorf("%q %q: an image with the error", c.label, c.files)
		}
	}
}

// Whatever Image is given, it does not panic, and what it returns reads
// back as the files it was given.
func FuzzImage(f *testing.F) {
	f.Add("BONESYNC", "Start here.html", []byte("<html>"), "ca.crt", uint16(600))
	f.Add("", "", []byte{}, "REPORT.TXT", uint16(0))
	f.Add("a b", "a.b.c", []byte("x"), "A.B.C", uint16(513))
	f.Fuzz(func(t *testing.T, label, name1 string, data1 []byte, name2 string, size2 uint16) {
		files := []File{
			{Name: name1, Data: data1, ModTime: when},
			{Name: name2, Data: bytes.Repeat([]byte{0xA5}, int(size2)), ModTime: time.Unix(int64(size2)<<20, 0)},
		}
		img, err := Image(label, 9, files)
		if err != nil {
			return
		}
		if len(img)%512 != 0 {
			t.Fatalf("%d bytes", len(img))
		}
		gotLabel, got, err := readImage(img)
		if err != nil {
			t.Fatal(err)
		}
		if gotLabel != strings.ToUpper(label) {
			t.Fatalf("label %q from %q", gotLabel, label)
		}
		same(t, got, files)
	})
}

func same(t *testing.T, got []readFile, want []File) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d files read, %d written", len(got), len(want))
	}
	shorts := map[string]bool{}
	for i, f := range want {
		if got[i].Name != f.Name || !bytes.Equal(got[i].Data, f.Data) {
			t.Errorf("file %d: %q of %d bytes, want %q of %d", i, got[i].Name, len(got[i].Data), f.Name, len(f.Data))
		}
		if shorts[got[i].short] {
			t.Errorf("short name %q twice", got[i].short)
		}
		shorts[got[i].short] = true
	}
}

// readFile is a file as readImage finds it: its name, its short name,
// whether it had a long name, its data.
type readFile struct {
	File
	short string
	long  bool
}

// readImage is a small FAT12 reader, apart from the writer: the label,
// and the root directory's files with their long names and data, each
// long name checked against its short name's checksum.
func readImage(img []byte) (string, []readFile, error) {
	le := binary.LittleEndian
	if len(img) < 512 || le.Uint16(img[510:]) != 0xAA55 || le.Uint16(img[11:]) != 512 {
		return "", nil, fmt.Errorf("no boot sector")
	}
	spc, rsvd, nfat := int(img[13]), int(le.Uint16(img[14:])), int(img[16])
	rootEnt, total, fatSz := int(le.Uint16(img[17:])), int(le.Uint16(img[19:])), int(le.Uint16(img[22:]))
	if total*512 != len(img) || spc == 0 || nfat != 2 {
		return "", nil, fmt.Errorf("BPB: %d sectors in %d bytes, %d a cluster, %d FATs", total, len(img), spc, nfat)
	}
	fat := img[rsvd*512:][:fatSz*512]
	if !bytes.Equal(fat, img[(rsvd+fatSz)*512:][:fatSz*512]) {
		return "", nil, fmt.Errorf("the FATs differ")
	}
	rootStart := (rsvd + nfat*fatSz) * 512
	dataStart := rootStart + rootEnt*32
	clusters := (len(img) - dataStart) / (spc * 512)
	if clusters >= 4085 || (clusters+2)*3/2 > len(fat) {
		return "", nil, fmt.Errorf("%d clusters, a FAT of %d bytes: not FAT12", clusters, len(fat))
	}
	next := func(c int) int {
		v := int(le.Uint16(fat[c*3/2:]))
		if c%2 == 1 {
			return v >> 4
		}
		return v & 0xFFF
	}
	var label string
	var files []readFile
	var long []uint16
	for at := rootStart; at < dataStart && img[at] != 0; at += 32 {
		d := img[at : at+32]
		switch {
		case d[11] == 0x0F:
			part := make([]uint16, 0, 13)
			for _, off := range []int{1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30} {
				part = append(part, le.Uint16(d[off:]))
			}
			long = append(part, long...) // the entries come last part first
			continue
		case d[11]&0x08 != 0:
			label = strings.TrimRight(string(d[:11]), " ")
			continue
		}
		var short [11]byte
		copy(short[:], d[:11])
		f := readFile{short: formatShort(short), long: long != nil}
		f.Name = f.short
		if long != nil {
			if img[at-32+13] != checksum(short) {
				return "", nil, fmt.Errorf("%q: the long name's checksum is not its short name's", f.short)
			}
			if i := indexOf(long, 0); i >= 0 {
				long = long[:i]
			}
			f.Name = string(utf16.Decode(long))
		}
		long = nil
		size, c := int(le.Uint32(d[28:])), int(le.Uint16(d[26:]))
		if size == 0 && c != 0 {
			return "", nil, fmt.Errorf("%q: empty, with cluster %d", f.Name, c)
		}
		for n := 0; size > 0; n++ {
			if c < 2 || c >= clusters+2 || n > clusters {
				return "", nil, fmt.Errorf("%q: cluster %d in its chain", f.Name, c)
			}
			off := dataStart + (c-2)*spc*512
			f.Data = append(f.Data, img[off:off+min(spc*512, size-len(f.Data))]...)
			if c = next(c); len(f.Data) == size {
				if c < 0xFF8 {
					return "", nil, fmt.Errorf("%q: its chain goes on past its size", f.Name)
				}
				break
			}
		}
		files = append(files, f)
	}
	return label, files, nil
}

func indexOf(s []uint16, v uint16) int {
	for i, u := range s {
		if u == v {
			return i
		}
	}
	return -1
}
