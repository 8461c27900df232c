package front

import (
	"net/http"
	"slices"

	"github.com/bonesync/bonesync/appliance/auth"
)

// Door is the login door as the front asks it (package auth): the check
// of the access a route declared. It returns the caller, or an error: an
// *auth.Refusal, which the front writes (refuse), or auth.ErrAnswered when
// the door answered the request itself.
type Door interface {
	Check(a auth.Access, w http.ResponseWriter, r *http.Request) (auth.Caller, error)
}

// Handler is a route's handler: it runs once the door has let the request
// through as the route declared, with who sent it (the zero Caller on a
// public route).
type Handler func(w http.ResponseWriter, r *http.Request, c auth.Caller)

// Route is a pattern registered and the access it declared.
type Route struct {
	Pattern string
	Access  auth.Access
}

// Routes is what a mount registers its routes on: each with the access it
// asks, which the front checks through the door before the handler runs.
// The mux behind it takes no route any other way. As a handler, it
// refuses a changing request a browser sent from another site
// (http.CrossOriginProtection) before any route.
type Routes struct {
	door  Door
	mux   *http.ServeMux
	list  []Route
	cross *http.CrossOriginProtection
}

// NewRoutes is an empty set of routes, checked by door (nil: only Public
// and Link routes may be registered).
func NewRoutes(door Door) *Routes {
	return &Routes{door: door, mux: http.NewServeMux(), cross: http.NewCrossOriginProtection()}
}

// Handle registers h for pattern (http.ServeMux's patterns), reached only
// through the door's check for a.
func (rs *Routes) Handle(a auth.Access, pattern string, h Handler) {
	if rs.door == nil && a != auth.Public && a != auth.Link {
		panic("front: route " + pattern + " declared " + a.String() + " with no door to check it")
	}
	rs.list = append(rs.list, Route{Pattern: pattern, Access: a})
	door := rs.door
	rs.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c := auth.Caller{}
		if door != nil {
			var err error
			if c, err = door.Check(a, w, r); err != nil {
				refuse(w, r, err)
				return
			}
		}
		h(w, r, c)
	})
}

// Public registers h for pattern, open to anyone.
func (rs *Routes) Public(pattern string, h http.HandlerFunc) {
	rs.Handle(auth.Public, pattern, func(w http.ResponseWriter, r *http.Request, _ auth.Caller) { h(w, r) })
}

// Link registers h for pattern, open to anyone with a public link's token
// (the handler finds the link).
func (rs *Routes) Link(pattern string, h http.HandlerFunc) {
	rs.Handle(auth.Link, pattern, func(w http.ResponseWriter, r *http.Request, _ auth.Caller) { h(w, r) })
}

// List is every route registered, in the order it was.
func (rs *Routes) List() []Route { return slices.Clone(rs.list) }

// Serving is the route r reaches, as the mux matches it, and whether it
// is one of List (false and an empty pattern: no route, 404 or 405).
func (rs *Routes) Serving(r *http.Request) (Route, bool) {
	_, pattern := rs.mux.Handler(r)
	for _, rt := range rs.list {
		if rt.Pattern == pattern {
			return rt, true
		}
	}
	return Route{Pattern: pattern}, false
}

func (rs *Routes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := rs.cross.Check(r); err != nil {
		http.Error(w, "refused: a change sent from another site's page", http.StatusForbidden)
		return
	}
	rs.mux.ServeHTTP(w, r)
}
