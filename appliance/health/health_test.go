package health

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeSys is a sysfs with one SD card, mmcblk0, whose partition 2 holds
// the directory data.
func fakeSys(t *testing.T) (sys, data string) {
	t.Helper()
	root := t.TempDir()
	sys, data = filepath.Join(root, "sys"), filepath.Join(root, "data")
	os.MkdirAll(data, 0o755)
	var st unix.Stat_t
	if err := unix.Stat(data, &st); err != nil {
		t.Fatal(err)
	}
	card := filepath.Join(sys, "devices/platform/ocp/48060000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0")
	for p, v := range map[string]string{
		"mmcblk0p2/partition": "2\n",
		"stat":                "1000 0 80000 300 500 20 64000 900 0 700 1200 0 0 0 0\n",
		"device/name":         "SL16G\n",
		"device/date":         "03/2019\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(card, p)), 0o755)
		os.WriteFile(filepath.Join(card, p), []byte(v), 0o644)
	}
	os.MkdirAll(filepath.Join(sys, "dev/block"), 0o755)
	os.MkdirAll(filepath.Join(sys, "block"), 0o755)
	os.Symlink(filepath.Join(card, "mmcblk0p2"), filepath.Join(sys, "dev/block", fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))))
	os.Symlink(card, filepath.Join(sys, "block/mmcblk0"))
	ext4 := filepath.Join(sys, "fs/ext4/mmcblk0p2")
	os.MkdirAll(ext4, 0o755)
	os.WriteFile(filepath.Join(ext4, "errors_count"), []byte("0\n"), 0o644)
	return sys, data
}

func TestDiskOfFindsThePartitionAndItsDisk(t *testing.T) {
	sys, data := fakeSys(t)
	d, err := diskOf(data, sys)
	if err != nil {
		t.Fatal(err)
	}
	if d.Part != "mmcblk0p2" || d.Whole != "mmcblk0" {
		t.Fatalf("disk %+v, want mmcblk0p2 on mmcblk0", d)
	}
	c, err := d.Counters()
	if err != nil || c.Writes != 500 || c.WrittenSectors != 64000 || c.ReadSectors != 80000 {
		t.Fatalf("counters %+v %v", c, err)
	}
	if id := d.Identity(); id.Name != "SL16G" || id.Date != "03/2019" || id.Wear != "" {
		t.Fatalf("identity %+v", id)
	}
	if _, err := diskOf(data, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a block device") {
		t.Fatalf("a path on no block device: %v", err)
	}
}

func TestIdentityOfAnEMMCSaysItsWear(t *testing.T) {
	sys := t.TempDir()
	dev := filepath.Join(sys, "block/mmcblk1/device")
	os.MkdirAll(dev, 0o755)
	os.WriteFile(filepath.Join(dev, "name"), []byte("MMC04G\n"), 0o644)
	os.WriteFile(filepath.Join(dev, "life_time"), []byte("0x02 0x03\n"), 0o644)
	os.WriteFile(filepath.Join(dev, "pre_eol_info"), []byte("0x01\n"), 0o644)
	d := Disk{Part: "mmcblk1p1", Whole: "mmcblk1", sys: sys}
	if id := d.Identity(); id.Wear != "life used 20-30%" || id.WearWarning {
		t.Fatalf("identity %+v", id)
	}
	os.WriteFile(filepath.Join(dev, "pre_eol_info"), []byte("0x02\n"), 0o644)
	if id := d.Identity(); id.Wear != "life used 20-30%, spare blocks 80% used" || !id.WearWarning {
		t.Fatalf("identity %+v", id)
	}
}

// records is the kernel's log as /dev/kmsg reads: one record per Read.
type records struct{ lines []string }

func (r *records) Read(p []byte) (int, error) {
	if len(r.lines) == 0 {
		return 0, syscall.EAGAIN
	}
	n := copy(p, r.lines[0])
	r.lines = r.lines[1:]
	return n, nil
}

func TestKernelErrorsAreTheDisksOnly(t *testing.T) {
	log := []string{
		"6,100,1000,-;mmcblk0: mmc0:aaaa SL16G 14.8 GiB\n",
		"6,101,1001,-;EXT4-fs (mmcblk0p2): mounted filesystem r/w with ordered data mode. Opts: errors=remount-ro\n",
		"3,102,1002,-;I/O error, dev mmcblk0, sector 1234 op 0x1:(WRITE) flags 0x0 phys_seg 1 prio class 0\n SUBSYSTEM=block\n DEVICE=b179:0\n",
		"3,103,1003,-;I/O error, dev sda, sector 8 op 0x0:(READ)\n",
		"3,104,1004,-;mmcblk0: error -110 transferring data, sector 2048, nr 8, cmd response 0x900, card status 0xc00\n",
		"2,105,1005,-;EXT4-fs error (device mmcblk0p2): ext4_find_entry:1455: inode #2: comm bonesync: reading directory lblock 0\n",
		"3,106,1006,-;mmcblk0boot0: error -5 reading\n",
		"3,107,1007,-;mmcblk01: error -5, another disk\n",
		"3,108,1008,-;mmcblk0pfoo: error -5, not a partition\n",
		"5,109,1009,-;EXT4-fs (mmcblk0p2): error count since last fsck: 3\n",
		"4,110,1010,-;EXT4-fs (mmcblk0p2): warning: mounting fs with errors, running e2fsck is recommended\n",
	}
	found, last, err := kernelErrors(&records{lines: log}, "mmcblk0", 0)
	if err != nil || last != 110 {
		t.Fatalf("last %d, %v", last, err)
	}
	var seqs []uint64
	for _, f := range found {
		seqs = append(seqs, f.Seq)
	}
	if fmt.Sprint(seqs) != "[102 104 105 106]" {
		t.Fatalf("errors at %v, want [102 104 105 106]", seqs)
	}
	if found[0].Message != "I/O error, dev mmcblk0, sector 1234 op 0x1:(WRITE) flags 0x0 phys_seg 1 prio class 0" {
		t.Fatalf("message %q", found[0].Message)
	}
	found, _, _ = kernelErrors(&records{lines: log}, "mmcblk0", 104)
	if len(found) != 2 || found[0].Seq != 105 {
		t.Fatalf("after 104: %+v", found)
	}
	if found, _, _ := kernelErrors(&records{lines: log}, "sd", 0); len(found) != 0 {
		t.Fatalf("sd is not sda: %+v", found)
	}
	usb := []string{"3,1,1,-;I/O error, dev sdb1, sector 8\n", "3,2,1,-;sdaa: error\n", "3,3,1,-;Buffer I/O error on dev sdb, logical block 0\n"}
	if found, _, _ := kernelErrors(&records{lines: usb}, "sdb", 0); len(found) != 2 || found[1].Seq != 3 {
		t.Fatalf("sdb: %+v", found)
	}
}

func TestSampleAddsUpWritesAcrossBoots(t *testing.T) {
	sys, data := fakeSys(t)
	d, _ := diskOf(data, sys)
	stat := filepath.Join(sys, "block/mmcblk0/stat")
	setWritten := func(sectors int64) {
		os.WriteFile(stat, fmt.Appendf(nil, "1 0 8 0 1 0 %d 0 0 0 0 0 0 0 0\n", sectors), 0o644)
	}
	boot := "boot-1"
	var kernel []string
	l := &Log{Dir: t.TempDir(),
		bootID: func() (string, error) { return boot, nil },
		kmsg: func(whole string, after uint64) ([]KernelError, uint64, error) {
			return kernelErrors(&records{lines: append([]string(nil), kernel...)}, whole, after)
		}}
	day1 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)

	setWritten(2048) // 1 MiB since boot
	r, err := l.Sample(d, day1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Written != 1<<20 || r.Problem() != "" || !strings.HasSuffix(r.String(), "; no errors") {
		t.Fatalf("first sample: %d bytes, %q", r.Written, r.String())
	}
	setWritten(4096) // 1 MiB more, the next day
	r, _ = l.Sample(d, day1.Add(2*time.Hour))
	setWritten(1024) // rebooted: 512 KiB since
	boot = "boot-2"
	kernel = []string{"3,7,100,-;I/O error, dev mmcblk0, sector 99 op 0x1:(WRITE) flags 0x0\n"}
	r, _ = l.Sample(d, day1.Add(3*time.Hour))
	if r.Written != 5<<19 || len(r.Days) != 2 || r.Days[1].Written != 3<<19 {
		t.Fatalf("after a reboot: %d bytes, days %+v", r.Written, r.Days)
	}
	if r.IOErrors != 1 || !strings.Contains(r.Problem(), "1 I/O errors (the last: I/O error, dev mmcblk0, sector 99") {
		t.Fatalf("errors: %d, %q", r.IOErrors, r.Problem())
	}
	r, _ = l.Sample(d, day1.Add(4*time.Hour)) // the same line is not counted again
	if r.IOErrors != 1 || r.WrittenIn(1, day1.Add(4*time.Hour)) != 3<<19 || r.WrittenIn(7, day1.Add(4*time.Hour)) != 5<<19 {
		t.Fatalf("again: %d errors, %d today", r.IOErrors, r.WrittenIn(1, day1.Add(4*time.Hour)))
	}
	if got, ok := (&Log{Dir: l.Dir}).Read("mmcblk0"); !ok || got.IOErrors != 1 || got.Written != r.Written {
		t.Fatalf("kept: %+v %v", got, ok)
	}
	if s := r.String(); !strings.HasPrefix(s, "mmcblk0 (SL16G, made 03/2019): 2.6 MB written in 7 days, 2.6 MB since 2026-11-30; WARNING: 1 I/O errors") {
		t.Fatalf("status line %q", s)
	}
}

// TestFSErrorsOfARealExt4 mounts an ext4 whose superblock has recorded
// errors (as ext4 does when it meets one) and reads them through the
// kernel's sysfs, with the disk found from a path on it.
func TestFSErrorsOfARealExt4(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a loop device")
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	mnt := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("truncate", "-s", "16M", img)
	run("mkfs.ext4", "-q", "-F", img)
	when := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).Unix()
	for _, set := range []string{"error_count 3", fmt.Sprintf("first_error_time @%d", when), fmt.Sprintf("last_error_time @%d", when+60)} {
		run("debugfs", "-w", "-R", "ssv "+set, img)
	}
	run("mount", "-o", "loop", img, mnt)
	defer exec.Command("umount", mnt).Run()
	d, err := DiskOf(mnt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Whole, "loop") || d.Part != d.Whole {
		t.Fatalf("disk %+v, want an unpartitioned loop device", d)
	}
	fe, ok := d.FSErrors()
	if !ok || fe.Count != 3 || fe.First.Unix() != when || fe.Last.Unix() != when+60 {
		t.Fatalf("file system errors %+v %v, want 3 from %d", fe, ok, when)
	}
	if _, err := d.Counters(); err != nil {
		t.Fatal(err)
	}
}

// TestReadKernelLogReadsToItsEnd writes an error line into the kernel's
// log (root may) and reads it back from /dev/kmsg, which must end at the
// newest record rather than wait for the next.
func TestReadKernelLogReadsToItsEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: writes to the kernel's log")
	}
	disk := fmt.Sprintf("bstest%d", time.Now().UnixNano()%1e6)
	if err := os.WriteFile("/dev/kmsg", []byte("<3>I/O error, dev "+disk+", sector 42 op 0x1:(WRITE)\n"), 0); err != nil {
		t.Skipf("the kernel's log is not writable here: %v", err)
	}
	found, last, err := readKernelLog(disk, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.Contains(found[0].Message, "dev "+disk+", sector 42") || last < found[0].Seq {
		t.Fatalf("found %+v, last %d", found, last)
	}
	if again, _, _ := readKernelLog(disk, last); len(again) != 0 {
		t.Fatalf("read again after %d: %+v", last, again)
	}
}

// A sample of a disk written less than saveAfter since the last save is
// not saved (an idle box writes nothing), and what it saw is counted at
// the next save.
func TestSampleOfAnIdleDiskWritesNothing(t *testing.T) {
	sys, data := fakeSys(t)
	d, _ := diskOf(data, sys)
	stat := filepath.Join(sys, "block/mmcblk0/stat")
	setWritten := func(sectors int64) {
		os.WriteFile(stat, fmt.Appendf(nil, "1 0 8 0 1 0 %d 0 0 0 0 0 0 0 0\n", sectors), 0o644)
	}
	l := &Log{Dir: t.TempDir(), bootID: func() (string, error) { return "b", nil },
		kmsg: func(string, uint64) ([]KernelError, uint64, error) { return nil, 0, nil }}
	file := filepath.Join(l.Dir, "mmcblk0.json")
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	setWritten(100)
	l.Sample(d, now)
	saved, _ := os.ReadFile(file)
	setWritten(300) // 100 KiB: less than saveAfter
	r, err := l.Sample(d, now.Add(time.Hour))
	if err != nil || r.Written != 300*512 {
		t.Fatalf("sample: %d bytes, %v", r.Written, err)
	}
	if now, _ := os.ReadFile(file); string(now) != string(saved) {
		t.Fatalf("an idle disk's sample was saved:\n%s", now)
	}
	if all := l.ReadAll(); len(all) != 1 || all[0].Written != 300*512 {
		t.Fatalf("ReadAll gives %+v, not the newest sample", all)
	}
	setWritten(300 + 4096) // 2 MiB more
	l.Sample(d, now.Add(2*time.Hour))
	if r, _ := (&Log{Dir: l.Dir}).Read("mmcblk0"); r.Written != (300+4096)*512 {
		t.Fatalf("saved %d bytes, want every sector since the first sample", r.Written)
	}
}

// Final saves whatever was written (at shutdown: the counters start again
// at the next boot), and Told keeps the count the admin was told of.
func TestFinalSavesAndToldIsKept(t *testing.T) {
	sys, data := fakeSys(t)
	d, _ := diskOf(data, sys)
	l := &Log{Dir: t.TempDir(), bootID: func() (string, error) { return "b", nil },
		kmsg: func(string, uint64) ([]KernelError, uint64, error) { return nil, 0, nil }}
	stat := filepath.Join(sys, "block/mmcblk0/stat")
	os.WriteFile(stat, []byte("1 0 8 0 1 0 100 0 0 0 0 0 0 0 0\n"), 0o644)
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	l.Sample(d, now)
	os.WriteFile(stat, []byte("1 0 8 0 1 0 300 0 0 0 0 0 0 0 0\n"), 0o644)
	l.Final(d, now.Add(time.Hour))
	if r, _ := (&Log{Dir: l.Dir}).Read("mmcblk0"); r.Written != 300*512 {
		t.Fatalf("after Final the saved report has %d bytes, want %d", r.Written, 300*512)
	}
	if err := l.Told("mmcblk0", 4); err != nil {
		t.Fatal(err)
	}
	if r, _ := (&Log{Dir: l.Dir}).Read("mmcblk0"); r.Told != 4 {
		t.Fatalf("told %d", r.Told)
	}
	if all := l.ReadAll(); all[0].Told != 4 {
		t.Fatalf("the newest sample says told %d", all[0].Told)
	}
}
