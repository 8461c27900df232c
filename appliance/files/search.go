package files

// SEARCH (RFC 5323's basicsearch) on /remote.php/dav, as the Nextcloud
// apps send it for their photos, recent and favourites views: a walk of
// the scope, each entry described as a PROPFIND would (from its open
// folder), kept if the where holds, the best limit of them by the orderby
// kept in a heap as the walk goes, so a search of a large tree takes the
// memory of its answer. And oc:filter-files, the favourites REPORT.

import (
	"container/heap"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/store"
)

// ncDAVRoot is where SEARCH is sent.
const ncDAVRoot = "/remote.php/dav"

// maxSearchResults bounds a search without a limit.
const maxSearchResults = 10000

// foundBytes is what one result kept takes at most: its path (names up to
// 255 bytes, a few deep) and its store.Info.
const foundBytes = 1 << 10

var (
	ocFavorite     = ocName("favorite")
	ncUploadTime   = ncName("upload_time")
	ncCreationTime = ncName("creation_time")
)

// davRootOptions answers OPTIONS on /remote.php/dav: it takes SEARCH (the
// Android app asks before its photos view), and the calendars' methods
// below it.
func davRootOptions(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Allow", "OPTIONS, GET, HEAD, DELETE, PROPFIND, PUT, PROPPATCH, COPY, MOVE, REPORT, SEARCH")
	h.Set("DAV", "1, 2, 3, calendar-access, addressbook")
	h.Set("DASL", "<DAV:basicsearch>")
	h.Set("MS-Author-Via", "DAV")
}

// found is one entry a search matched.
type found struct {
	p  string
	in store.Info
}

// search answers a SEARCH on /remote.php/dav.
func (h *Handler) search(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	body, err := davxml.ReadBody(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s, err := davxml.ParseSearch(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The scope is /files/USER[/PATH]: only one's own.
	rest, ok := strings.CutPrefix(path.Clean("/"+s.Scope), "/files/"+user)
	if !ok || rest != "" && rest[0] != '/' {
		http.Error(w, "the search's scope must be /files/"+user+"/...", http.StatusBadRequest)
		return
	}
	q, ok := h.open(w, r, user, ncFiles+user, rest)
	if !ok {
		return
	}
	defer q.tree.Close()
	offset, count, paginate := pagination(r)
	if paginate {
		s.Limit = count
	}
	keep := maxSearchResults
	if s.Limit > 0 {
		keep = min(keep, offset+s.Limit)
	}
	release, err := h.Memory.Take(r.Context(), "search", int64(keep)*foundBytes)
	if budget.Answer(w, err, http.StatusInsufficientStorage) {
		return
	}
	defer release()
	all, total, err := q.find(s, offset)
	if err != nil {
		code, msg := storeStatus(err)
		if errors.Is(err, errBadCondition) {
			code, msg = http.StatusBadRequest, err.Error()
		}
		http.Error(w, msg, code)
		return
	}
	if paginate {
		w.Header().Set("X-NC-Paginate", "true")
		w.Header().Set("X-NC-Paginate-Total", strconv.Itoa(total))
		if tok := r.Header.Get("X-NC-Paginate-Token"); tok != "" {
			w.Header().Set("X-NC-Paginate-Token", tok)
		}
	}
	q.listFound(davxml.Propfind{Names: s.Select}, all)
}

// open opens user's tree for a request reached under prefix, naming
// name; the caller closes q.tree.
func (h *Handler) open(w http.ResponseWriter, r *http.Request, user, prefix, name string) (*request, bool) {
	tree, ok := h.openTree(w, r, user)
	if !ok {
		return nil, false
	}
	return &request{h: h, w: w, r: r, tree: tree, user: user, prefix: prefix, name: name}, true
}

// errBadCondition is a search on what cannot be compared.
var errBadCondition = errors.New("bad search")

// find runs the search s below q.name: what matches, in order, from
// offset, at most s.Limit of them (if set), and how many matched in all.
func (q *request) find(s davxml.Search, offset int) ([]found, int, error) {
	m := &matcher{q: q}
	if err := m.check(s.Where); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", errBadCondition, err)
	}
	keep := maxSearchResults
	if s.Limit > 0 {
		keep = min(keep, offset+s.Limit)
	}
	res := &results{order: s.Order, m: m, keep: keep}
	top := path.Clean("/" + q.name)
	if s.Depth == 0 {
		if in, err := q.tree.Info(top); err == nil && m.eval(s.Where, top, in) {
			res.add(found{top, in})
		}
	} else {
		err := q.tree.Walk(top, func(p string, in store.Info) error {
			if m.eval(s.Where, p, in) {
				res.add(found{p, in})
			}
			if s.Depth == 1 && in.IsDir() {
				return fs.SkipDir // its entries, not theirs
			}
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	all := res.sorted()
	if offset < len(all) {
		all = all[offset:]
	} else {
		all = nil
	}
	if s.Limit > 0 && len(all) > s.Limit {
		all = all[:s.Limit]
	}
	return all, res.total, nil
}

// pagination reads the Nextcloud apps' paging headers.
func pagination(r *http.Request) (offset, count int, on bool) {
	if r.Header.Get("X-NC-Paginate") != "true" {
		return 0, 0, false
	}
	offset, _ = strconv.Atoi(r.Header.Get("X-NC-Paginate-Offset"))
	count, _ = strconv.Atoi(r.Header.Get("X-NC-Paginate-Count"))
	if count <= 0 {
		count = 100
	}
	return max(0, offset), count, true
}

// listFound writes what a search found, as a PROPFIND would describe it.
func (q *request) listFound(req davxml.Propfind, all []found) {
	pw := &propWriter{q: q, m: davxml.NewWriter(q.w), req: req, wantDead: wantsDead(req)}
	for _, f := range all {
		p := f.p
		pw.entry(p, f.in, func() (map[xml.Name]deadProp, error) {
			file, err := q.tree.Open(p)
			if err != nil {
				return nil, err
			}
			defer file.Close()
			return fdProps(file)
		})
	}
	pw.m.Close("")
}

// matcher evaluates a search's conditions on the entries of one user's
// tree.
type matcher struct {
	q     *request
	favs  map[uint64]bool
	likes map[string]*regexp.Regexp // the patterns of like, made once
}

// check refuses what the conditions cannot be evaluated on: properties
// no entry has a value of to compare.
func (m *matcher) check(c *davxml.Cond) error {
	if c == nil {
		return nil
	}
	for _, s := range c.Sub {
		if err := m.check(s); err != nil {
			return err
		}
	}
	switch c.Op {
	case "and", "or", "not", "is-collection", "is-defined":
		return nil
	}
	if _, ok := searchable[c.Prop]; !ok {
		return fmt.Errorf("a search on %s is not supported", c.Prop.Space+c.Prop.Local)
	}
	if c.Op == "like" && searchable[c.Prop] != kindText {
		return fmt.Errorf("like compares text, and %s is not", c.Prop.Local)
	}
	return nil
}

type valueKind int

const (
	kindText valueKind = iota
	kindNumber
	kindTime
)

// searchable are the properties a search compares and orders by, and
// what their values are (as Nextcloud's search takes them).
var searchable = map[xml.Name]valueKind{
	davxml.Name("displayname"):      kindText,
	davxml.Name("getcontenttype"):   kindText,
	davxml.Name("getlastmodified"):  kindTime,
	davxml.Name("getcontentlength"): kindNumber,
	ocSize:                          kindNumber,
	ocFileID:                        kindNumber,
	ocFavorite:                      kindNumber,
	ncUploadTime:                    kindTime,
	ncCreationTime:                  kindTime,
}

// value is an entry's value of a searchable property: text, or a number
// (a time in seconds).
func (m *matcher) value(n xml.Name, p string, in store.Info) (string, int64) {
	switch n {
	case davxml.Name("displayname"):
		return path.Base(p), 0
	case davxml.Name("getcontenttype"):
		if in.IsDir() {
			return "httpd/unix-directory", 0
		}
		return filetype.Of(p), 0
	case davxml.Name("getlastmodified"), ncUploadTime, ncCreationTime:
		// The store keeps one date: the file's. It stands for the upload
		// and creation times too.
		return "", in.ModTime().Unix()
	case davxml.Name("getcontentlength"), ocSize:
		return "", in.Size()
	case ocFileID:
		return "", int64(in.FileID)
	case ocFavorite:
		if m.favorites()[in.FileID] {
			return "", 1
		}
		return "", 0
	}
	return "", 0
}

func (m *matcher) favorites() map[uint64]bool {
	if m.favs == nil {
		m.favs = map[uint64]bool{}
		if f := m.q.favorites(); f != nil {
			if favs, err := f.Of(m.q.user); err == nil {
				m.favs = favs
			}
		}
	}
	return m.favs
}

// literal reads a condition's literal as a number: a time given as
// seconds or as an ISO 8601 date, a favourite as 1, true or yes.
func literal(n xml.Name, s string) (int64, bool) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	if searchable[n] == kindTime {
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.Unix(), true
			}
		}
	}
	if n == ocFavorite {
		switch strings.ToLower(s) {
		case "true", "yes":
			return 1, true
		case "false", "no":
			return 0, true
		}
	}
	return 0, false
}

// eval reports whether the condition holds for the entry p.
func (m *matcher) eval(c *davxml.Cond, p string, in store.Info) bool {
	if c == nil {
		return true
	}
	switch c.Op {
	case "and":
		for _, s := range c.Sub {
			if !m.eval(s, p, in) {
				return false
			}
		}
		return true
	case "or":
		for _, s := range c.Sub {
			if m.eval(s, p, in) {
				return true
			}
		}
		return false
	case "not":
		return !m.eval(c.Sub[0], p, in)
	case "is-collection":
		return in.IsDir()
	case "is-defined":
		_, ok := searchable[c.Prop]
		return ok
	}
	text, num := m.value(c.Prop, p, in)
	if searchable[c.Prop] == kindText {
		switch c.Op {
		case "like":
			return m.like(c.Literal).MatchString(text)
		case "eq":
			return strings.EqualFold(text, c.Literal)
		}
		return compare(c.Op, strings.Compare(strings.ToLower(text), strings.ToLower(c.Literal)))
	}
	want, ok := literal(c.Prop, c.Literal)
	if !ok {
		return false
	}
	switch {
	case num < want:
		return compare(c.Op, -1)
	case num > want:
		return compare(c.Op, 1)
	}
	return compare(c.Op, 0)
}

// compare is whether an entry that compares to the literal as cmp (-1, 0,
// 1) meets the operator.
func compare(op string, cmp int) bool {
	switch op {
	case "eq":
		return cmp == 0
	case "lt":
		return cmp < 0
	case "lte":
		return cmp <= 0
	case "gt":
		return cmp > 0
	case "gte":
		return cmp >= 0
	}
	return false
}

// like is SQL's LIKE as a regular expression: % any run, _ any one
// character, the rest itself, without regard to case.
func (m *matcher) like(pattern string) *regexp.Regexp {
	if re, ok := m.likes[pattern]; ok {
		return re
	}
	var b strings.Builder
	b.WriteString("(?is)^")
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re := regexp.MustCompile(b.String())
	if m.likes == nil {
		m.likes = map[string]*regexp.Regexp{}
	}
	m.likes[pattern] = re
	return re
}

// results keeps the best keep entries by the order as they come: a heap
// whose top is the worst kept.
type results struct {
	order []davxml.Order
	m     *matcher
	keep  int
	items []found
	total int
}

func (r *results) add(f found) {
	r.total++
	heap.Push(r, f)
	if len(r.items) > r.keep {
		heap.Pop(r)
	}
}

// before is whether a comes before b in the answer (by the order, then by
// path, so the answer is the same every time).
func (r *results) before(a, b found) bool {
	for _, o := range r.order {
		at, an := r.m.value(o.Prop, a.p, a.in)
		bt, bn := r.m.value(o.Prop, b.p, b.in)
		cmp := strings.Compare(strings.ToLower(at), strings.ToLower(bt))
		if an != bn {
			cmp = -1
			if an > bn {
				cmp = 1
			}
		}
		if cmp != 0 {
			return cmp < 0 != o.Descending
		}
	}
	return a.p < b.p
}

// The heap's order is the answer's reversed: the worst kept on top.
func (r *results) Len() int           { return len(r.items) }
func (r *results) Less(i, j int) bool { return r.before(r.items[j], r.items[i]) }
func (r *results) Swap(i, j int)      { r.items[i], r.items[j] = r.items[j], r.items[i] }
func (r *results) Push(x any)         { r.items = append(r.items, x.(found)) }
func (r *results) Pop() any {
	last := r.items[len(r.items)-1]
	r.items = r.items[:len(r.items)-1]
	return last
}

// sorted empties the heap into the answer's order.
func (r *results) sorted() []found {
	out := make([]found, len(r.items))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(r).(found)
	}
	return out
}

// report answers a REPORT on the files: ownCloud's oc:filter-files, for
// the favourites below the path asked.
func (q *request) report() {
	body, err := davxml.ReadBody(q.r.Body)
	if err != nil {
		http.Error(q.w, err.Error(), http.StatusBadRequest)
		return
	}
	f, err := davxml.ParseFilterFiles(body)
	if err != nil {
		http.Error(q.w, err.Error(), http.StatusBadRequest)
		return
	}
	for rule, v := range f.Rules {
		if rule != ocFavorite {
			http.Error(q.w, "files are filtered by oc:favorite only (this box has no tags)", http.StatusBadRequest)
			return
		}
		if want, ok := literal(ocFavorite, v); !ok || want != 1 {
			http.Error(q.w, "oc:favorite filters for 1: the favourites", http.StatusBadRequest)
			return
		}
	}
	top := path.Clean("/" + q.name)
	m := &matcher{q: q}
	var all []found
	for id := range m.favorites() {
		p, in, err := q.tree.Find(id)
		if err != nil { // in the trash, or gone: not listed
			continue
		}
		if top == "/" || p == top || strings.HasPrefix(p, top+"/") {
			all = append(all, found{p, in})
		}
	}
	res := &results{m: m, keep: len(all)}
	for _, f := range all {
		res.add(f)
	}
	q.listFound(davxml.Propfind{Names: f.Props}, res.sorted())
}
