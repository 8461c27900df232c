package main

// Checks of the image `make image` wrote (BONESYNC_IMAGE), as the board's
// boot ROM and a careful user would make them, and a second build that must
// give the same bytes.

import (
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/board"
)

func builtImage(t *testing.T) string {
	t.Helper()
	img := os.Getenv("BONESYNC_IMAGE")
	if img == "" {
		img = "../out/bonesync-bbb.img"
	}
	if _, err := os.Stat(img); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: %v (make image)", img, err)
		}
		t.Skipf("no image at %s (make image)", img)
	}
	return img
}

// signingKey is the key the image's bundles were signed with (make image's
// UPDATE_KEY).
func signingKey(img string) string {
	if k := os.Getenv("UPDATE_KEY"); k != "" {
		return k
	}
	return filepath.Join(filepath.Dir(img), "update-signing.key")
}

func TestImageLayout(t *testing.T) {
	img := builtImage(t)
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := readLayout(f)
	if err != nil {
		t.Fatal(err)
	}
	if !l.bootActive || l.bootType != typeFAT32LBA || l.bootStart != partStart || l.bootSize != bootSectors {
		t.Errorf("partition 1 = %+v, want active FAT32 LBA at %d, %d sectors", l, partStart, bootSectors)
	}
	if l.dataType != typeLinux || l.dataStart != partStart+bootSectors {
		t.Errorf("partition 2 = %+v", l)
	}
	// verify() is what the build ran; run it again on the file as written.
	o := &options{work: t.TempDir(), log: io.Discard}
	if err := verify(o, img); err != nil {
		t.Errorf("verify: %v", err)
	}
}

// bootFile reads a file from the image's FAT partition with mtools.
func bootFile(t *testing.T, img, name string) []byte {
	t.Helper()
	out, err := exec.Command("mtype", "-i", img+"@@"+strconv.Itoa(partStart*512), "::/"+name).Output()
	if err != nil {
		t.Fatalf("mtype %s: %v", name, err)
	}
	return out
}

func TestBootPartition(t *testing.T) {
	img := builtImage(t)
	if scr := bootFile(t, img, "boot.scr"); len(scr) < 72 || !bytes.Equal(scr[72:], []byte(update.BootScriptText)) {
		t.Errorf("boot.scr does not hold the boot script")
	}
	bbb0, _ := board.Load("beaglebone-black")
	for _, slot := range []string{"a", "b"} {
		dir := update.SlotDir(slot)
		env := update.ParseEnv(bootFile(t, img, dir+"/"+update.SlotEnv))
		for _, name := range []string{update.KernelFile, update.InitrdFile, update.DTBDir + "/" + bbb0.DTB} {
			if f := bootFile(t, img, dir+"/"+name); int64(len(f)) != update.Capacity(name) {
				t.Errorf("%s/%s is %d bytes, not made at its capacity %d", dir, name, len(f), update.Capacity(name))
			}
		}
		if env["bonesync_kernel"] == "" || env["bonesync_initrd"] == "" || env["bonesync_version"] == "" {
			t.Errorf("%s/slot.env = %v", dir, env)
		}
	}
	if st := update.ParseEnv(bootFile(t, img, update.StateFile)); st["bonesync_slot"] != "a" {
		t.Errorf("boot.env = %v", st)
	}
	conf := bootFile(t, img, "bonesync.conf")
	c, probs := config.Parse("bonesync.conf", bytes.NewReader(conf))
	if len(probs) != 0 || c.Hostname != config.Default().Hostname {
		t.Errorf("the config on the card: %v", probs)
	}
	if !bytes.Contains(conf, []byte("#hostname = bonesync")) {
		t.Error("the config on the card does not list hostname, commented out")
	}
	bbb, _ := board.Load("beaglebone-black")
	if dtb := bootFile(t, img, "slot-a/dtbs/"+bbb.DTB); len(dtb) < 1000 || string(dtb[:4]) != "\xd0\x0d\xfe\xed" {
		t.Error("the board's DTB is missing or not a flattened device tree")
	}
	if mlo := bootFile(t, img, "MLO"); len(mlo) < 10000 {
		t.Errorf("MLO is %d bytes", len(mlo))
	}
}

func TestInitramfs(t *testing.T) {
	img := builtImage(t)
	gz, err := gzip.NewReader(bytes.NewReader(bootFile(t, img, "slot-a/initrd.img")))
	if err != nil {
		t.Fatal(err)
	}
	gz.Multistream(false) // the slot's file is zero-filled after the archive
	raw, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]cpio.Record{}
	for _, r := range recs {
		have[r.Name] = r
	}
	if r, ok := have["init"]; !ok || r.Mode&0o111 == 0 {
		t.Error("no executable /init")
	}
	if r, ok := have["dev/console"]; !ok || r.Rmajor != 5 || r.Rminor != 1 {
		t.Error("no /dev/console (5,1)")
	}
	var kos int
	var dep string
	for name := range have {
		if strings.HasSuffix(name, ".ko") {
			kos++
		}
		if strings.HasSuffix(name, "/modules.dep") {
			dep = name
		}
	}
	if kos < 20 || dep == "" {
		t.Errorf("%d modules and modules.dep %q", kos, dep)
	}
	// The image trusts the key its bundle is signed with, and that bundle
	// checks against it.
	keysFile := filepath.Join(t.TempDir(), "keys")
	r, ok := have[strings.TrimPrefix(update.BuiltInKeys, "/")]
	if !ok {
		t.Fatalf("the initramfs has no %s", update.BuiltInKeys)
	}
	content, _ := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
	os.WriteFile(keysFile, content, 0o644)
	keys, err := update.ReadKeys(keysFile)
	if err != nil || len(keys) != 1 {
		t.Fatalf("%s: %v %v", update.BuiltInKeys, keys, err)
	}
	priv, err := update.SigningKey(signingKey(img))
	if err != nil || !bytes.Equal(keys[0], priv.Public().(ed25519.PublicKey)) {
		t.Errorf("the image trusts %s, not the signing key (%v)", keys[0].Fingerprint(), err)
	}
	b, err := os.Open(strings.TrimSuffix(img, ".img") + ".update")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := update.ReadBundle(b, "beaglebone-black", keys, func(*update.Manifest) (update.Sink, error) { return discardSink{}, nil }); err != nil {
		t.Errorf("the image's own bundle: %v", err)
	}
	// The USB device port's gadget functions (board.json's usb_device).
	for _, want := range []string{"ti_cpsw_new", "sdhci-omap", "virtio_net", "crc32c_generic", "ext4",
		"libcomposite", "usb_f_rndis", "usb_f_ecm", "usb_f_acm", "usb_f_mass_storage"} {
		found := false
		for name := range have {
			if strings.Contains(strings.ReplaceAll(name, "-", "_"), strings.ReplaceAll(want, "-", "_")+".ko") {
				found = true
			}
		}
		if !found {
			t.Errorf("initramfs lacks %s.ko", want)
		}
	}
}

// Two builds from the same inputs give the same bytes.
func TestReproducible(t *testing.T) {
	img := builtImage(t)
	if os.Getenv("SOURCE_DATE_EPOCH") == "" {
		t.Skip("SOURCE_DATE_EPOCH unset: make test-image sets it as make image did")
	}
	outDir := filepath.Dir(img)
	want, err := os.ReadFile(filepath.Join(outDir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	again := t.TempDir()
	start := time.Now()
	err = run([]string{"-cache", filepath.Join(outDir, "cache"), "-binary", filepath.Join(outDir, "bonesync-armv7"),
		"-out", again, "-lock", "../scripts/boot-packages.lock", "-sign-key", signingKey(img),
		"-version", update.ParseEnv(bootFile(t, img, "slot-a/slot.env"))["bonesync_version"]}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(again, "SHA256SUMS"))
	if !bytes.Equal(got, want) {
		t.Errorf("a second build differs:\nfirst\n%s\nsecond\n%s", want, got)
	}
	t.Logf("second build took %v", time.Since(start).Round(time.Second))
}

type discardSink struct{}

func (discardSink) Begin(update.ManifestFile) (io.Writer, error) { return io.Discard, nil }
