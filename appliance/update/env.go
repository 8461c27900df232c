// Package update is how a card image is updated in place with the data
// kept: two system slots on the FAT boot partition (slot-a and slot-b, each
// a kernel, an initramfs with bonesync, a device tree), the boot script that
// U-Boot runs to pick one (bootscript.go), the update bundle that `make
// image` writes (bundle.go), and the writes the running box makes to the
// card (card_linux.go): a bundle goes into the slot not running, is read
// back, and is booted once on trial; PID 1 makes it the default once the
// new server is ready, and U-Boot boots the previous slot if it never is.
//
// The box never changes the FAT's tables or directories for this: every
// slot file, slot.env and bonesync/boot.env is made at its full size when
// the image is built, and the box overwrites their sectors in place through
// the block device. A power cut at any moment leaves the FAT as built, the
// running slot untouched, and boot.env either as before or as after.
package update

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// envSize is the size of boot.env and slot.env: one sector, as U-Boot's
// `env export -t -s 0x200` fills it and `fatwrite ... 0x200` writes it.
const envSize = 512

// Env is a U-Boot text environment: name=value lines, then NUL bytes to
// envSize. U-Boot's `env import -t` reads it; so does ParseEnv.
type Env map[string]string

// ParseEnv reads an environment up to its first NUL. Lines that are not
// name=value, and comment lines, are skipped, as U-Boot skips them.
func ParseEnv(b []byte) Env {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	e := Env{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimLeft(line, " \t")
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && k != "" {
			e[k] = v
		}
	}
	return e
}

// Bytes is the environment as envSize bytes, names in order, empty values
// left out (U-Boot has no empty variables).
func (e Env) Bytes() ([]byte, error) {
	var b bytes.Buffer
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := e[k]
		if v == "" {
			continue
		}
		if strings.ContainsAny(k, "=\n\\\x00") || strings.ContainsAny(v, "\n\\\x00") {
			return nil, fmt.Errorf("boot environment: %s=%q cannot be written", k, v)
		}
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	if b.Len() >= envSize {
		return nil, fmt.Errorf("boot environment: %d bytes, more than fits in %d", b.Len(), envSize)
	}
	out := make([]byte, envSize)
	copy(out, b.Bytes())
	return out, nil
}

// The variables of bonesync/boot.env, which U-Boot and the box share:
//
//	bonesync_slot   the default slot, a or b
//	bonesync_trial  a slot to boot once; U-Boot clears it before booting it
//	bonesync_tried  the slot U-Boot last booted on trial; still there after
//	                a commit means the trial never became healthy
//	bonesync_moved  1: this card's system was copied to the eMMC and
//	                verified; the boot script boots nothing from it
const (
	varSlot  = "bonesync_slot"
	varTrial = "bonesync_trial"
	varTried = "bonesync_tried"
	varMoved = "bonesync_moved"
)

// The variables of slot-X/slot.env, written last when a slot is filled:
// without them U-Boot does not boot the slot.
const (
	varVersion = "bonesync_version"
	varKernel  = "bonesync_kernel" // bytes, hex, as U-Boot's load takes them
	varInitrd  = "bonesync_initrd"
	varDTB     = "bonesync_dtb"
)

// BootState is boot.env as the box reads it.
type BootState struct {
	Slot  string // the default
	Trial string // armed, not yet booted
	Tried string // the last trial
	Moved bool   // the system moved to the eMMC: the card steps aside
}

func readBootState(e Env) BootState {
	s := BootState{Slot: e[varSlot], Trial: e[varTrial], Tried: e[varTried], Moved: e[varMoved] == "1"}
	if s.Slot != "b" {
		s.Slot = "a" // as the boot script decides
	}
	return s
}

func (s BootState) env() Env {
	e := Env{varSlot: s.Slot, varTrial: s.Trial, varTried: s.Tried}
	if s.Moved {
		e[varMoved] = "1"
	}
	return e
}

// otherSlot is the slot that is not s.
func otherSlot(s string) string {
	if s == "a" {
		return "b"
	}
	return "a"
}

// SlotInfo is slot.env: the version in a slot and its files' sizes.
type SlotInfo struct {
	Version             string
	Kernel, Initrd, DTB int64
}

func (i SlotInfo) env() Env {
	e := Env{varVersion: i.Version}
	for k, n := range map[string]int64{varKernel: i.Kernel, varInitrd: i.Initrd, varDTB: i.DTB} {
		if n > 0 {
			e[k] = fmt.Sprintf("%x", n)
		}
	}
	return e
}

// Bytes is the slot.env for i.
func (i SlotInfo) Bytes() ([]byte, error) { return i.env().Bytes() }

func readSlotInfo(e Env) (SlotInfo, bool) {
	i := SlotInfo{Version: e[varVersion]}
	for k, p := range map[string]*int64{varKernel: &i.Kernel, varInitrd: &i.Initrd, varDTB: &i.DTB} {
		if v := e[k]; v != "" {
			if _, err := fmt.Sscanf(v, "%x", p); err != nil {
				return SlotInfo{}, false
			}
		}
	}
	return i, i.Kernel > 0 && i.Initrd > 0
}

// Running is what the kernel's command line says about this boot: the
// boot script adds bonesync.slot=X, bonesync.boot=PARTUUID (the boot
// partition it ran from), and bonesync.trial=1 on a trial.
type Running struct {
	Slot  string // "" when not booted by bonesync's boot script
	Trial bool
	// Boot is the PARTUUID of the boot partition U-Boot loaded this
	// system from, lower case ("" from a boot script before it, or a
	// U-Boot that could not say).
	Boot string
}

// ParseCmdline reads /proc/cmdline's bonesync parameters.
func ParseCmdline(cmdline string) Running {
	var r Running
	for _, f := range strings.Fields(cmdline) {
		switch k, v, _ := strings.Cut(f, "="); k {
		case "bonesync.slot":
			if v == "a" || v == "b" {
				r.Slot = v
			}
		case "bonesync.trial":
			r.Trial = v == "1"
		case "bonesync.boot":
			r.Boot = strings.ToLower(v)
		}
	}
	return r
}

// Status is what the box reports about its system slots.
type Status struct {
	Slot    string `json:"slot"`            // running
	Trial   bool   `json:"trial,omitempty"` // running on trial, not yet the default
	Default string `json:"default"`         // what the next boot runs
	// The other slot and what it holds ("" if nothing bootable).
	Other        string `json:"other_slot"`
	OtherVersion string `json:"other_version,omitempty"`
	// FailedTrial is set when the last update (in Other) was booted on
	// trial and never became healthy: the box came back by itself.
	FailedTrial string `json:"failed_update,omitempty"`
	// OtherIncomplete: the other slot holds nothing bootable, an update
	// into it was cut off or refused.
	OtherIncomplete bool `json:"other_incomplete,omitempty"`
}

// NewBootState is the boot.env of a fresh card: slot boots, nothing on
// trial.
func NewBootState(slot string) ([]byte, error) { return BootState{Slot: slot}.env().Bytes() }
