package files

import (
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/bonesync/bonesync/appliance/precond"
)

// preconditions answers 412 unless the request's conditional headers hold
// for the target as it is now.
func (q *request) preconditions() bool {
	c := precond.Of(q.r.Header)
	if c.None() {
		return true
	}
	in, err := q.tree.Info(q.name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		writeStoreError(q.w, err)
		return false
	}
	var mtime time.Time
	if err == nil {
		mtime = in.ModTime()
	}
	if !c.Hold(err == nil, in.ETag, mtime) {
		if err == nil {
			q.w.Header().Set("ETag", quote(in.ETag))
		}
		http.Error(q.w, "precondition failed: the file changed since you saw it", http.StatusPreconditionFailed)
		return false
	}
	return true
}
