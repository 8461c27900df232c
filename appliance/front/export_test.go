package front

import "net/http"

// HandleUndeclared registers h on the mux behind rs without a
// declaration, as no mount can: the route walk must find it.
func (rs *Routes) HandleUndeclared(pattern string, h http.HandlerFunc) { rs.mux.HandleFunc(pattern, h) }
