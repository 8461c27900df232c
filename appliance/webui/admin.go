package webui

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"
)

type adminUser struct {
	users.Info
	store.Usage       // files (what the quota counts), trash, versions
	Calendars   int64 // calendars and address books
}

// departed is the data of a name with no account: a user deleted, whose
// files stay until the admin hands them to another user or removes them.
type departed struct {
	Name string
	store.Usage
	Calendars int64
}

// diskHealth is a disk's health report as the admin page shows it.
type diskHealth struct {
	Line, Problem string
	Days          []health.Day // newest first
}

type adminData struct {
	Users        []adminUser
	Departed     []departed
	DiskTotal    int64
	DiskFree     int64
	Disks        []diskHealth
	Memory       *budget.Status // the budget (package budget); nil: none
	DataDisk     string         // where the files are, when a USB disk was adopted
	OnBoard      bool           // the console's disk adopt is there to move them
	EMMC         string         // the eMMC's last flash from this card; "": none
	CanFlash     bool           // a PID 1 is there to flash the eMMC (the form is shown)
	Report       string
	Measuring    bool
	CanMeasure   bool
	Updates      bool
	Version      string
	Slot         string
	Log          []string
	CopyPlan     string // the copies' settings; "": none set
	CopyStatus   string // the last run, or the one going on
	CopyRunning  bool
	CopyPassword string // the copies' password just made, shown this once
	// CopyPasswordAgain: CopyPassword is shown again, asked for.
	CopyPasswordAgain bool
	// CopyHostKey is the SFTP target's changed host key that refused the
	// last run; nil: none.
	CopyHostKey *copies.HostKeyChanged
	CopyForm    *admin.CopyForm // the settings to edit; nil: not editable here
	NewUser     string          // a user just made or reset, with
	NewPass     string          // the password made for it, shown this once
	ProbePass   string          // a probe pass just made, shown this once,
	ProbeUntil  time.Time       // good until then,
	ProbeHost   string          // for this host's probe
	Audit       []audit.Event   // the newest of the audit log
}

func (u *Admin) adminPage(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.showAdmin(w, sess, http.StatusOK, "", "", adminData{})
}

func (u *Admin) showAdmin(w http.ResponseWriter, sess auth.Caller, code int, flash, problem string, d adminData) {
	p := u.base(sess, "Admin", "admin")
	p.Flash, p.Problem = flash, problem
	list, err := u.Users.List()
	if err != nil && p.Problem == "" {
		p.Problem = err.Error()
	}
	for _, in := range list {
		au := adminUser{Info: in}
		au.Usage, _ = u.Store.UsageOf(in.Name)
		if u.Calendars != nil {
			au.Calendars, _ = u.Calendars.Usage(in.Name)
		}
		d.Users = append(d.Users, au)
	}
	d.Departed = u.departed(list)
	d.DiskTotal, d.DiskFree, _ = u.Store.DiskSpace()
	if u.Report != nil {
		var b strings.Builder
		u.Report().Console(&b)
		d.Report = b.String()
	}
	d.CanMeasure = u.Measure != nil
	d.Measuring = u.bench.running()
	if u.System != nil {
		u.systemData(&d)
	}
	if u.Recent != nil {
		d.Log = u.Recent()
		slices.Reverse(d.Log) // newest first
	}
	var err2 error
	if d.Audit, err2 = u.Audit.Recent(100); err2 != nil && p.Problem == "" {
		p.Problem = "The audit log cannot be read: " + err2.Error()
	}
	p.Data = d
	u.render(w, code, "admin", p)
}

// systemData is the box's part of the admin page (package admin).
func (u *Admin) systemData(d *adminData) {
	sys := u.System
	for _, r := range sys.Disks() {
		days := slices.Clone(r.Days)
		slices.Reverse(days)
		d.Disks = append(d.Disks, diskHealth{Line: r.String(), Problem: r.Problem(), Days: days[:min(len(days), 14)]})
	}
	if mem := sys.Memory(); mem != nil {
		m := mem.Status()
		d.Memory = &m
	}
	if r, ok := sys.DataDisk(); ok {
		d.DataDisk = r.String()
	}
	d.OnBoard = sys.Board() != ""
	if r, ok := sys.EMMC(); ok {
		d.EMMC = r.String()
	}
	d.CanFlash = d.OnBoard && sys.CanReboot() && sys.Card() != nil
	d.CopyPlan = sys.CopyPlan()
	f := sys.CopyForm()
	d.CopyForm = &f
	if st, ok := sys.Copy(); ok {
		d.CopyStatus, d.CopyRunning = st.String(), st.Running != nil && !st.Stale()
		d.CopyHostKey = st.HostKey
	}
	d.Version = sys.Version()
	if card := sys.Card(); card != nil {
		d.Updates = true
		d.Slot = card.Running.Slot
	}
}

// departed lists the data of names that have no account.
func (u *Admin) departed(accounts []users.Info) []departed {
	names, _ := u.Store.Owners()
	if u.Calendars != nil {
		names = append(names, u.Calendars.Owners()...)
	}
	slices.Sort(names)
	var out []departed
	for _, n := range slices.Compact(names) {
		if slices.ContainsFunc(accounts, func(a users.Info) bool { return a.Name == n }) {
			continue
		}
		dp := departed{Name: n}
		dp.Usage, _ = u.Store.UsageOf(n)
		if u.Calendars != nil {
			dp.Calendars, _ = u.Calendars.Usage(n)
		}
		if dp.Files+dp.Trash+dp.Versions+dp.Calendars > 0 {
			out = append(out, dp)
		}
	}
	return out
}

// benchRun is the one benchmark the admin page may have running, and the
// progress lines it printed.
type benchRun struct {
	mu    sync.Mutex
	on    bool
	lines []string
	err   string
}

func (b *benchRun) running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.on
}

func (b *benchRun) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			b.lines = append(b.lines, l)
		}
	}
	if len(b.lines) > 200 {
		b.lines = b.lines[len(b.lines)-200:]
	}
	return len(p), nil
}

func (b *benchRun) start(measure func(context.Context, io.Writer) error, log *slog.Logger) bool {
	b.mu.Lock()
	if b.on {
		b.mu.Unlock()
		return false
	}
	b.on, b.lines, b.err = true, nil, ""
	b.mu.Unlock()
	go func() {
		err := measure(context.Background(), b)
		b.mu.Lock()
		b.on = false
		if err != nil {
			b.err = err.Error()
		}
		b.mu.Unlock()
		if err != nil {
			log.Error("web: the benchmark the admin started failed", "err", err)
		}
	}()
	return true
}

// benchStatus is the progress the admin page polls while measuring.
func (u *Admin) benchStatus(w http.ResponseWriter, r *http.Request, _ auth.Caller) {
	u.bench.mu.Lock()
	st := struct {
		Running bool     `json:"running"`
		Lines   []string `json:"lines"`
		Error   string   `json:"error,omitempty"`
	}{u.bench.on, append([]string{}, u.bench.lines...), u.bench.err}
	u.bench.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(st) // dropped: strings and a bool always encode; a client gone loses nothing
}
