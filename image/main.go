// Command image writes the bonesync SD-card image for the BeagleBone Black,
// without root or loop devices, from the very files a user would trust:
// Debian's armhf kernel and U-Boot packages (scripts/fetch-boot.sh) and the
// bonesync ARMv7 binary.
//
// The stages, in order, each in its own file:
//
//	extract.go    the pinned .debs, unpacked; depmod for modules.dep/alias
//	drivers.go    prove every device the board needs has a driver
//	bootloader.go prove the board's U-Boot runs the boot script
//	initramfs.go  /init (bonesync) and the modules it needs, as a cpio
//	bootfs.go     the FAT boot partition: MLO first, U-Boot, kernel, DTBs, config
//	datafs.go     the ext4 data partition (grown to fill the card at first boot)
//	disk.go       the MBR and the partitions put together
//	verify.go     the checks the AM335x boot ROM and fsck would make
//	bundle.go     the update bundle: the same kernel, DTB and initramfs
//	outputs.go    .img.xz, .bmap and SHA256SUMS
//
// Two runs with the same inputs and SOURCE_DATE_EPOCH write the same bytes.
package main

import (
	"crypto/ed25519"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bonesync/bonesync/appliance/kmod"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/board"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

// options are the builder's inputs.
type options struct {
	cache, out, binary, name, lock string
	version                        string // the release, in the slots and the bundle
	signKey                        string // the Ed25519 key bundles are signed with (made if missing)
	key                            ed25519.PrivateKey
	updateOnly                     bool // the bundle, no card image
	board                          *board.Board
	others                         []*board.Board // boards the same initramfs also serves
	epoch                          time.Time
	work                           string
	log                            io.Writer
}

func run(args []string, log io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	o := options{log: log}
	boardName := fs.String("board", "beaglebone-black", "the board the card is for")
	fs.StringVar(&o.cache, "cache", "out/cache", "where scripts/fetch-boot.sh put the packages")
	fs.StringVar(&o.out, "out", "out", "output directory")
	fs.StringVar(&o.binary, "binary", "out/bonesync-armv7", "the bonesync ARMv7 binary (make build-arm)")
	fs.StringVar(&o.name, "name", "bonesync-bbb", "image name")
	fs.StringVar(&o.lock, "lock", "scripts/boot-packages.lock", "pinned packages")
	fs.StringVar(&o.version, "version", "unknown", "the release (the Makefile's VERSION), in the slots and the update bundle")
	fs.StringVar(&o.signKey, "sign-key", "out/update-signing.key", "the Ed25519 key (PEM) the update bundle is signed with and the image trusts; made there, with .pub beside it, if missing. Keep it out of git and safe: whoever holds it can update every box made with it")
	fs.BoolVar(&o.updateOnly, "update-only", false, "write only the update bundle, not the card image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.key, err = update.SigningKey(o.signKey); err != nil {
		return fmt.Errorf("the update signing key: %w", err)
	}
	if o.board, err = board.Load(*boardName); err != nil {
		return err
	}
	all, err := board.All()
	if err != nil {
		return err
	}
	for _, b := range all {
		if b.Name != o.board.Name {
			o.others = append(o.others, b)
		}
	}
	o.epoch = time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
		}
		o.epoch = time.Unix(n, 0).UTC()
	}
	if o.work, err = os.MkdirTemp("", "bonesync-image-"); err != nil {
		return err
	}
	defer os.RemoveAll(o.work)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	return build(&o)
}

// build runs the stages.
func build(o *options) error {
	pkgs, err := extract(o)
	if err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	mods, err := kmod.ReadModules(pkgs.moduleDir)
	if err != nil {
		return err
	}
	included, err := moduleSet(o, mods)
	if err != nil {
		return err
	}
	if err := checkDrivers(o, pkgs, mods, included); err != nil {
		return err
	}
	if err := checkBootloaders(o, pkgs); err != nil {
		return err
	}
	initrd := filepath.Join(o.work, "initrd.img")
	if err := writeInitramfs(o, pkgs, mods, included, initrd); err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	if err := writeBundle(o, pkgs, initrd); err != nil {
		return fmt.Errorf("update bundle: %w", err)
	}
	if o.updateOnly {
		return nil
	}
	bootImg := filepath.Join(o.work, "boot.vfat")
	if err := writeBootFS(o, pkgs, initrd, bootImg); err != nil {
		return fmt.Errorf("boot partition: %w", err)
	}
	dataImg := filepath.Join(o.work, "data.ext4")
	if err := writeDataFS(o, dataImg); err != nil {
		return fmt.Errorf("data partition: %w", err)
	}
	img := filepath.Join(o.out, o.name+".img")
	if err := writeDisk(o, bootImg, dataImg, img); err != nil {
		return fmt.Errorf("disk image: %w", err)
	}
	if err := verify(o, img); err != nil {
		return fmt.Errorf("verify %s: %w", img, err)
	}
	if err := writeOutputs(o, img, filepath.Join(o.out, o.name+".update")); err != nil {
		return err
	}
	fmt.Fprintf(o.log, "image: wrote %s (+ .xz, .bmap, .update, SHA256SUMS)\n", img)
	return nil
}
