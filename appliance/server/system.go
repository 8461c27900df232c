package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/copies/engine"
	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/emmc"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/appliance/users"
	"github.com/bonesync/bonesync/board"
)

// system is the box as its admin sees and sets it (admin.System): the
// running version, the card's slots, the copies, the disks and the memory,
// for /status.json, updates and the admin page.
type system struct {
	s       *services
	started time.Time
}

func (y system) Version() string                           { return y.s.o.Version }
func (y system) Board() string                             { return y.s.o.Board }
func (y system) Started() time.Time                        { return y.started }
func (y system) Card() *update.Card                        { return y.s.card }
func (y system) CanReboot() bool                           { return onBoardWithPID1(y.s.o) }
func (y system) Copy() (copies.Status, bool)               { return copies.ReadStatus(copies.Dir(y.s.o.State)) }
func (y system) CopyPlan() string                          { return y.s.copyPlan.Line() }
func (y system) CopyForm() admin.CopyForm                  { return y.s.copyPlan.Form() }
func (y system) CopySet(f admin.CopyForm, pw string) error { return y.s.copyPlan.Set(f, pw) }
func (y system) CopyStart() (string, error)                { return y.s.copyStart() }
func (y system) CopyPassword() (string, error)             { return copies.ReadPassword(copies.Dir(y.s.o.State)) }
func (y system) Disks() []health.Report                    { return y.s.health.ReadAll() }
func (y system) Memory() *budget.Budget                    { return y.s.memory }
func (y system) ProbePass() (string, time.Time, error)     { return y.s.probes.Pass() }

// Reboot asks PID 1 to reboot, where there is a bonesync PID 1 to ask.
func (y system) Reboot(why string) {
	if y.CanReboot() {
		sysd.RequestReboot(why)
	}
}

func (y system) EMMC() (emmc.Record, bool) {
	r, ok, _ := emmc.ReadRecord(y.s.o.State)
	return r, ok
}

// FlashEMMC asks PID 1 to flash the eMMC, on a board that has one.
func (y system) FlashEMMC() error {
	if !y.CanReboot() {
		return errors.New("no bonesync PID 1 runs this server: use the console's emmc flash on the board")
	}
	if b, err := board.Load(y.s.o.Board); err != nil || b.EMMC == nil {
		return fmt.Errorf("the board %s has no eMMC", y.s.o.Board)
	}
	if !sysd.RequestEMMCFlash() {
		return errors.New("PID 1 could not be told")
	}
	return nil
}

func (y system) DataDisk() (datadisk.Record, bool) {
	r, ok, _ := datadisk.ReadRecord(y.s.o.State)
	return r, ok
}

// CopyAcceptKey re-pins the SFTP target's host key (engine.AcceptHostKey).
func (y system) CopyAcceptKey(offered string) (copies.HostKeyChanged, error) {
	ch, err := engine.AcceptHostKey(copies.Dir(y.s.o.State), offered)
	if err != nil {
		return ch, err
	}
	y.s.notices.Clear(users.Admin, "copy", "") // the failure it told of is dealt with
	return ch, nil
}
