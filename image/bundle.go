package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bonesync/bonesync/appliance/update"
)

// writeBundle writes NAME.update: the kernel, DTB and initramfs a slot
// holds, with a manifest of their sizes and SHA-256 and the version, for
// `bonesync update` and /admin/update, signed with the -sign-key key (the
// one the initramfs trusts). It names every board the initramfs serves.
//
// The version must be one a box can order (update.CheckVersion): a box
// refuses a bundle older than the highest version it has run, and one
// whose version it cannot order.
func writeBundle(o *options, p *packages, initrd string) error {
	if err := update.CheckVersion(o.version); err != nil {
		return fmt.Errorf("the update bundle: %w (give -version, as make image does from VERSION)", err)
	}
	out := filepath.Join(o.out, o.name+".update")
	f, err := os.Create(out + ".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(out + ".tmp")
	boards := []string{o.board.Name}
	for _, b := range o.others {
		boards = append(boards, b.Name)
	}
	if err := update.WriteBundle(f, o.version, boards, slotFiles(o, p, initrd), o.epoch, o.key); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	fmt.Fprintf(o.log, "image: wrote %s (version %s)\n", out, o.version)
	return nil
}
