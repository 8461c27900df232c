package calendars

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/emersion/go-webdav/caldav"
	"github.com/emersion/go-webdav/carddav"
)

// Door is the login door as CalDAV and CardDAV ask it (package auth).
type Door interface {
	Authenticate(w http.ResponseWriter, r *http.Request) (string, bool)
}

// Handler serves CalDAV and CardDAV for the logged-in user: discovery
// (/.well-known/, the principal), and each home and collection through
// go-webdav, with this package's additions in front of it.
type Handler struct {
	Store *Store
	// Door checks the request's credentials, as for every protocol, and
	// answers the request itself when they fail.
	Door Door
	// Emails are the users' e-mail addresses (users.DB): the calendar user
	// address clients put in invitations; nil, or "" for a user: none.
	Emails interface{ Email(user string) string }
	Log    *slog.Logger

	parsing   sync.Once
	parseTurn chan struct{} // one object-parsing request at a time
}

// readThenTakeTurn reads a PUT's body (bounded) into memory, then takes a
// parse turn: a client that sends its body slowly must not hold everyone's
// turn.
func (h *Handler) readThenTakeTurn(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, h.Store.Limits.Object+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return h.takeParseTurn(r)
}

// Requests that parse objects (a PUT, and the REPORTs that read every
// object of a collection: calendar-query, the multigets) take turns, one
// at a time: a parser's tree of an object of 1,000 components takes
// megabytes, and four at once took the box past its 48 MB. The others
// (PROPFIND, GET, sync-collection) never wait.
func (h *Handler) takeParseTurn(r *http.Request) (release func(), ok bool) {
	h.parsing.Do(func() { h.parseTurn = make(chan struct{}, 1) })
	select {
	case h.parseTurn <- struct{}{}:
		return func() { <-h.parseTurn }, true
	case <-r.Context().Done():
		return nil, false
	}
}

// Routes adds the handler's paths to mux.
func (h *Handler) Routes(mux *http.ServeMux) {
	for _, p := range []string{"/.well-known/caldav", "/.well-known/carddav", davRoot, principalsDir, calendarsDir, addressDir} {
		mux.Handle(p, h)
	}
	// A client given the bare host asks it for its principal.
	mux.HandleFunc("PROPFIND /{$}", func(w http.ResponseWriter, r *http.Request) {
		if user, ok := h.Door.Authenticate(w, r); ok {
			h.principal(w, r, user, "/")
		}
	})
}

const (
	nsDAV  = davxml.NS
	nsCal  = davxml.NSCal
	nsCard = davxml.NSCard
	nsCS   = davxml.NSCS
)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, ok := h.Door.Authenticate(w, r)
	if !ok {
		return
	}
	ctx := context.WithValue(r.Context(), userKey{}, user)
	ctx = context.WithValue(ctx, condKey{}, Conditions{IfMatch: unquote(r.Header.Get("If-Match")), IfNoneMatch: unquote(r.Header.Get("If-None-Match"))})
	r = r.WithContext(ctx)
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/.well-known/"):
		http.Redirect(w, r, PrincipalPath(user), http.StatusMovedPermanently)
		return
	case p == davRoot || p+"/" == davRoot:
		h.principal(w, r, user, davRoot)
		return
	case strings.HasPrefix(p, principalsDir):
		if strings.TrimSuffix(strings.TrimPrefix(p, principalsDir), "/") != user {
			http.NotFound(w, r)
			return
		}
		h.principal(w, r, user, PrincipalPath(user))
		return
	}
	if (r.Method == "PROPFIND" || r.Method == "REPORT" || r.Method == "MKCOL") && !strings.Contains(r.Header.Get("Content-Type"), "xml") {
		// These bodies are XML whatever a client calls them (curl --data
		// says a form); go-webdav wants it named, and an empty one not
		// named (RFC 4918: no body is allprop).
		body, err := davxml.ReadBody(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(bytes.TrimSpace(body)) > 0 {
			r.Header.Set("Content-Type", "application/xml")
		} else {
			r.Header.Del("Content-Type")
			body = nil
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	t, ok := parse(p)
	if !ok || t.user != user {
		http.NotFound(w, r) // another user's collections do not exist for this one
		return
	}
	t = h.Store.kept(t) // a share's: its owner's collection
	if err := h.Store.EnsureDefault(t.kind, user); err != nil {
		h.Log.Error("calendars: cannot make the default collection", "kind", t.kind, "user", user, "err", err)
	}
	switch {
	case r.Method == "MKCALENDAR" && t.kind == Calendars && t.coll != "" && t.name == "":
		h.mkcalendar(w, r, t)
		return
	case r.Method == "PROPPATCH" && t.coll != "" && t.name == "" && t.shareID != "":
		http.Error(w, "a shared collection is renamed by its owner", http.StatusForbidden)
		return
	case r.Method == "PROPPATCH" && t.coll != "" && t.name == "":
		h.proppatchCollection(w, r, t)
		return
	case (r.Method == http.MethodPut || r.Method == http.MethodDelete) && t.name != "" && t.readOnly:
		http.Error(w, "this collection is shared with you to read only", http.StatusForbidden)
		return
	case r.Method == "REPORT" && t.coll != "" && t.name == "":
		body, err := davxml.ReadBody(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if davxml.RootIs(body, nsDAV, "sync-collection") {
			h.syncCollection(w, r, t, body)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		release, ok := h.takeParseTurn(r)
		if !ok {
			return // the client went
		}
		defer release()
	case r.Method == "PROPFIND" && t.name == "":
		h.propfindCollection(w, r, t) // a home or a collection
		return
	case r.Method == http.MethodPut && t.name != "":
		release, ok := h.readThenTakeTurn(w, r)
		if !ok {
			return
		}
		defer release()
		if !h.checkPut(w, r, t) {
			return
		}
	}
	h.delegate(w, r, t.kind)
}

func (h *Handler) delegate(w http.ResponseWriter, r *http.Request, k Kind) {
	if k == Calendars {
		(&caldav.Handler{Backend: calBackend{h.Store, h.Log}, Prefix: strings.TrimSuffix(davRoot, "/")}).ServeHTTP(w, r)
		return
	}
	(&carddav.Handler{Backend: cardBackend{h.Store}, Prefix: strings.TrimSuffix(addressDir, "/users/")}).ServeHTTP(w, r)
}

// unquote takes the tag out of an If-Match or If-None-Match value; a weak
// tag stays marked, so that it matches no strong one (RFC 9110 13.1.1).
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "W/") {
		return s
	}
	return strings.Trim(s, `"`)
}

// checkPut validates an object before go-webdav sees it, so that a bad one
// gets the precondition the RFCs name (go-webdav answers 400) and nothing
// is stored: size, syntax, one kind of component and one UID per
// calendar object, VERSION and FN in a vCard.
func (h *Handler) checkPut(w http.ResponseWriter, r *http.Request, t target) bool {
	ns, valid := nsCal, "valid-calendar-data"
	if t.kind == AddressBooks {
		ns, valid = nsCard, "valid-address-data"
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.Store.Limits.Object+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	if int64(len(body)) > h.Store.Limits.Object {
		davxml.Precondition(w, http.StatusForbidden, ns, "max-resource-size", fmt.Sprintf("larger than %d bytes", h.Store.Limits.Object))
		return false
	}
	if err := validObject(t.kind, body); err != nil {
		davxml.Precondition(w, http.StatusForbidden, ns, valid, err.Error())
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// validObject checks an object's body of kind: its shape, before any
// parser sees it, then its syntax; one kind of component and one UID per
// calendar object, VERSION and FN in a vCard.
func validObject(kind Kind, body []byte) error {
	if err := checkShape(body); err != nil {
		return err
	}
	if kind == Calendars {
		cal, err := decodeCalendar(body)
		if err == nil {
			_, _, err = caldav.ValidateCalendarObject(cal)
		}
		return err
	}
	card, err := decodeCard(body)
	if err == nil {
		err = validCard(card)
	}
	return err
}

// An object's shape is bounded before it is parsed: the parsers build a
// tree of every component, and an 800 KB body of 40,000 nested ones took
// 72 MB and seconds of CPU. An event with its alarms and a time zone is
// three deep; a long recurring series with its changed instances a few
// hundred components.
const (
	maxDepth      = 8
	maxComponents = 1000
)

// checkShape counts the BEGIN lines of an iCalendar or vCard body and how
// deep they nest, reading the lines as the decoders do: unfolded first (a
// line's continuation starts with a space or a tab), the name up to the
// first ';' or ':', in any case (BEGIN;X=1:VEVENT is a BEGIN).
func checkShape(body []byte) error {
	depth, n := 0, 0
	for _, line := range unfold(body) {
		name := line
		if i := bytes.IndexAny(line, ";:"); i >= 0 {
			name = line[:i]
		}
		switch {
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("BEGIN")):
			n++
			if depth++; depth > maxDepth {
				return fmt.Errorf("components nest more than %d deep", maxDepth)
			}
			if n > maxComponents {
				return fmt.Errorf("more than %d components in one object", maxComponents)
			}
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("END")):
			depth--
		}
	}
	return nil
}

// unfold is body's content lines, each continuation joined to its line
// (RFC 5545 3.1, RFC 6350 3.2), split at LF with a CR before it dropped.
func unfold(body []byte) [][]byte {
	var lines [][]byte
	for _, raw := range bytes.Split(body, []byte("\n")) {
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t') && len(lines) > 0 {
			last := len(lines) - 1
			lines[last] = append(lines[last], raw[1:]...)
			continue
		}
		lines = append(lines, append([]byte(nil), raw...))
	}
	return lines
}

// The request bodies this package reads itself.
type propNames struct {
	Names []struct{ XMLName xml.Name } `xml:",any"`
}

type syncBody struct {
	XMLName xml.Name   `xml:"DAV: sync-collection"`
	Token   string     `xml:"DAV: sync-token"`
	Level   string     `xml:"DAV: sync-level"`
	Prop    *propNames `xml:"DAV: prop"`
}

type mkcalendarBody struct {
	Set struct {
		Prop struct {
			DisplayName string `xml:"DAV: displayname"`
			Description string `xml:"urn:ietf:params:xml:ns:caldav calendar-description"`
			Color       string `xml:"http://apple.com/ns/ical/ calendar-color"`
			Order       string `xml:"http://apple.com/ns/ical/ calendar-order"`
			Comps       []struct {
				Name string `xml:"name,attr"`
			} `xml:"urn:ietf:params:xml:ns:caldav supported-calendar-component-set>comp"`
		} `xml:"DAV: prop"`
	} `xml:"DAV: set"`
}

func (h *Handler) mkcalendar(w http.ResponseWriter, r *http.Request, t target) {
	var b mkcalendarBody
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if len(bytes.TrimSpace(body)) > 0 {
		if err := xml.Unmarshal(body, &b); err != nil {
			http.Error(w, "MKCALENDAR: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	pr := b.Set.Prop
	c := Collection{Kind: Calendars, User: t.user, Name: t.coll, DisplayName: pr.DisplayName, Description: pr.Description}
	if pr.Color != "" && validColor(strings.TrimSpace(pr.Color)) {
		c.Color = strings.TrimSpace(pr.Color)
	}
	if _, err := strconv.Atoi(strings.TrimSpace(pr.Order)); err == nil {
		c.Order = strings.TrimSpace(pr.Order)
	}
	for _, comp := range b.Set.Prop.Comps {
		c.Components = append(c.Components, comp.Name)
	}
	if len(c.Components) == 0 {
		c.Components = []string{"VEVENT", "VTODO"}
	}
	if err := h.Store.Create(c); err != nil {
		code := http.StatusInternalServerError
		switch {
		case err == ErrExists:
			code = http.StatusMethodNotAllowed
		case err == ErrTooMany:
			code = http.StatusInsufficientStorage
		case err == ErrNotFound:
			code = http.StatusForbidden
		}
		http.Error(w, "MKCALENDAR: "+err.Error(), code)
		return
	}
	w.WriteHeader(http.StatusCreated)
}
