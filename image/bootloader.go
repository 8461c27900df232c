package main

// The boot-loader check: before an image is written, prove from the
// board's U-Boot binary itself that it has every command the boot script
// (update.BootScriptText) uses, and that its distro boot runs boot.scr, as
// the driver check proves the drivers. No board is needed: a command that
// is built in carries its help text, and distro boot its default scripts.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/board"
)

// ubootEvidence is, for each command the boot script runs, text that only
// a U-Boot built with it holds (its usage line, from U-Boot's cmd/*.c).
var ubootEvidence = map[string]string{
	"setenv":   "set environment variables",
	"env":      "env export [-t", // and "env import": both below
	"load":     "load binary file from a filesystem",
	"fatwrite": "write file into a dos filesystem", // CONFIG_FAT_WRITE
	"test":     "minimal test like /bin/sh",
	"echo":     "echo args to console",
	"bootz":    "boot Linux zImage image from memory",
	"part":     "part uuid <interface> <dev>:<part> <varname>", // CONFIG_CMD_PART, CONFIG_PARTITION_UUIDS
}

// ubootAlso is what the script needs besides its commands: env import,
// and distro boot that finds boot.scr and runs it with the hush shell's
// for and if (its own default scripts use them).
var ubootAlso = []string{
	"env import [-d] [-t",
	"boot_scripts=boot.scr.uimg boot.scr",
	"scan_dev_for_scripts=for script in ${boot_scripts}; do if test -e ${devtype} ${devnum}:${distro_bootpart}",
	"run script from memory", // source, which distro boot runs the script with
}

// scriptCommands lists the commands a U-Boot hush script runs: the first
// word of each statement, the shell's own keywords left out.
func scriptCommands(script string) []string {
	var out []string
	sep := regexp.MustCompile(`;|&&|\|\||\n`)
	quoted := regexp.MustCompile(`"[^"]*"`)
	for _, stmt := range sep.Split(quoted.ReplaceAllString(script, `""`), -1) {
		f := strings.Fields(stmt)
		for len(f) > 0 && slices.Contains([]string{"if", "then", "else", "elif", "do", "fi", "done"}, f[0]) {
			f = f[1:]
		}
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || f[0] == "for" {
			continue
		}
		if !slices.Contains(out, f[0]) {
			out = append(out, f[0])
		}
	}
	slices.Sort(out)
	return out
}

// BootloaderCheck is one piece of evidence looked for in a U-Boot binary.
type BootloaderCheck struct {
	What string
	OK   bool
}

// CheckBootloader proves that the U-Boot binary in uboot runs the boot
// script: every command it uses is built in, and distro boot runs it.
func CheckBootloader(uboot []byte) []BootloaderCheck {
	var out []BootloaderCheck
	for _, cmd := range scriptCommands(update.BootScriptText) {
		ev, known := ubootEvidence[cmd]
		out = append(out, BootloaderCheck{
			What: fmt.Sprintf("command %-9s (%q)", cmd, ev),
			OK:   known && bytes.Contains(uboot, []byte(ev)),
		})
	}
	for _, ev := range ubootAlso {
		out = append(out, BootloaderCheck{What: fmt.Sprintf("%q", ev), OK: bytes.Contains(uboot, []byte(ev))})
	}
	return out
}

// checkBootloaders runs CheckBootloader on each board's U-Boot: the
// board's from its pinned package (a failure stops the build), QEMU's from
// the machine's u-boot-qemu when installed.
func checkBootloaders(o *options, p *packages) error {
	failed := 0
	for i, b := range append([]*board.Board{o.board}, o.others...) {
		if b.UBoot == "" {
			continue
		}
		path := b.UBoot
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.root, path)
		}
		bin, err := os.ReadFile(path)
		if err != nil {
			if i == 0 {
				return fmt.Errorf("board %s: its U-Boot: %w", b.Name, err)
			}
			fmt.Fprintf(o.log, "boot-loader check, %s: not made (%v)\n", b.Name, err)
			continue
		}
		fmt.Fprintf(o.log, "boot-loader check, %s (%s):\n", b.Name, b.UBoot)
		for _, c := range CheckBootloader(bin) {
			mark := "ok  "
			if !c.OK {
				mark = "MISSING"
				failed++
			}
			fmt.Fprintf(o.log, "  %s %s\n", mark, c.What)
		}
	}
	if failed > 0 {
		return fmt.Errorf("boot-loader check: %d thing(s) the boot script needs are not in U-Boot", failed)
	}
	return nil
}
