package web

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/bonesync/bonesync/appliance/store"
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
func parseIf(h string) (lists []ifList, ok bool) {
	s := strings.TrimSpace(h)
	resource := ""
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

// ifHeaderHolds checks the entity-tag conditions of an If header that
// apply to name (given under prefix): the Nextcloud client sends
// `If: <dest> (["etag"])` to overwrite only the version it knew. Lists
// about other resources and state tokens are x/net/webdav's to judge where
// it serves the request; here a state token is taken as held. It answers
// 412 when the conditions fail.
func (d *DAV) ifHeaderHolds(w http.ResponseWriter, r *http.Request, tree *store.Tree, prefix, name string) bool {
	h := r.Header.Get("If")
	if h == "" {
		return true
	}
	lists, ok := parseIf(h)
	if !ok {
		http.Error(w, "malformed If header", http.StatusBadRequest)
		return false
	}
	in, err := tree.Info(name)
	exists := err == nil
	relevant, held := false, false
	for _, l := range lists {
		if l.resource != "" {
			u, err := url.Parse(l.resource)
			if err != nil || path.Clean("/"+strings.TrimPrefix(u.Path, prefix)) != path.Clean("/"+name) || !strings.HasPrefix(u.Path, prefix) {
				continue
			}
		}
		hasETag := false
		all := true
		for _, c := range l.conds {
			if c.token != "" {
				continue
			}
			hasETag = true
			if (exists && c.etag == in.ETag) == c.not {
				all = false
			}
		}
		if hasETag {
			relevant = true
			held = held || all
		}
	}
	if relevant && !held {
		http.Error(w, "precondition failed: the file changed since you saw it", http.StatusPreconditionFailed)
		return false
	}
	return true
}

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }
