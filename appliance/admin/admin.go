// Package admin is the box as its admin sees and sets it (System,
// implemented once by the server) and the copy settings in force, as the
// admin page sets them (CopyPlan). What shows it: the status routes
// (package status) and the web pages' admin page (package webui).
package admin

import (
	"time"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/emmc"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/update"
)

// System is the box as its admin sees and sets it: what /status.json
// reports, what /admin/update changes and what the admin page (package
// webui) shows and sets. It is implemented once, by the server; a new
// setting is a method here, an action of the admin page (webui's
// adminActions) and its form in the page's template.
type System interface {
	// Version is the running version.
	Version() string
	// Board is board.json's name; "" off the board.
	Board() string
	// Started is when the server started.
	Started() time.Time
	// Card is the card's system slots; nil when not booted from them.
	Card() *update.Card
	// CanReboot says whether Reboot does anything: false where no
	// bonesync PID 1 is there to ask.
	CanReboot() bool
	// Reboot asks PID 1 to reboot into the armed update.
	Reboot(why string)
	// Copy is the last copy off the box (package copies); !ok: none
	// made.
	Copy() (copies.Status, bool)
	// CopyPlan is the copies' settings in force in a line; "": no
	// target.
	CopyPlan() string
	// CopyForm and CopySet are the copy settings as the admin page
	// edits them; CopySet checks, keeps and applies them (an empty
	// password keeps the one set).
	CopyForm() CopyForm
	CopySet(f CopyForm, password string) error
	// CopyStart starts a copy now, in the background; the first makes
	// the encryption password and returns it, to be shown once.
	CopyStart() (password string, err error)
	// CopyPassword is the copies' encryption password, the box's one for
	// every target, shown again (the admin's password typed again first:
	// auth.Confirmed); copies.ErrNoPassword before the first copy.
	CopyPassword() (string, error)
	// CopyAcceptKey pins the SFTP target's new host key that refused the
	// last run (copies.Status.HostKey), if offered is its fingerprint as
	// the admin was shown it; the next run goes on.
	CopyAcceptKey(offered string) (copies.HostKeyChanged, error)
	// Disks are the health reports of the disks under the data (package
	// health), as last sampled; nil: none kept.
	Disks() []health.Report
	// DataDisk is the USB disk the files were moved to, or are being
	// moved to (package datadisk); !ok: they are on the card.
	DataDisk() (datadisk.Record, bool)
	// EMMC is the last flash of the board's eMMC from this card (package
	// emmc); !ok: none.
	EMMC() (emmc.Record, bool)
	// FlashEMMC asks PID 1 to copy the system to the board's eMMC, in the
	// background (the console's emmc flash): the server is stopped while
	// it copies, and EMMC says how it went.
	FlashEMMC() error
	// Memory is the box's memory budget (package budget); nil: none.
	Memory() *budget.Budget
	// ProbePass makes a pass that lets a probe (bonesync probe -token)
	// past the per-address limits for a while (guard.Probes), good until
	// expires.
	ProbePass() (token string, expires time.Time, err error)
}

// CopyForm is the copy settings as the admin page's form has them.
type CopyForm struct {
	Target      string
	HasPassword bool // a target password is set (it is never shown)
	At          string
	Keep        string
	BwLimit     string
}
