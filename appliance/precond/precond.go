// Package precond evaluates a state-changing request's preconditions
// (If-Match, If-Unmodified-Since, If-None-Match, in the order of RFC 9110
// section 13.2.2) against its target as it is now: one evaluator for
// every DAV side of the box (the files, the calendars and contacts), so
// that they never disagree on what a list of tags, "*" or a weak tag
// means. (GET and HEAD are left to net/http's ServeContent, which answers
// 304.)
package precond

import (
	"net/http"
	"strings"
	"time"
)

// Conditions are a request's conditional headers.
type Conditions struct {
	IfMatch, IfNoneMatch []string // the header lines, lists of quoted tags or "*"
	IfUnmodifiedSince    string
}

// Of reads h's conditional headers.
func Of(h http.Header) Conditions {
	return Conditions{IfMatch: h.Values("If-Match"), IfNoneMatch: h.Values("If-None-Match"),
		IfUnmodifiedSince: h.Get("If-Unmodified-Since")}
}

// None says the request has no conditions.
func (c Conditions) None() bool {
	return len(c.IfMatch) == 0 && len(c.IfNoneMatch) == 0 && c.IfUnmodifiedSince == ""
}

// Hold reports whether the conditions hold for the target: exists is
// whether it exists, etag its strong ETag (unquoted) and mtime its date.
// false: the request must be answered 412 Precondition Failed.
func (c Conditions) Hold(exists bool, etag string, mtime time.Time) bool {
	if len(c.IfMatch) > 0 {
		if !exists || !matchAny(c.IfMatch, etag) {
			return false
		}
	} else if c.IfUnmodifiedSince != "" && exists {
		if t, err := http.ParseTime(c.IfUnmodifiedSince); err == nil && mtime.Truncate(time.Second).After(t) {
			return false
		}
	}
	if len(c.IfNoneMatch) > 0 && exists && matchAny(c.IfNoneMatch, etag) {
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
