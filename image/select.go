package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bonesync/bonesync/appliance/kmod"
	"github.com/bonesync/bonesync/board"
)

// moduleSet is every module the initramfs carries: for each board the
// image serves, its listed modules, its USB device port's gadget functions
// and the drivers of its devices, with their dependencies.
func moduleSet(o *options, m *kmod.Modules) ([]string, error) {
	var names []string
	for _, b := range append([]*board.Board{o.board}, o.others...) {
		names = append(names, b.Modules...)
		if b.USBDevice != nil {
			names = append(names, b.USBDevice.Modules...)
		}
		for _, d := range b.Devices {
			if d.Module != "" {
				names = append(names, d.Module)
			}
			if len(d.Compatible) > 0 {
				mods, _ := m.ModulesFor(d.Compatible)
				names = append(names, mods...)
			}
		}
	}
	return m.Closure(names)
}

// checkDrivers proves, from each board's device tree and the kernel's
// module aliases, that every device bonesync needs has a driver in the
// initramfs or built into the kernel; it fails the build otherwise.
func checkDrivers(o *options, p *packages, m *kmod.Modules, included []string) error {
	failed := 0
	for _, b := range append([]*board.Board{o.board}, o.others...) {
		var dtb []byte
		if b.DTB != "" {
			var err error
			if dtb, err = os.ReadFile(filepath.Join(p.dtbDir, b.DTB)); err != nil {
				return fmt.Errorf("board %s: %w", b.Name, err)
			}
		}
		checks := CheckDrivers(b, dtb, m, included)
		for _, c := range checks {
			if !c.OK {
				failed++
			}
		}
		fmt.Fprintf(o.log, "driver check, %s:\n%s", b.Name, FormatDriverChecks(checks))
	}
	if failed > 0 {
		return fmt.Errorf("driver check: %d device(s) without a driver", failed)
	}
	return nil
}
