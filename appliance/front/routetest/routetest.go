// Package routetest walks an HTTPS site's routes as tests do: every route
// front.Routes holds, requested anonymously, as a user over Basic and with
// a session, as a two-factor account's password over Basic, and
// cross-site, each answer held to the access the route declared. It
// also holds the registry to the mux behind it, and to a table a
// reviewer reads (Golden). It is imported by tests only.
package routetest

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
)

// Site is the routes under test (a *front.Routes).
type Site interface {
	http.Handler
	List() []front.Route
	Serving(r *http.Request) (front.Route, bool)
}

// Recorder is a front.Door that notes what the door it wraps decided on
// the last request: the walk tells a refusal by the door from a
// handler's own answer by it.
type Recorder struct {
	Door   front.Door
	asked  bool
	passed bool
}

// Check asks the door and notes its answer.
func (rec *Recorder) Check(a auth.Access, w http.ResponseWriter, r *http.Request) (auth.Caller, error) {
	c, err := rec.Door.Check(a, w, r)
	rec.asked, rec.passed = true, err == nil
	return c, err
}

// Identity is one way the walk sends each request.
type Identity struct {
	Name string
	// Prepare gives the request its credentials (a session's cookie and
	// CSRF token, Basic credentials...).
	Prepare func(r *http.Request)
	// Passes says which accesses let this identity through the door.
	Passes func(a auth.Access) bool
	// Like names an identity (one before it) whose answers this one's
	// must equal, route by route, so that no answer tells the two apart
	// (a two-factor account's own password, and another account's wrong
	// one); "" none. 401 and 429 count as the same: an account's delay
	// may begin between the two requests, whatever the password.
	Like string
}

// Walk requests every route of site as each identity, and cross-site,
// and returns what went against the routes' declarations: a request the
// door let through that the access should refuse, or refused that it
// should let through; a request the mux serves from a pattern that is
// not in the registry; a cross-site change that reached the door.
func Walk(site Site, rec *Recorder, ids []Identity, crossSite Identity) []string {
	var problems []string
	for _, rt := range site.List() {
		for _, method := range methods(rt.Pattern) {
			problems = append(problems, walkOne(site, rec, rt, method, ids, crossSite)...)
		}
	}
	return append(problems, Escapes(site)...)
}

func walkOne(site Site, rec *Recorder, rt front.Route, method string, ids []Identity, crossSite Identity) []string {
	var problems []string
	target := samplePath(rt.Pattern)
	req := func(id Identity) *http.Request {
		r := httptest.NewRequest(method, "https://box.example"+target, nil)
		r.TLS = &tls.ConnectionState{}
		id.Prepare(r)
		return r
	}
	if got, ok := site.Serving(req(ids[0])); !ok || got.Pattern != rt.Pattern {
		problems = append(problems, fmt.Sprintf("%s %s: served by %q (declared: %v), not by its route %q", method, target, got.Pattern, ok, rt.Pattern))
	}
	codes := map[string]int{}
	for _, id := range ids {
		code := serve(site, rec, req(id))
		codes[id.Name] = code
		if like, ok := codes[id.Like]; ok && !sameAnswer(code, like) {
			problems = append(problems, fmt.Sprintf("%s as %s: %d, but as %s: %d", rt.Pattern, id.Name, code, id.Like, like))
		}
		want := id.Passes(rt.Access)
		switch {
		case !rec.asked:
			problems = append(problems, fmt.Sprintf("%s %s as %s: the door was never asked (%d)", method, rt.Pattern, id.Name, code))
		case rec.passed != want:
			problems = append(problems, fmt.Sprintf("%s %s (%s) as %s: the door let it through: %v, want %v (%d)", method, rt.Pattern, rt.Access, id.Name, rec.passed, want, code))
		case !rec.passed && !refusal(code):
			problems = append(problems, fmt.Sprintf("%s %s as %s: refused with %d", method, rt.Pattern, id.Name, code))
		}
	}
	if !safe(method) {
		r := req(crossSite)
		r.Header.Set("Origin", "https://evil.example")
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		if code := serve(site, rec, r); rec.asked || code != http.StatusForbidden {
			problems = append(problems, fmt.Sprintf("%s %s cross-site as %s: %d, the door asked: %v; want 403 before any door", method, rt.Pattern, crossSite.Name, code, rec.asked))
		}
	}
	return problems
}

// serve answers r; a handler that fails on the test's stand-ins (a nil
// service) counts as reached.
func serve(site Site, rec *Recorder, r *http.Request) (code int) {
	rec.asked, rec.passed = false, false
	w := httptest.NewRecorder()
	defer func() {
		if recover() != nil {
			code = 500
		}
	}()
	site.ServeHTTP(w, r)
	return w.Code
}

// sameAnswer says whether two refusals' codes tell nothing apart: equal,
// or a wrong password's 401 and an account's delay, 429.
func sameAnswer(a, b int) bool {
	wrong := func(c int) bool { return c == http.StatusUnauthorized || c == http.StatusTooManyRequests }
	return a == b || wrong(a) && wrong(b)
}

func refusal(code int) bool {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusSeeOther, http.StatusTooManyRequests:
		return true
	}
	return false
}

func safe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// methods are the methods the walk sends a pattern: its own, or for a
// pattern of every method, one that reads and one that changes.
func methods(pattern string) []string {
	if m, _, ok := strings.Cut(pattern, " "); ok {
		return []string{m}
	}
	return []string{http.MethodGet, "PROPFIND", http.MethodPut}
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// samplePath is a path pattern matches: each wildcard "x", {$} nothing.
func samplePath(pattern string) string {
	if _, p, ok := strings.Cut(pattern, " "); ok {
		pattern = p
	}
	p := strings.ReplaceAll(pattern, "{$}", "")
	p = wildcard.ReplaceAllString(p, "x")
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(pattern, "{$}") {
		p += "x"
	}
	return p
}

// Escapes probes the mux with every declared route's path and some
// others, in every method, and returns each pattern it serves from that
// the registry does not hold. (http.ServeMux cannot list its patterns:
// this finds one that catches a probed path.)
func Escapes(site Site) []string {
	paths := []string{"/", "/x", "/x/y", "/index.php/x", "/remote.php/x", "/ocs/v2.php/x", "/admin/x", "/s/x/y", "/.well-known/x"}
	for _, rt := range site.List() {
		paths = append(paths, samplePath(rt.Pattern))
	}
	var problems []string
	seen := map[string]bool{}
	for _, p := range paths {
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH", "MKCOL", "MOVE", "COPY", "LOCK", "UNLOCK", "REPORT", "SEARCH", "MKCALENDAR"} {
			got, ok := site.Serving(httptest.NewRequest(m, "https://box.example"+p, nil))
			if !ok && got.Pattern != "" && !seen[got.Pattern] {
				seen[got.Pattern] = true
				problems = append(problems, fmt.Sprintf("%s %s: served by %q, a pattern with no declared access", m, p, got.Pattern))
			}
		}
	}
	return problems
}

// Table is the registry as a reviewer reads it: one line a route, its
// access and its pattern, sorted.
func Table(list []front.Route) string {
	var lines []string
	for _, rt := range list {
		lines = append(lines, fmt.Sprintf("%-9s %s", rt.Access, rt.Pattern))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// Count is how many routes declare each access.
func Count(list []front.Route) map[auth.Access]int {
	n := map[auth.Access]int{}
	for _, rt := range list {
		n[rt.Access]++
	}
	return n
}
