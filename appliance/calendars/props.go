package calendars

import (
	"bytes"
	"encoding/xml"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/davxml"
)

// What go-webdav does not answer, answered here: the principal (one for
// CalDAV and CardDAV), a collection's own properties (getctag, sync-token,
// supported-report-set, privileges) and the sync-collection REPORT.

// answer writes a resource's response: the properties asked for that it
// has (have: name to value as XML), then those it has not; all of them for
// allprop, their names for propname.
func answer(m *davxml.Writer, href string, req davxml.Propfind, have map[xml.Name]string) {
	var found, missing davxml.Props
	if req.AllProp || req.PropName {
		names := slices.SortedFunc(maps.Keys(have), func(a, b xml.Name) int {
			return strings.Compare(a.Space+" "+a.Local, b.Space+" "+b.Local)
		})
		for _, n := range names {
			v := have[n]
			if req.PropName {
				v = ""
			}
			found.Add(n, "", v)
		}
	}
	for _, n := range req.Names { // prop, or allprop's include
		if v, ok := have[n]; ok && !req.AllProp {
			found.Add(n, "", v)
		} else if !ok {
			missing.Add(n, "", "")
		}
	}
	m.Response(href, davxml.Propstat{Status: http.StatusOK, Props: &found}, davxml.Propstat{Status: http.StatusNotFound, Props: &missing})
}

func href(p string) string { return davxml.Href(p) }

// principal answers PROPFIND on the principal (and on the DAV root, which
// clients that start from the bare host name ask first).
func (h *Handler) principal(w http.ResponseWriter, r *http.Request, user, self string) {
	if r.Method == http.MethodOptions {
		w.Header().Set("DAV", "1, 3, calendar-access, addressbook")
		w.Header().Set("Allow", "OPTIONS, PROPFIND")
		return
	}
	if r.Method != "PROPFIND" {
		http.Error(w, "only PROPFIND here", http.StatusMethodNotAllowed)
		return
	}
	asked, err := davxml.ReadPropfind(r.Body)
	if err != nil {
		http.Error(w, "PROPFIND: "+err.Error(), http.StatusBadRequest)
		return
	}
	pr := PrincipalPath(user)
	addresses := href(pr)
	if h.Emails != nil {
		if email := h.Emails.Email(user); email != "" {
			addresses = href("mailto:"+email) + addresses
		}
	}
	have := map[xml.Name]string{
		{Space: nsDAV, Local: "current-user-principal"}:    href(pr),
		{Space: nsDAV, Local: "resourcetype"}:              "<d:collection/>",
		{Space: nsDAV, Local: "displayname"}:               davxml.Text(user),
		{Space: nsCal, Local: "calendar-home-set"}:         href(HomePath(Calendars, user)),
		{Space: nsCard, Local: "addressbook-home-set"}:     href(HomePath(AddressBooks, user)),
		{Space: nsDAV, Local: "principal-URL"}:             href(pr),
		{Space: nsCal, Local: "calendar-user-address-set"}: addresses,
	}
	if self == pr {
		have[xml.Name{Space: nsDAV, Local: "resourcetype"}] = "<d:collection/><d:principal/>"
	}
	m := davxml.NewWriter(w)
	answer(m, self, asked, have)
	m.Close("")
}

var privileges = "<d:privilege><d:read/></d:privilege><d:privilege><d:write/></d:privilege><d:privilege><d:write-content/></d:privilege>" +
	"<d:privilege><d:write-properties/></d:privilege><d:privilege><d:bind/></d:privilege><d:privilege><d:unbind/></d:privilege>"

// collectionProps are a collection's own properties.
func (h *Handler) collectionProps(c *Collection) map[xml.Name]string {
	reports := "<d:supported-report><d:report><d:sync-collection/></d:report></d:supported-report>"
	owner, privs := c.User, privileges
	if c.owner != "" {
		owner = c.owner
	}
	if c.readOnly {
		privs = "<d:privilege><d:read/></d:privilege>"
	}
	have := map[xml.Name]string{
		{Space: nsDAV, Local: "displayname"}:                davxml.Text(c.DisplayName),
		{Space: nsCS, Local: "getctag"}:                     davxml.Text(c.Tag()),
		{Space: nsDAV, Local: "sync-token"}:                 davxml.Text(c.Token(c.Seq)),
		{Space: nsDAV, Local: "getetag"}:                    davxml.Text(`"` + c.Tag() + `"`),
		{Space: nsDAV, Local: "owner"}:                      href(PrincipalPath(owner)),
		{Space: nsDAV, Local: "current-user-principal"}:     href(PrincipalPath(c.User)),
		{Space: nsDAV, Local: "current-user-privilege-set"}: privs,
		{Space: nsDAV, Local: "supported-report-set"}:       "",
	}
	if c.Kind == Calendars {
		have[xml.Name{Space: nsDAV, Local: "resourcetype"}] = "<d:collection/><cal:calendar/>"
		have[xml.Name{Space: nsCal, Local: "calendar-description"}] = davxml.Text(c.Description)
		if c.Color != "" {
			have[calendarColor] = davxml.Text(c.Color)
		}
		if c.Order != "" {
			have[calendarOrder] = davxml.Text(c.Order)
		}
		comps := ""
		for _, comp := range c.Components {
			comps += `<cal:comp name="` + davxml.Attr(comp) + `"/>`
		}
		have[xml.Name{Space: nsCal, Local: "supported-calendar-component-set"}] = comps
		have[xml.Name{Space: nsCal, Local: "max-resource-size"}] = strconv.FormatInt(h.Store.Limits.Object, 10)
		reports += "<d:supported-report><d:report><cal:calendar-multiget/></d:report></d:supported-report>" +
			"<d:supported-report><d:report><cal:calendar-query/></d:report></d:supported-report>"
	} else {
		have[xml.Name{Space: nsDAV, Local: "resourcetype"}] = "<d:collection/><card:addressbook/>"
		have[xml.Name{Space: nsCard, Local: "addressbook-description"}] = davxml.Text(c.Description)
		have[xml.Name{Space: nsCard, Local: "supported-address-data"}] = `<card:address-data-type content-type="text/vcard" version="3.0"/><card:address-data-type content-type="text/vcard" version="4.0"/>`
		have[xml.Name{Space: nsCard, Local: "max-resource-size"}] = strconv.FormatInt(h.Store.Limits.Object, 10)
		reports += "<d:supported-report><d:report><card:addressbook-multiget/></d:report></d:supported-report>" +
			"<d:supported-report><d:report><card:addressbook-query/></d:report></d:supported-report>"
	}
	have[xml.Name{Space: nsDAV, Local: "supported-report-set"}] = reports
	return have
}

// propfindCollection answers PROPFIND on a calendar or address book: its
// own properties here, its members' (Depth 1) from go-webdav.
func (h *Handler) propfindCollection(w http.ResponseWriter, r *http.Request, t target) {
	if t.coll == "" {
		h.propfindHome(w, r, t)
		return
	}
	c, err := h.Store.collectionAt(t)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	body, err := davxml.ReadBody(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	asked, err := davxml.ParsePropfind(body)
	if err != nil {
		http.Error(w, "PROPFIND: "+err.Error(), http.StatusBadRequest)
		return
	}
	// The members first, as go-webdav describes them: a failure is then
	// answered before the multistatus has begun.
	var members []string
	if r.Header.Get("Depth") != "0" {
		// The members, as go-webdav describes them, without the
		// collection's own response.
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.delegate(rec, r2, t)
		if rec.Code != http.StatusMultiStatus {
			http.Error(w, "PROPFIND of the members failed", rec.Code)
			return
		}
		var ms struct {
			Responses []struct {
				Href  string `xml:"DAV: href"`
				Inner string `xml:",innerxml"`
			} `xml:"DAV: response"`
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &ms); err != nil {
			http.Error(w, "PROPFIND of the members: "+err.Error(), http.StatusInternalServerError)
			return
		}
		for _, resp := range ms.Responses {
			if p, err := url.PathUnescape(resp.Href); err == nil && strings.TrimSuffix(p, "/") == strings.TrimSuffix(t.collPath(), "/") {
				continue
			}
			members = append(members, `<d:response xmlns="DAV:">`+resp.Inner+"</d:response>\n")
		}
	}
	m := davxml.NewWriter(w)
	answer(m, t.collPath(), asked, h.collectionProps(c))
	for _, resp := range members {
		m.Raw(resp)
	}
	m.Close("")
}

// syncCollection is RFC 6578's REPORT: what changed since the client's
// token, the objects with the properties asked for and the removed ones as
// 404, and a new token. With nothing new the answer is the token alone.
func (h *Handler) syncCollection(w http.ResponseWriter, r *http.Request, t target, body []byte) {
	var sb syncBody
	if err := xml.Unmarshal(body, &sb); err != nil {
		http.Error(w, "sync-collection: "+err.Error(), http.StatusBadRequest)
		return
	}
	if l := strings.TrimSpace(sb.Level); l != "" && l != "1" && l != "infinite" {
		davxml.Precondition(w, http.StatusForbidden, nsDAV, "sync-traversal-supported", "only sync-level 1: calendars and address books hold no collections")
		return
	}
	c, err := h.Store.collectionAt(t)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	since, ok := c.ParseToken(strings.TrimSpace(sb.Token))
	put, deleted, now, err := h.Store.Changes(t.kind, t.owner, t.ocoll, since)
	if err == ErrNotFound {
		http.NotFound(w, r)
		return
	}
	if !ok || err == ErrBadToken {
		davxml.Precondition(w, http.StatusForbidden, nsDAV, "valid-sync-token", "not a token of this collection: sync from scratch")
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	asked := davxml.Propfind{Names: []xml.Name{davxml.Name("getetag")}} // no prop element: the ETags
	if sb.Prop != nil {
		asked.Names = asked.Names[:0]
		for _, n := range sb.Prop.Names {
			asked.Names = append(asked.Names, n.XMLName)
		}
	}
	m := davxml.NewWriter(w)
	dataName := xml.Name{Space: nsCal, Local: "calendar-data"}
	ctype := "text/calendar; charset=utf-8"
	if t.kind == AddressBooks {
		dataName, ctype = xml.Name{Space: nsCard, Local: "address-data"}, "text/vcard; charset=utf-8"
	}
	for _, name := range put {
		o, err := h.Store.Object(t.kind, t.owner, t.ocoll, name)
		if err != nil {
			deleted = append(deleted, name)
			continue
		}
		have := map[xml.Name]string{
			{Space: nsDAV, Local: "getetag"}:         davxml.Text(`"` + o.ETag + `"`),
			{Space: nsDAV, Local: "getcontenttype"}:  ctype,
			{Space: nsDAV, Local: "getlastmodified"}: o.ModTime.UTC().Format(http.TimeFormat),
			{Space: nsDAV, Local: "resourcetype"}:    "",
			dataName:                                 davxml.Text(string(o.Data)),
		}
		answer(m, t.collPath()+name, asked, have)
	}
	for _, name := range deleted {
		m.Status(t.collPath()+name, http.StatusNotFound)
	}
	m.Close(c.Token(now))
}

// propfindHome answers PROPFIND on a calendar or address-book home: the
// home, and at Depth 1 each collection with its own properties (getctag
// included: clients that poll the home see every change).
func (h *Handler) propfindHome(w http.ResponseWriter, r *http.Request, t target) {
	asked, err := davxml.ReadPropfind(r.Body)
	if err != nil {
		http.Error(w, "PROPFIND: "+err.Error(), http.StatusBadRequest)
		return
	}
	home := HomePath(t.kind, t.user)
	have := map[xml.Name]string{
		{Space: nsDAV, Local: "resourcetype"}:               "<d:collection/>",
		{Space: nsDAV, Local: "displayname"}:                davxml.Text(t.user),
		{Space: nsDAV, Local: "owner"}:                      href(PrincipalPath(t.user)),
		{Space: nsDAV, Local: "current-user-principal"}:     href(PrincipalPath(t.user)),
		{Space: nsDAV, Local: "current-user-privilege-set"}: privileges,
	}
	var colls []Collection
	if r.Header.Get("Depth") != "0" {
		if colls, err = h.Store.Collections(t.kind, t.user); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		colls = append(colls, h.Store.shared(t.user, t.kind)...)
	}
	m := davxml.NewWriter(w)
	answer(m, home, asked, have)
	for i := range colls {
		answer(m, home+colls[i].Name+"/", asked, h.collectionProps(&colls[i]))
	}
	m.Close("")
}
