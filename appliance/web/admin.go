package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/appliance/users"
)

// System is what /status.json reports and /admin/update changes: the
// running version and, on a card, its system slots.
type System struct {
	Version string
	Board   string       // board.json's name; "" off the board
	Card    *update.Card // nil when not booted from a card's slots
	Started time.Time
	// Reboot asks PID 1 to reboot into the armed update.
	Reboot func(why string)
}

// systemRoutes adds, for logged-in users, GET /status.json, and for the
// admin, PUT or POST /admin/update with an update bundle as the body
// (curl -T bonesync-bbb.update https://BOX/admin/update).
func systemRoutes(mux *http.ServeMux, d *DAV, sys *System) {
	mux.HandleFunc("GET /status.json", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := d.login(w, r); !ok {
			return
		}
		st := struct {
			Version string         `json:"version"`
			Board   string         `json:"board,omitempty"`
			Uptime  int64          `json:"uptime_seconds"`
			System  *update.Status `json:"system,omitempty"`
			Problem string         `json:"system_problem,omitempty"`
		}{Version: sys.Version, Board: sys.Board, Uptime: int64(time.Since(sys.Started).Seconds())}
		if sys.Card != nil {
			s, err := sys.Card.Status()
			st.System = &s
			if err != nil {
				st.Problem = err.Error()
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(st)
	})
	apply := func(w http.ResponseWriter, r *http.Request) {
		user, ok := d.login(w, r)
		if !ok {
			return
		}
		if user != users.Admin {
			http.Error(w, "only admin applies updates", http.StatusForbidden)
			return
		}
		if sys.Card == nil {
			http.Error(w, update.ErrNotCard.Error(), http.StatusNotImplemented)
			return
		}
		progress := &logLines{log: d.Log}
		m, err := sys.Card.Apply(http.MaxBytesReader(w, r.Body, maxBundle), sys.Board, progress)
		if err != nil {
			code := http.StatusBadRequest
			var maxErr *http.MaxBytesError
			if errors.As(err, &maxErr) {
				code = http.StatusRequestEntityTooLarge
			}
			d.Log.Error(fmt.Sprintf("update from %s: %v", r.RemoteAddr, err))
			http.Error(w, fmt.Sprintf("update refused: %v\nnothing changed: slot %s still boots\n", err, sys.Card.Running.Slot), code)
			return
		}
		d.Log.Info(fmt.Sprintf("update: version %s armed by %s from %s", m.Version, user, r.RemoteAddr))
		fmt.Fprintf(w, "%sthe box reboots now into version %s, on trial: it becomes the default once it serves, else the box comes back to version %s by itself\n",
			progress.all.String(), m.Version, sys.Version)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if sys.Reboot != nil {
			sys.Reboot("update to version " + m.Version)
		}
	}
	mux.HandleFunc("PUT /admin/update", apply)
	mux.HandleFunc("POST /admin/update", apply)
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
