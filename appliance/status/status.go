// Package status is what the box says about itself over HTTPS, and the
// one change an admin makes from outside the pages: the public status
// page and its report (GET /, /report.json), /status.json for any
// logged-in user (the version, the system slots), and PUT /admin/update,
// the admin's way to apply an update bundle with curl. What it shows is
// admin.System's.
package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/appliance/users"
)

// Door is the login door as the admin routes ask it (package auth).
type Door interface {
	// Confirm is POST /admin/confirm: the page's password typed again.
	Confirm(w http.ResponseWriter, r *http.Request, c auth.Caller)
}

// Handler serves the routes.
type Handler struct {
	Door   Door
	System admin.System
	// Report is the benchmark report as it is now.
	Report func() *report.Report
	// PlainPort is the port the plain-HTTP listener got: the status page
	// names the CA's URL there.
	PlainPort int
	Log       *slog.Logger
	// Audit records the updates applied and the probes let through; nil:
	// none.
	Audit *audit.Log
	// Probes let a probe with the admin page's pass past the per-address
	// caps; nil: none is.
	Probes Probes
}

// Routes mounts the routes on the HTTPS server's mux.
func (h *Handler) Routes(rs *front.Routes) {
	rs.Public("GET /{$}", h.page)
	rs.Handle(auth.Optional, "GET /report.json", h.reportJSON)
	rs.Handle(auth.User, "GET /status.json", h.status)
	// PUT only (curl -T): a form cannot send it across sites. The
	// account's own password over Basic (never an app password: one
	// handed to a phone or a sync client, if it leaks, then reaches the
	// files, not the box's firmware), or a session whose password was
	// typed within minutes.
	rs.Handle(auth.Confirmed, "PUT /admin/update", h.update)
	rs.Handle(auth.Page, "POST /admin/confirm", h.Door.Confirm)
	rs.Public("POST "+ProbePath, h.allowProbe)
}

// page is the status page: the report, as anyone may see it (no software
// versions).
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self'")
	h.Report().Public().Page(w, h.caURL(r), "https://"+front.HTTPSHost(r))
}

// caURL is the CA over plain HTTP, at the name the browser used for the
// box and the port the plain-HTTP listener got.
func (h *Handler) caURL(r *http.Request) string {
	host, _, ok := front.RequestHost(r)
	if !ok {
		host = "bonesync.local"
	}
	port := ""
	if h.PlainPort != 0 {
		port = strconv.Itoa(h.PlainPort)
	}
	return "http://" + front.JoinPort(host, port, "80") + "/ca.crt"
}

// reportJSON is the report: the public one to anyone, the full one to a
// logged-in user (Basic credentials, checked as every login is).
func (h *Handler) reportJSON(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	rep := h.Report().Public()
	if who.User != "" {
		rep = h.Report()
	}
	b, err := rep.JSON()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// status is /status.json: the running version, the board and the system
// slots, for a logged-in user; the copies off the box and the disks'
// health for the admin.
func (h *Handler) status(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	sys := h.System
	st := struct {
		Version string           `json:"version"`
		Board   string           `json:"board,omitempty"`
		Uptime  int64            `json:"uptime_seconds"`
		System  *update.Status   `json:"system,omitempty"`
		Problem string           `json:"system_problem,omitempty"`
		Copy    *copies.Status   `json:"copy,omitempty"`
		Disks   []disk           `json:"disks,omitempty"`
		Data    *datadisk.Record `json:"data_disk,omitempty"`
		Memory  *budget.Status   `json:"memory,omitempty"`
	}{Version: sys.Version(), Board: sys.Board(), Uptime: int64(time.Since(sys.Started()).Seconds())}
	// The copy's target and the kernel's lines are the admin's to see.
	if user == users.Admin {
		if c, ok := sys.Copy(); ok {
			st.Copy = &c
		}
		for _, r := range sys.Disks() {
			st.Disks = append(st.Disks, disk{r, r.Problem()})
		}
		if r, ok := sys.DataDisk(); ok {
			st.Data = &r
		}
		if mem := sys.Memory(); mem != nil {
			m := mem.Status()
			st.Memory = &m
		}
	}
	if card := sys.Card(); card != nil {
		s, err := card.Status()
		st.System = &s
		if err != nil {
			st.Problem = err.Error()
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		h.Log.Error("status.json", "err", err)
		http.Error(w, "the status could not be encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// disk is a disk's health report and, when there is one, the admin's
// worry.
type disk struct {
	health.Report
	Problem string `json:"problem,omitempty"`
}

// update applies an update bundle sent by the admin (curl -T
// bonesync-bbb.update https://BOX/admin/update) and, on the board, asks
// PID 1 to reboot into it.
//
// A browser sends saved Basic credentials with a cross-site request too:
// the front refuses one that says it is (no CORS preflight is ever
// answered, so a cross-origin PUT does not get here either).
func (h *Handler) update(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	sys := h.System
	card := sys.Card()
	if card == nil {
		http.Error(w, update.ErrNotCard.Error(), http.StatusNotImplemented)
		return
	}
	progress := &logLines{log: h.Log}
	m, err := card.Apply(http.MaxBytesReader(w, r.Body, maxBundle), sys.Board(), progress)
	if err != nil {
		h.refused(w, r, err)
		return
	}
	h.Log.Info("update armed", "version", m.Version, "user", user, "addr", r.RemoteAddr)
	if err := h.Audit.Record(audit.Event{Kind: audit.Update, User: user, Addr: guard.Host(r.RemoteAddr), Proto: "https",
		What: fmt.Sprintf("version %s armed (from %s)", m.Version, sys.Version())}); err != nil {
		h.Log.Warn("update not recorded in the audit log", "err", err)
	}
	when := "the box reboots now into"
	if !sys.CanReboot() {
		when = "reboot the box (the console's reboot) to try"
	}
	fmt.Fprintf(w, "%s%s version %s, on trial: it becomes the default once it serves, else the box comes back to version %s by itself\n",
		progress.all.String(), when, m.Version, sys.Version())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if sys.CanReboot() {
		sys.Reboot("update to version " + m.Version)
	}
}

// refused answers an update the card refused: 400 for a bad bundle, 409
// for one older than the box has run (the console allows one), 413 for
// one too large, 500 for the card; and says what still boots.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError // the card
	var bad *update.BadBundle
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		code = http.StatusRequestEntityTooLarge
	case errors.Is(err, update.ErrDowngrade):
		code = http.StatusConflict // allowed at the console, once
	case errors.As(err, &bad):
		code = http.StatusBadRequest
	}
	after := "nothing changed"
	if errors.Is(err, update.ErrTouched) {
		after = "the other slot holds no bootable system until an update succeeds"
	}
	h.Log.Error("update refused", "addr", r.RemoteAddr, "err", err)
	http.Error(w, fmt.Sprintf("update refused: %v\n%s; slot %s, running now, still boots\n", err, after, h.System.Card().Running.Slot), code)
}

// maxBundle is more than a whole slot: a larger body is not a bundle.
const maxBundle = update.KernelCapacity + update.InitrdCapacity + update.DTBCapacity + 1<<20

// logLines logs each line written to it as it comes, and keeps them all.
type logLines struct {
	log *slog.Logger
	all strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.all.Write(p)
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			l.log.Info(line)
		}
	}
	return len(p), nil
}
