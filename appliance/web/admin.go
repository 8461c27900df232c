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
	// Reboot asks PID 1 to reboot into the armed update; nil where no
	// bonesync PID 1 is there to ask.
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
		// A browser sends saved Basic credentials with a cross-site
		// request too: refuse one that says it is (no CORS preflight is
		// ever answered, so a cross-origin PUT does not get here either).
		if CrossSite(r) {
			http.Error(w, "updates are not taken from another site's page", http.StatusForbidden)
			return
		}
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
			code := http.StatusInternalServerError // the card
			var bad *update.BadBundle
			var maxErr *http.MaxBytesError
			switch {
			case errors.As(err, &maxErr):
				code = http.StatusRequestEntityTooLarge
			case errors.As(err, &bad):
				code = http.StatusBadRequest
			}
			after := "nothing changed"
			if errors.Is(err, update.ErrTouched) {
				after = "the other slot holds no bootable system until an update succeeds"
			}
			d.Log.Error(fmt.Sprintf("update from %s: %v", r.RemoteAddr, err))
			http.Error(w, fmt.Sprintf("update refused: %v\n%s; slot %s, running now, still boots\n", err, after, sys.Card.Running.Slot), code)
			return
		}
		d.Log.Info(fmt.Sprintf("update: version %s armed by %s from %s", m.Version, user, r.RemoteAddr))
		when := "the box reboots now into"
		if sys.Reboot == nil {
			when = "reboot the box (the console's reboot) to try"
		}
		fmt.Fprintf(w, "%s%s version %s, on trial: it becomes the default once it serves, else the box comes back to version %s by itself\n",
			progress.all.String(), when, m.Version, sys.Version)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if sys.Reboot != nil {
			sys.Reboot("update to version " + m.Version)
		}
	}
	// PUT only (curl -T): a form cannot send it across sites.
	mux.HandleFunc("PUT /admin/update", apply)
}

// CrossSite says whether a browser marked the request as sent from another
// site's page (Sec-Fetch-Site), or named an origin other than the box.
func CrossSite(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s == "cross-site" || s == "same-site" {
		return true
	}
	o := r.Header.Get("Origin")
	return o != "" && o != "https://"+r.Host
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
