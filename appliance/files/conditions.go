package files

import (
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// preconditionsHold evaluates a state-changing request's If-Match,
// If-Unmodified-Since and If-None-Match against the target's current state,
// in the order of RFC 9110 section 13.2.2. exists is whether the target
// exists; etag is its strong ETag (unquoted) and mtime its date. It reports
// false when the request must be answered 412 Precondition Failed.
// (GET and HEAD are left to net/http's ServeContent, which answers 304.)
func preconditionsHold(h http.Header, exists bool, etag string, mtime time.Time) bool {
	if im := h.Values("If-Match"); len(im) > 0 {
		if !exists || !matchAny(im, etag) {
			return false
		}
	} else if ius := h.Get("If-Unmodified-Since"); ius != "" && exists {
		if t, err := http.ParseTime(ius); err == nil && mtime.Truncate(time.Second).After(t) {
			return false
		}
	}
	if inm := h.Values("If-None-Match"); len(inm) > 0 && exists && matchAny(inm, etag) {
		return false
	}
	return true
}

// matchAny reports whether a list of entity tags ("*", or quoted tags
// separated by commas, maybe over several header lines) matches etag by
// strong comparison: weak tags (W/"...") never match.
func matchAny(lines []string, etag string) bool {
	for _, line := range lines {
		for _, tag := range strings.Split(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" {
				return true
			}
			if strings.HasPrefix(tag, "W/") {
				continue
			}
			if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' && tag[1:len(tag)-1] == etag {
				return true
			}
		}
	}
	return false
}

// preconditions answers 412 unless the request's conditional headers hold
// for the target as it is now.
func (q *request) preconditions() bool {
	h := q.r.Header
	if h.Get("If-Match") == "" && h.Get("If-None-Match") == "" && h.Get("If-Unmodified-Since") == "" {
		return true
	}
	in, err := q.tree.Info(q.name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		WriteStoreError(q.w, err)
		return false
	}
	var mtime time.Time
	if err == nil {
		mtime = in.ModTime()
	}
	if !preconditionsHold(h, err == nil, in.ETag, mtime) {
		if err == nil {
			q.w.Header().Set("ETag", quote(in.ETag))
		}
		http.Error(q.w, "precondition failed: the file changed since you saw it", http.StatusPreconditionFailed)
		return false
	}
	return true
}
