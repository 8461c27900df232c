package update

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnvRoundTrip(t *testing.T) {
	b, err := BootState{Slot: "a", Trial: "b"}.env().Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != EnvSize {
		t.Fatalf("boot.env is %d bytes, want %d", len(b), EnvSize)
	}
	// What U-Boot's env import needs: lines, "\n\0", NULs after.
	if want := "bonesync_slot=a\nbonesync_trial=b\n\x00"; !bytes.HasPrefix(b, []byte(want)) {
		t.Errorf("boot.env = %q", b[:40])
	}
	if got := readBootState(ParseEnv(b)); got != (BootState{Slot: "a", Trial: "b"}) {
		t.Errorf("read back %+v", got)
	}
	// What U-Boot's export writes after a trial, and damaged content.
	if got := readBootState(ParseEnv([]byte("bonesync_slot=b\nbonesync_tried=a\n\x00\x00"))); got != (BootState{Slot: "b", Tried: "a"}) {
		t.Errorf("U-Boot's export read as %+v", got)
	}
	if got := readBootState(ParseEnv(make([]byte, EnvSize))); got.Slot != "a" {
		t.Errorf("an empty boot.env reads as slot %q; the boot script takes a", got.Slot)
	}
	if _, err := (Env{"x": "a\nb"}).Bytes(); err == nil {
		t.Error("a value with a newline was written")
	}
	if _, err := (Env{"x": strings.Repeat("v", EnvSize)}).Bytes(); err == nil {
		t.Error("an environment larger than a sector was written")
	}
	info := SlotInfo{Version: "1.2", Kernel: 0x5322000, Initrd: 1234, DTB: 70096}
	sb, _ := info.Bytes()
	if got, ok := readSlotInfo(ParseEnv(sb)); !ok || got != info {
		t.Errorf("slot.env read back as %+v, %v", got, ok)
	}
	if _, ok := readSlotInfo(ParseEnv(make([]byte, EnvSize))); ok {
		t.Error("an emptied slot.env reads as bootable")
	}
}

func TestCmdline(t *testing.T) {
	for in, want := range map[string]Running{
		"panic=10 bonesync.slot=b bonesync.trial=1": {Slot: "b", Trial: true},
		"panic=10 bonesync.slot=a":                  {Slot: "a"},
		"console=ttyS0 bonesync.slot=c":             {},
		"":                                          {},
	} {
		if got := ParseCmdline(in); got != want {
			t.Errorf("ParseCmdline(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// TestBootScriptImage checks boot.scr as U-Boot's image_check_hcrc and
// image_check_dcrc do.
func TestBootScriptImage(t *testing.T) {
	img := BootScript(time.Unix(1700000000, 0))
	h := append([]byte(nil), img[:64]...)
	if binary.BigEndian.Uint32(h) != 0x27051956 {
		t.Fatal("no legacy image magic")
	}
	hcrc := binary.BigEndian.Uint32(h[4:])
	binary.BigEndian.PutUint32(h[4:], 0)
	if crc32.ChecksumIEEE(h) != hcrc {
		t.Error("header CRC")
	}
	data := img[64:]
	if int(binary.BigEndian.Uint32(h[12:])) != len(data) || crc32.ChecksumIEEE(data) != binary.BigEndian.Uint32(h[24:]) {
		t.Error("data size or CRC")
	}
	if h[30] != 6 {
		t.Error("not a script image")
	}
	if n := binary.BigEndian.Uint32(data); int(n) != len(BootScriptText) || !bytes.Equal(data[8:], []byte(BootScriptText)) {
		t.Error("script length table")
	}
	// Every variable the box writes is one the script reads.
	for _, v := range []string{varSlot, varTrial, varTried, varVersion, varKernel, varInitrd, varDTB, StateFile, SlotEnv} {
		if !strings.Contains(BootScriptText, v) {
			t.Errorf("the boot script does not use %s", v)
		}
	}
}

type memSink map[string]*bytes.Buffer

func (m memSink) Begin(f ManifestFile) (io.Writer, error) {
	m[f.Name] = &bytes.Buffer{}
	return m[f.Name], nil
}

func bundle(t *testing.T, files map[string]string) []byte {
	dir := t.TempDir()
	paths := map[string]string{}
	for n, c := range files {
		p := filepath.Join(dir, strings.ReplaceAll(n, "/", "_"))
		os.WriteFile(p, []byte(c), 0o644)
		paths[n] = p
	}
	var b bytes.Buffer
	if err := WriteBundle(&b, "9.9", []string{"qemu-virt"}, paths, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBundle(t *testing.T) {
	good := bundle(t, map[string]string{"zImage": "kernel", "initrd.img": "initrd", "dtbs/x.dtb": "dtb"})
	sink := memSink{}
	m, err := ReadBundle(bytes.NewReader(good), "qemu-virt", func(*Manifest) (Sink, error) { return sink, nil })
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != "9.9" || sink["initrd.img"].String() != "initrd" || sink["dtbs/x.dtb"].String() != "dtb" {
		t.Errorf("read %+v, %v", m, sink)
	}
	refuse := func(what string, b []byte, board string) {
		t.Helper()
		if _, err := ReadBundle(bytes.NewReader(b), board, func(*Manifest) (Sink, error) { return memSink{}, nil }); err == nil {
			t.Errorf("%s: accepted", what)
		} else {
			t.Logf("%s: %v", what, err)
		}
	}
	refuse("another board", good, "beaglebone-black")
	refuse("cut off", good[:len(good)-2048], "qemu-virt")
	damaged := bytes.Clone(good)
	i := bytes.Index(damaged, []byte("kernel"))
	damaged[i] = 'K'
	refuse("a damaged file", damaged, "qemu-virt")
	refuse("not a bundle", []byte("hello"), "qemu-virt")
	refuse("no kernel", func() []byte {
		defer func() { recover() }()
		var b bytes.Buffer
		if err := WriteBundle(&b, "1", []string{"qemu-virt"}, map[string]string{}, time.Now()); err == nil {
			t.Error("a bundle without a kernel was written")
		}
		return b.Bytes()
	}(), "qemu-virt")
	for _, m := range []Manifest{
		{Format: 1, Version: "1.0'; reset; echo '", Files: []ManifestFile{{Name: "zImage", Size: 1, SHA256: strings.Repeat("0", 64)}, {Name: "initrd.img", Size: 1, SHA256: strings.Repeat("0", 64)}}},
		{Format: 1, Version: "1", Files: []ManifestFile{{Name: "zImage", Size: 1, SHA256: strings.Repeat("0", 64)}, {Name: "initrd.img", Size: 1, SHA256: strings.Repeat("0", 64)},
			{Name: "dtbs/a.dtb", Size: 1, SHA256: strings.Repeat("0", 64)}, {Name: "dtbs/b.dtb", Size: 1, SHA256: strings.Repeat("0", 64)}}},
		{Format: 1, Version: "1", Files: []ManifestFile{{Name: "zImage", Size: 1, SHA256: strings.Repeat("0", 64)}, {Name: "initrd.img", Size: 1, SHA256: strings.Repeat("0", 64)}, {Name: "dtbs/..", Size: 1, SHA256: strings.Repeat("0", 64)}}},
	} {
		if err := m.check(""); err == nil {
			t.Errorf("manifest %+v accepted", m)
		}
	}
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("x"), 0o644)
	if err := WriteBundle(io.Discard, "1", nil, map[string]string{"zImage": p, "initrd.img": p, "etc/passwd": p}, time.Now()); err == nil {
		t.Error("a bundle with a file no slot has room for was written")
	}
}
