package update

import (
	"archive/tar"
	"bytes"
	"crypto/ed25519"
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
	if len(b) != envSize {
		t.Fatalf("boot.env is %d bytes, want %d", len(b), envSize)
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
	if got := readBootState(ParseEnv(make([]byte, envSize))); got.Slot != "a" {
		t.Errorf("an empty boot.env reads as slot %q; the boot script takes a", got.Slot)
	}
	if _, err := (Env{"x": "a\nb"}).Bytes(); err == nil {
		t.Error("a value with a newline was written")
	}
	if _, err := (Env{"x": strings.Repeat("v", envSize)}).Bytes(); err == nil {
		t.Error("an environment larger than a sector was written")
	}
	info := SlotInfo{Version: "1.2", Kernel: 0x5322000, Initrd: 1234, DTB: 70096}
	sb, _ := info.Bytes()
	if got, ok := readSlotInfo(ParseEnv(sb)); !ok || got != info {
		t.Errorf("slot.env read back as %+v, %v", got, ok)
	}
	if _, ok := readSlotInfo(ParseEnv(make([]byte, envSize))); ok {
		t.Error("an emptied slot.env reads as bootable")
	}
}

func TestCmdline(t *testing.T) {
	for in, want := range map[string]Running{
		"panic=10 bonesync.slot=b bonesync.trial=1": {Slot: "b", Trial: true},
		"panic=10 bonesync.slot=a":                  {Slot: "a"},
		"bonesync.slot=a bonesync.boot=0B0E5EED-01": {Slot: "a", Boot: "0b0e5eed-01"},
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
	for _, v := range []string{varSlot, varTrial, varTried, varMoved, varVersion, varKernel, varInitrd, varDTB, StateFile, SlotEnv} {
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

// testKey signs the tests' bundles; testKeys trusts it.
var (
	testKey  = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	testKeys = []Key{Key(testKey.Public().(ed25519.PublicKey))}
	otherKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, ed25519.SeedSize))
)

func bundle(t *testing.T, files map[string]string) []byte {
	return bundleSigned(t, files, testKey)
}

func bundleSigned(t *testing.T, files map[string]string, key ed25519.PrivateKey) []byte {
	return bundleOf(t, "9.9", files, key)
}

// bundleOf is a bundle of version v, for qemu-virt, signed with key.
func bundleOf(t *testing.T, v string, files map[string]string, key ed25519.PrivateKey) []byte {
	dir := t.TempDir()
	paths := map[string]string{}
	for n, c := range files {
		p := filepath.Join(dir, strings.ReplaceAll(n, "/", "_"))
		os.WriteFile(p, []byte(c), 0o644)
		paths[n] = p
	}
	var b bytes.Buffer
	if err := WriteBundle(&b, v, []string{"qemu-virt"}, paths, time.Unix(0, 0), key); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBundle(t *testing.T) {
	good := bundle(t, map[string]string{"zImage": "kernel", "initrd.img": "initrd", "dtbs/x.dtb": "dtb"})
	sink := memSink{}
	m, err := ReadBundle(bytes.NewReader(good), "qemu-virt", testKeys, func(*Manifest) (Sink, error) { return sink, nil })
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != "9.9" || sink["initrd.img"].String() != "initrd" || sink["dtbs/x.dtb"].String() != "dtb" {
		t.Errorf("read %+v, %v", m, sink)
	}
	refuse := func(what string, b []byte, board string) {
		t.Helper()
		if _, err := ReadBundle(bytes.NewReader(b), board, testKeys, func(*Manifest) (Sink, error) { return memSink{}, nil }); err == nil {
			t.Errorf("%s: accepted", what)
		} else {
			t.Logf("%s: %v", what, err)
		}
	}
	files := map[string]string{"zImage": "kernel", "initrd.img": "initrd"}
	refuse("an unsigned bundle", bundleSigned(t, files, nil), "qemu-virt")
	refuse("a bundle signed by another key", bundleSigned(t, files, otherKey), "qemu-virt")
	edited := bytes.Clone(good)
	i := bytes.Index(edited, []byte(`"9.9"`))
	edited[i+1] = '8' // the version, in the signed manifest
	refuse("a manifest changed after signing", edited, "qemu-virt")
	var big bytes.Buffer
	tw := tar.NewWriter(&big)
	tw.WriteHeader(&tar.Header{Name: ManifestName, Size: maxManifest + 1, Mode: 0o644})
	tw.Write(make([]byte, maxManifest+1))
	tw.Close()
	if _, err := ReadBundle(&big, "qemu-virt", testKeys, nil); err == nil || !strings.Contains(err.Error(), "65537 bytes; a manifest is at most 65536") {
		t.Errorf("a manifest over 64 KiB: %v", err)
	}
	refuse("another board", good, "beaglebone-black")
	refuse("cut off", good[:len(good)-2048], "qemu-virt")
	damaged := bytes.Clone(good)
	i = bytes.Index(damaged, []byte("kernel"))
	damaged[i] = 'K'
	refuse("a damaged file", damaged, "qemu-virt")
	refuse("not a bundle", []byte("hello"), "qemu-virt")
	refuse("no kernel", func() []byte {
		defer func() { recover() }()
		var b bytes.Buffer
		if err := WriteBundle(&b, "1", []string{"qemu-virt"}, map[string]string{}, time.Now(), testKey); err == nil {
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
	if err := WriteBundle(io.Discard, "1", nil, map[string]string{"zImage": p, "initrd.img": p, "etc/passwd": p}, time.Now(), testKey); err == nil {
		t.Error("a bundle with a file no slot has room for was written")
	}
}

func TestKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.key")
	made, err := SigningKey(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := SigningKey(path)
	if err != nil || !made.Equal(again) {
		t.Fatalf("the key read back differs: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the private key is mode %v", fi.Mode().Perm())
	}
	pub, err := os.ReadFile(publicKeyFile(path))
	if err != nil {
		t.Fatal(err)
	}
	state := ownerTrusts(t)
	for range 2 { // the second is a no-op
		if k, err := Trust(state, string(pub)); err != nil || !bytes.Equal(k, made.Public().(ed25519.PublicKey)) {
			t.Fatalf("Trust: %v", err)
		}
	}
	if keys, err := Trusted(state); err != nil || len(keys) != 2 {
		t.Errorf("trusted after adding one key twice: %v %v", keys, err)
	}
	for _, bad := range []string{"", "ssh-ed25519 AAAA", "ed25519 !!", "ed25519 " + strings.Repeat("A", 40)} {
		if _, err := Trust(state, bad); err == nil {
			t.Errorf("%q trusted", bad)
		}
	}
	os.WriteFile(filepath.Join(state, OwnerKeys), []byte("# comment\n\ned25519 junk\n"), 0o644)
	if _, err := Trusted(state); err == nil || !strings.Contains(err.Error(), ":3:") {
		t.Errorf("a damaged keys file: %v", err)
	}
}

// U-Boot's hush takes a single quote as the start of a quoted string even
// inside double quotes: one in an echo's text is a syntax error that
// fails the whole script (and the card does not boot).
func TestBootScriptHasNoSingleQuote(t *testing.T) {
	if i := strings.IndexByte(BootScriptText, '\''); i >= 0 {
		t.Errorf("the boot script has a single quote at %d: %q", i, BootScriptText[max(0, i-40):i+1])
	}
}
