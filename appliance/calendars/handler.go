package calendars

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/emersion/go-webdav/caldav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/precond"
)

// Handler serves CalDAV and CardDAV for the logged-in user: discovery
// (/.well-known/, the principal), and each home and collection through
// go-webdav, with this package's additions in front of it.
type Handler struct {
	Store *Store
	// Emails are the users' e-mail addresses (users.DB): the calendar user
	// address clients put in invitations; nil, or "" for a user: none.
	Emails interface{ Email(user string) string }
	Log    *slog.Logger
}

// Routes adds the handler's paths, each the logged-in user's.
func (h *Handler) Routes(rs *front.Routes) {
	for _, p := range []string{"/.well-known/caldav", "/.well-known/carddav", davRoot, principalsDir, calendarsDir, addressDir} {
		rs.Handle(auth.User, p, h.serve)
	}
	// A client given the bare host asks it for its principal.
	rs.Handle(auth.User, "PROPFIND /{$}", func(w http.ResponseWriter, r *http.Request, who auth.Caller) {
		h.principal(w, r, who.User, "/")
	})
}

const (
	nsDAV  = davxml.NS
	nsCal  = davxml.NSCal
	nsCard = davxml.NSCard
	nsCS   = davxml.NSCS
)

// serve answers a CalDAV or CardDAV request of the user.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
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
		release, ok := h.draw(w, r, "calendar-report", h.Store.reportCost(t, body))
		if !ok {
			return
		}
		defer release()
	case r.Method == "PROPFIND" && t.name == "":
		h.propfindCollection(w, r, t) // a home or a collection
		return
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && t.name != "":
		release, ok := h.draw(w, r, "calendar-read", h.Store.readCost(t, []string{t.name}))
		if !ok {
			return
		}
		defer release()
	case r.Method == http.MethodPut && t.name != "":
		release, ok := h.checkPut(w, r, t)
		if !ok {
			return
		}
		defer release()
	}
	h.delegate(w, r, t)
}

// delegate hands the request for t to go-webdav, with a backend made for
// it: the user (t's, which serve held to the logged-in one) and the
// request's conditions travel in the backend, not in the context.
func (h *Handler) delegate(w http.ResponseWriter, r *http.Request, t target) {
	user, cond := t.user, precond.Of(r.Header)
	if t.kind == Calendars {
		(&caldav.Handler{Backend: newCalBackend(h.Store, h.Log, user, cond), Prefix: strings.TrimSuffix(davRoot, "/")}).ServeHTTP(w, r)
		return
	}
	(&carddav.Handler{Backend: newCardBackend(h.Store, user, cond), Prefix: strings.TrimSuffix(addressDir, "/users/")}).ServeHTTP(w, r)
}

// checkPut validates an object before go-webdav sees it, so that a bad one
// gets the precondition the RFCs name (go-webdav answers 400) and nothing
// is stored: size, shape (before any parser allocates), then syntax, one
// kind of component and one UID per calendar object, dates that can be
// kept, VERSION and FN in a vCard. The parse draws its estimate from the
// budget first, and holds it (release) until the request is answered.
func (h *Handler) checkPut(w http.ResponseWriter, r *http.Request, t target) (release func(), ok bool) {
	ns, valid := nsCal, "valid-calendar-data"
	if t.kind == AddressBooks {
		ns, valid = nsCard, "valid-address-data"
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.Store.Limits.Object+1))
	if err != nil {
		http.Error(w, "reading the object: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if int64(len(body)) > h.Store.Limits.Object {
		davxml.Precondition(w, http.StatusForbidden, ns, "max-resource-size", fmt.Sprintf("larger than %d bytes", h.Store.Limits.Object))
		return nil, false
	}
	sh, err := checkShape(body)
	if err != nil {
		h.Log.Info("calendars: object refused before parsing", "user", t.user, "path", r.URL.Path, "bytes", len(body), "err", err)
		davxml.Precondition(w, http.StatusForbidden, ns, valid, err.Error())
		return nil, false
	}
	release, ok = h.draw(w, r, "calendar-put", putCost(sh))
	if !ok {
		return nil, false
	}
	if t.kind == AddressBooks {
		body = unfold(body) // go-vcard unfolds by concatenating, once a fold
	}
	if err := parseObject(t.kind, body); err != nil {
		release()
		davxml.Precondition(w, http.StatusForbidden, ns, valid, err.Error())
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return release, true
}

// draw takes n bytes from the store's budget for an operation of kind,
// or answers the client why not (503 with Retry-After when the box is
// busy, 507 when the work could never fit).
//
// The objects a draw is for are bounded already (Limits.Object, the
// shapes checkShape takes), so an estimate larger than the whole budget
// is the whole budget: the work then runs alone, never refused as too
// large (an object of 900 KB, under the 1 MiB limit, costs 17 MB to put).
func (h *Handler) draw(w http.ResponseWriter, r *http.Request, kind string, n int64) (release func(), ok bool) {
	if total := h.Store.Memory.Stats().Total; total > 0 {
		n = min(n, total)
	}
	release, err := h.Store.Memory.Take(r.Context(), kind, n)
	if err != nil {
		h.Log.Info("calendars: refused for want of memory", "kind", kind, "bytes", n, "path", r.URL.Path, "err", err)
		if !budget.Answer(w, err, http.StatusInsufficientStorage) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		return nil, false
	}
	return release, true
}

// validObject checks an object's body of kind: its shape, before any
// parser sees it, then its syntax and content (parseObject).
func validObject(kind Kind, body []byte) error {
	if _, err := checkShape(body); err != nil {
		return err
	}
	return parseObject(kind, body)
}

// parseObject parses a body whose shape was checked: one kind of
// component and one UID per calendar object, with dates that can be kept;
// VERSION and FN in a vCard.
func parseObject(kind Kind, body []byte) error {
	if kind == Calendars {
		cal, err := decodeCalendar(body)
		if err == nil {
			_, _, err = caldav.ValidateCalendarObject(cal)
		}
		if err == nil {
			err = checkDates(cal.Component)
		}
		return err
	}
	card, err := decodeCard(body)
	if err == nil {
		err = validCard(card)
	}
	return err
}

// unfold is body with its folds (a line break and the space or tab
// after it, RFC 5545 3.1, RFC 6350 3.2) taken out: the same content lines,
// each on one line.
func unfold(body []byte) []byte {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		switch {
		case body[i] == '\r' && i+2 < len(body) && body[i+1] == '\n' && (body[i+2] == ' ' || body[i+2] == '\t'):
			i += 2
		case body[i] == '\n' && i+1 < len(body) && (body[i+1] == ' ' || body[i+1] == '\t'):
			i++
		default:
			out = append(out, body[i])
		}
	}
	return out
}

// multigetNames are the objects a multiget REPORT names (their last path
// element), or nil for any other REPORT (a query reads every object).
func multigetNames(body []byte) []string {
	if !davxml.RootIs(body, nsCal, "calendar-multiget") && !davxml.RootIs(body, nsCard, "addressbook-multiget") {
		return nil
	}
	var m struct {
		Hrefs []string `xml:"DAV: href"`
	}
	if xml.Unmarshal(body, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m.Hrefs))
	for _, h := range m.Hrefs {
		name := path.Base(strings.TrimSpace(h))
		if un, err := url.PathUnescape(name); err == nil {
			name = un
		}
		names = append(names, name)
	}
	return names
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
