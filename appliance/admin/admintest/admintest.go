// Package admintest is a box for the tests of what shows an admin.System
// (the admin routes, the admin page): each answer a field, left zero for
// what a test does not look at.
package admintest

import (
	"errors"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/emmc"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/update"
)

// System answers admin.System from its fields; a nil function answers
// "none": no copy made, no disk adopted, no PID 1 to reboot.
type System struct {
	Ver       string
	BoardName string
	StartedAt time.Time
	Slots     *update.Card
	RebootTo  func(why string)
	LastCopy  func() (copies.Status, bool)
	Probes    *guard.Probes // the probe passes; nil: none
	Plan      string
	Form      admin.CopyForm
	SetCopy   func(f admin.CopyForm, password string) error
	StartCopy func() (password string, err error)
	Password  string // the copies' encryption password; "": none made
	AcceptKey func(offered string) (copies.HostKeyChanged, error)
	Reports   []health.Report
	Data      func() (datadisk.Record, bool)
	Flashed   *emmc.Record // the eMMC's last flash; nil: none
	Flash     func() error // FlashEMMC; nil: no eMMC here
	Budget    *budget.Budget
}

var _ admin.System = (*System)(nil)

func (s *System) Version() string    { return s.Ver }
func (s *System) Board() string      { return s.BoardName }
func (s *System) Started() time.Time { return s.StartedAt }
func (s *System) Card() *update.Card { return s.Slots }
func (s *System) CanReboot() bool    { return s.RebootTo != nil }

func (s *System) Reboot(why string) {
	if s.RebootTo != nil {
		s.RebootTo(why)
	}
}

func (s *System) Copy() (copies.Status, bool) {
	if s.LastCopy == nil {
		return copies.Status{}, false
	}
	return s.LastCopy()
}

func (s *System) CopyPlan() string         { return s.Plan }
func (s *System) CopyForm() admin.CopyForm { return s.Form }

func (s *System) CopySet(f admin.CopyForm, password string) error {
	if s.SetCopy == nil {
		return errors.New("no copy settings here")
	}
	return s.SetCopy(f, password)
}

func (s *System) CopyStart() (string, error) {
	if s.StartCopy == nil {
		return "", errors.New("no copy target is set")
	}
	return s.StartCopy()
}

func (s *System) CopyPassword() (string, error) {
	if s.Password == "" {
		return "", copies.ErrNoPassword
	}
	return s.Password, nil
}

func (s *System) CopyAcceptKey(offered string) (copies.HostKeyChanged, error) {
	if s.AcceptKey == nil {
		return copies.HostKeyChanged{}, errors.New("the last copy found no changed host key")
	}
	return s.AcceptKey(offered)
}

func (s *System) Disks() []health.Report { return s.Reports }

func (s *System) DataDisk() (datadisk.Record, bool) {
	if s.Data == nil {
		return datadisk.Record{}, false
	}
	return s.Data()
}

func (s *System) EMMC() (emmc.Record, bool) {
	if s.Flashed == nil {
		return emmc.Record{}, false
	}
	return *s.Flashed, true
}

func (s *System) FlashEMMC() error {
	if s.Flash == nil {
		return errors.New("no eMMC here")
	}
	return s.Flash()
}

func (s *System) Memory() *budget.Budget { return s.Budget }

// ProbePass makes a pass from Probes (nil: none can be made).
func (s *System) ProbePass() (string, time.Time, error) {
	if s.Probes == nil {
		return "", time.Time{}, errors.New("no probes here")
	}
	return s.Probes.Pass()
}
