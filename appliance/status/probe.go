package status

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/guard"
)

// ProbePath is where a probe shows its pass (bonesync probe -token).
const ProbePath = "/probe/allow"

// Probes let a probe that shows a pass through the per-address caps
// (guard.Probes).
type Probes interface {
	Let(token, addr string) (guard.Allowance, error)
}

// ProbeAllowance is the answer to a pass: what the probe's address may do.
type ProbeAllowance struct {
	Address     string    `json:"address"`
	Until       time.Time `json:"until"`
	Connections int       `json:"connections"`
}

// allowProbe is POST /probe/allow with "Authorization: Bearer PASS": the
// pass the admin page made lets the caller's address past the
// per-address caps for a while (guard.Probes), written to the audit log.
// The pass is the credential: a public route, as a link's token is.
func (h *Handler) allowProbe(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || h.Probes == nil {
		http.Error(w, "a probe shows the pass the admin page made: bonesync probe -token PASS", http.StatusUnauthorized)
		return
	}
	addr := guard.Host(r.RemoteAddr)
	a, err := h.Probes.Let(strings.TrimSpace(token), addr)
	if err != nil {
		h.Log.Warn("probe pass refused", "addr", addr, "err", err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	h.Log.Info("probe let through", "addr", a.Source, "until", a.Until, "connections", a.Connections)
	if err := h.Audit.Record(audit.Event{Kind: audit.Admin, Addr: addr, Proto: "https",
		What: fmt.Sprintf("a probe let past the per-address limits until %s, %d connections", a.Until.UTC().Format(time.RFC3339), a.Connections)}); err != nil {
		h.Log.Warn("probe pass not recorded in the audit log", "err", err)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ProbeAllowance{Address: a.Source, Until: a.Until, Connections: a.Connections}) // dropped: the client may be gone
}
