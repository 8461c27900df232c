package preview

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/bonesync/bonesync/appliance/budget"
)

// Serve answers r with src's preview for a request of width×height pixels
// (square: cut to a square), as every page and protocol that shows one
// does: 304 for the tag the client has, the budget's 503 (busy: ask
// again) or 507 (could never fit), 404 for a file that has none, and
// otherwise the picture with its tag, privately cacheable for a day.
func (m *Maker) Serve(w http.ResponseWriter, r *http.Request, src Source, width, height int, square bool) {
	tag := fmt.Sprintf(`"%s.%d.%t"`, src.Version, sizeFor(width, height), square)
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	p, err := m.Get(r.Context(), src, width, height, square)
	switch {
	case budget.Answer(w, err, http.StatusInsufficientStorage):
		return
	case NoPreview(err):
		http.Error(w, "no preview for this file", http.StatusNotFound)
		return
	case err != nil:
		m.Log.Warn("cannot make a preview", "user", src.User, "id", src.ID, "err", err)
		http.Error(w, "cannot make the preview", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", p.Type)
	h.Set("Content-Length", strconv.Itoa(len(p.Data)))
	h.Set("ETag", tag)
	h.Set("Cache-Control", "private, max-age=86400")
	if r.Method != http.MethodHead {
		w.Write(p.Data) // dropped: the client may be gone; nothing is kept for it
	}
}
