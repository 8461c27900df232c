package files

import (
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/bonesync/bonesync/appliance/locks"
)

// ifCondition is one condition of a WebDAV If header (RFC 4918 section
// 10.4): an entity tag in brackets or a state token in angle brackets,
// maybe negated.
type ifCondition struct {
	not   bool
	etag  string // without quotes; "" for a state token
	token string
}

// ifList is one parenthesised list, and the resource it is tagged with
// ("" for the request's own).
type ifList struct {
	resource string
	conds    []ifCondition
}

// parseIf reads an If header; ok is false if it is malformed.
// The If header's bounds: each condition costs a lock lookup or a file's
// metadata read, and a client needs a few (a lock token, an ETag, for a
// resource or two). A 900 KB header of thousands took 4.3 s of CPU.
const (
	maxIfHeader     = 16 << 10
	maxIfConditions = 64
)

func parseIf(h string) (lists []ifList, ok bool) {
	if len(h) > maxIfHeader {
		return nil, false
	}
	s := strings.TrimSpace(h)
	resource, n := "", 0
	for s != "" {
		switch s[0] {
		case '<':
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return nil, false
			}
			resource, s = s[1:end], strings.TrimSpace(s[end+1:])
		case '(':
			end := strings.IndexByte(s, ')')
			if end < 0 {
				return nil, false
			}
			conds, ok := parseIfConds(s[1:end])
			if !ok {
				return nil, false
			}
			if n += len(conds); n > maxIfConditions {
				return nil, false
			}
			lists = append(lists, ifList{resource: resource, conds: conds})
			s = strings.TrimSpace(s[end+1:])
		default:
			return nil, false
		}
	}
	return lists, len(lists) > 0
}

func parseIfConds(s string) ([]ifCondition, bool) {
	var out []ifCondition
	s = strings.TrimSpace(s)
	for s != "" {
		var c ifCondition
		if rest, ok := strings.CutPrefix(s, "Not"); ok {
			c.not, s = true, strings.TrimSpace(rest)
		}
		if s == "" {
			return nil, false
		}
		var close byte
		switch s[0] {
		case '[':
			close = ']'
		case '<':
			close = '>'
		default:
			return nil, false
		}
		end := strings.IndexByte(s, close)
		if end < 0 {
			return nil, false
		}
		v := s[1:end]
		if close == ']' {
			c.etag = strings.Trim(strings.TrimPrefix(v, "W/"), `"`)
		} else {
			c.token = v
		}
		out = append(out, c)
		s = strings.TrimSpace(s[end+1:])
	}
	return out, len(out) > 0
}

// ifHeader evaluates a request's If header (RFC 4918 section 10.4) for
// user's tree reached under prefix: each list is about the resource it is
// tagged with, or the request's own (name); a state token holds if it is an
// active lock covering that resource, an entity tag if it is the
// resource's current strong ETag. The header holds if any list does. It
// also returns the lock tokens the header submits. ok is false for a
// malformed header.
func (q *request) ifHeader() (holds bool, submitted []string, ok bool) {
	h := q.r.Header.Get("If")
	if h == "" {
		return true, nil, true
	}
	lists, ok := parseIf(h)
	if !ok {
		return false, nil, false
	}
	for _, l := range lists {
		res := q.name
		if l.resource != "" {
			u, err := url.Parse(l.resource)
			p, under := "", false
			if err == nil {
				p, under = underPrefix(u.Path, q.prefix)
			}
			if !under {
				continue // about a resource elsewhere: cannot hold here
			}
			res = norm.NFC.String(p)
		}
		all := true
		for _, c := range l.conds {
			var v bool
			if c.token != "" {
				submitted = append(submitted, c.token)
				space, at := q.lockSpace(res)
				v = q.h.Locks.Valid(space, at, c.token)
			} else {
				in, err := q.tree.Info(res)
				v = err == nil && in.ETag == c.etag
			}
			if v == c.not {
				all = false
			}
		}
		holds = holds || all
	}
	return holds, submitted, true
}

// conditions answers the request and returns false unless its conditional
// headers hold (412 otherwise: If-Match, If-None-Match, If-Unmodified-Since
// and the If header) and it holds the tokens of the locks in the way of its
// changes (423 otherwise).
func (q *request) conditions(changes ...locks.Change) bool {
	w := q.w
	if !q.preconditions() {
		return false
	}
	holds, submitted, ok := q.ifHeader()
	if !ok {
		http.Error(w, "malformed If header", http.StatusBadRequest)
		return false
	}
	if !holds {
		http.Error(w, "precondition failed: the If header does not hold", http.StatusPreconditionFailed)
		return false
	}
	for _, c := range changes { // each in its owner's paths (lockSpace)
		space, at := q.lockSpace(c.Path)
		if err := q.h.Locks.Check(space, submitted, locks.Change{Path: at, Tree: c.Tree, Member: c.Member}); err != nil {
			http.Error(w, c.Path+": locked by a WebDAV client", http.StatusLocked)
			return false
		}
	}
	return true
}
