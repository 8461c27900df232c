package calendars

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
)

// What go-webdav does not answer, answered here: the principal (one for
// CalDAV and CardDAV), a collection's own properties (getctag, sync-token,
// supported-report-set, privileges) and the sync-collection REPORT.

// xmlText escapes text and attribute values (always written in double
// quotes, so those are escaped too, but not in text: ETags stay readable).
func xmlText(s string) string {
	return textEscaper.Replace(strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xfffe || r == 0xffff {
			return -1 // not allowed in XML 1.0 at all
		}
		return r
	}, s))
}

var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#13;")

// multistatus writes a 207 body from responses.
type multistatus struct{ b strings.Builder }

func (m *multistatus) start() {
	m.b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" +
		`<D:multistatus xmlns:D="DAV:" xmlns:C="` + nsCal + `" xmlns:CR="` + nsCard + `" xmlns:CS="` + nsCS + `">`)
}

// response writes one resource: the properties found (name -> inner XML,
// prefixed D:, C:, CR: or CS:), and those asked for but not found.
func (m *multistatus) response(href string, found map[string]string, order []string, missing []xml.Name) {
	fmt.Fprintf(&m.b, "<D:response><D:href>%s</D:href>", xmlText(escapePath(href)))
	if len(order) > 0 {
		m.b.WriteString("<D:propstat><D:prop>")
		for _, n := range order {
			if v := found[n]; v == "" {
				fmt.Fprintf(&m.b, "<%s/>", n)
			} else {
				fmt.Fprintf(&m.b, "<%s>%s</%s>", n, v, n)
			}
		}
		m.b.WriteString("</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>")
	}
	if len(missing) > 0 {
		m.b.WriteString("<D:propstat><D:prop>")
		for _, n := range missing {
			if n.Space == "" {
				fmt.Fprintf(&m.b, `<%s xmlns=""/>`, n.Local)
				continue
			}
			fmt.Fprintf(&m.b, `<X:%s xmlns:X="%s"/>`, n.Local, strings.ReplaceAll(xmlText(n.Space), `"`, "&quot;"))
		}
		m.b.WriteString("</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>")
	}
	m.b.WriteString("</D:response>")
}

func (m *multistatus) send(w http.ResponseWriter, token string) {
	if token != "" {
		fmt.Fprintf(&m.b, "<D:sync-token>%s</D:sync-token>", xmlText(token))
	}
	m.b.WriteString("</D:multistatus>\n")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	io.WriteString(w, m.b.String())
}

var prefixes = map[string]string{nsDAV: "D:", nsCal: "C:", nsCard: "CR:", nsCS: "CS:"}

// answer picks, from the properties a resource has (keyed by namespace
// and name), those asked for: all of them for allprop or an empty body.
func answer(asked *propNames, have map[xml.Name]string) (map[string]string, []string, []xml.Name) {
	found := map[string]string{}
	var order []string
	var missing []xml.Name
	add := func(n xml.Name, v string) {
		key := prefixes[n.Space] + n.Local
		found[key] = v
		order = append(order, key)
	}
	if asked == nil {
		for n, v := range have {
			add(n, v)
		}
		return found, order, nil
	}
	for _, a := range asked.Names {
		if v, ok := have[a.XMLName]; ok && prefixes[a.XMLName.Space] != "" {
			add(a.XMLName, v)
		} else {
			missing = append(missing, a.XMLName)
		}
	}
	return found, order, missing
}

func readPropfind(r *http.Request) (*propNames, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil // allprop
	}
	var pf propfindBody
	if err := xml.Unmarshal(body, &pf); err != nil {
		return nil, err
	}
	if pf.AllProp != nil || pf.Prop == nil {
		return nil, nil
	}
	return pf.Prop, nil
}

func href(p string) string { return "<D:href>" + xmlText(escapePath(p)) + "</D:href>" }

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
	asked, err := readPropfind(r)
	if err != nil {
		http.Error(w, "PROPFIND: "+err.Error(), http.StatusBadRequest)
		return
	}
	pr := PrincipalPath(user)
	have := map[xml.Name]string{
		{Space: nsDAV, Local: "current-user-principal"}:    href(pr),
		{Space: nsDAV, Local: "resourcetype"}:              "<D:collection/>",
		{Space: nsDAV, Local: "displayname"}:               xmlText(user),
		{Space: nsCal, Local: "calendar-home-set"}:         href(HomePath(Calendars, user)),
		{Space: nsCard, Local: "addressbook-home-set"}:     href(HomePath(AddressBooks, user)),
		{Space: nsDAV, Local: "principal-URL"}:             href(pr),
		{Space: nsCal, Local: "calendar-user-address-set"}: href("mailto:" + user + "@bonesync.invalid"),
	}
	if self == pr {
		have[xml.Name{Space: nsDAV, Local: "resourcetype"}] = "<D:collection/><D:principal/>"
	}
	var m multistatus
	m.start()
	found, order, missing := answer(asked, have)
	m.response(self, found, order, missing)
	m.send(w, "")
}

var privileges = "<D:privilege><D:read/></D:privilege><D:privilege><D:write/></D:privilege><D:privilege><D:write-content/></D:privilege>" +
	"<D:privilege><D:write-properties/></D:privilege><D:privilege><D:bind/></D:privilege><D:privilege><D:unbind/></D:privilege>"

// collectionProps are a collection's own properties.
func (h *Handler) collectionProps(c *Collection) map[xml.Name]string {
	reports := "<D:supported-report><D:report><D:sync-collection/></D:report></D:supported-report>"
	have := map[xml.Name]string{
		{Space: nsDAV, Local: "displayname"}:                xmlText(c.DisplayName),
		{Space: nsCS, Local: "getctag"}:                     xmlText(c.Tag()),
		{Space: nsDAV, Local: "sync-token"}:                 xmlText(c.Token(c.Seq)),
		{Space: nsDAV, Local: "getetag"}:                    xmlText(`"` + c.Tag() + `"`),
		{Space: nsDAV, Local: "owner"}:                      href(PrincipalPath(c.User)),
		{Space: nsDAV, Local: "current-user-principal"}:     href(PrincipalPath(c.User)),
		{Space: nsDAV, Local: "current-user-privilege-set"}: privileges,
		{Space: nsDAV, Local: "supported-report-set"}:       "",
	}
	if c.Kind == Calendars {
		have[xml.Name{Space: nsDAV, Local: "resourcetype"}] = "<D:collection/><C:calendar/>"
		have[xml.Name{Space: nsCal, Local: "calendar-description"}] = xmlText(c.Description)
		comps := ""
		for _, comp := range c.Components {
			comps += fmt.Sprintf(`<C:comp name="%s"/>`, strings.ReplaceAll(xmlText(comp), `"`, "&quot;"))
		}
		have[xml.Name{Space: nsCal, Local: "supported-calendar-component-set"}] = comps
		have[xml.Name{Space: nsCal, Local: "max-resource-size"}] = strconv.FormatInt(h.Store.Limits.Object, 10)
		reports += "<D:supported-report><D:report><C:calendar-multiget/></D:report></D:supported-report>" +
			"<D:supported-report><D:report><C:calendar-query/></D:report></D:supported-report>"
	} else {
		have[xml.Name{Space: nsDAV, Local: "resourcetype"}] = "<D:collection/><CR:addressbook/>"
		have[xml.Name{Space: nsCard, Local: "addressbook-description"}] = xmlText(c.Description)
		have[xml.Name{Space: nsCard, Local: "supported-address-data"}] = `<CR:address-data-type content-type="text/vcard" version="3.0"/><CR:address-data-type content-type="text/vcard" version="4.0"/>`
		have[xml.Name{Space: nsCard, Local: "max-resource-size"}] = strconv.FormatInt(h.Store.Limits.Object, 10)
		reports += "<D:supported-report><D:report><CR:addressbook-multiget/></D:report></D:supported-report>" +
			"<D:supported-report><D:report><CR:addressbook-query/></D:report></D:supported-report>"
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
	c, err := h.Store.Collection(t.kind, t.user, t.coll)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	asked, err := readPropfind(r)
	if err != nil {
		http.Error(w, "PROPFIND: "+err.Error(), http.StatusBadRequest)
		return
	}
	var m multistatus
	m.start()
	found, order, missing := answer(asked, h.collectionProps(c))
	m.response(t.collPath(), found, order, missing)
	if r.Header.Get("Depth") != "0" {
		// The members, as go-webdav describes them, without the
		// collection's own response.
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.delegate(rec, r2, t.kind)
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
			fmt.Fprintf(&m.b, `<response xmlns="DAV:">%s</response>`, resp.Inner)
		}
	}
	m.send(w, "")
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
		precondition(w, http.StatusForbidden, nsDAV, "sync-traversal-supported", "only sync-level 1: calendars and address books hold no collections")
		return
	}
	c, err := h.Store.Collection(t.kind, t.user, t.coll)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	since, ok := c.ParseToken(strings.TrimSpace(sb.Token))
	put, deleted, now, err := h.Store.Changes(t.kind, t.user, t.coll, since)
	if err == ErrNotFound {
		http.NotFound(w, r)
		return
	}
	if !ok || err == ErrBadToken {
		precondition(w, http.StatusForbidden, nsDAV, "valid-sync-token", "not a token of this collection: sync from scratch")
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	asked := sb.Prop
	if asked == nil { // no prop element: the ETags
		asked = &propNames{}
		asked.Names = append(asked.Names, struct{ XMLName xml.Name }{xml.Name{Space: nsDAV, Local: "getetag"}})
	}
	var m multistatus
	m.start()
	dataName := xml.Name{Space: nsCal, Local: "calendar-data"}
	ctype := "text/calendar; charset=utf-8"
	if t.kind == AddressBooks {
		dataName, ctype = xml.Name{Space: nsCard, Local: "address-data"}, "text/vcard; charset=utf-8"
	}
	for _, name := range put {
		o, err := h.Store.Object(t.kind, t.user, t.coll, name)
		if err != nil {
			deleted = append(deleted, name)
			continue
		}
		have := map[xml.Name]string{
			{Space: nsDAV, Local: "getetag"}:         xmlText(`"` + o.ETag + `"`),
			{Space: nsDAV, Local: "getcontenttype"}:  ctype,
			{Space: nsDAV, Local: "getlastmodified"}: o.ModTime.UTC().Format(http.TimeFormat),
			{Space: nsDAV, Local: "resourcetype"}:    "",
			dataName:                                 xmlText(string(o.Data)),
		}
		found, order, missing := answer(asked, have)
		m.response(t.collPath()+name, found, order, missing)
	}
	for _, name := range deleted {
		fmt.Fprintf(&m.b, "<D:response><D:href>%s</D:href><D:status>HTTP/1.1 404 Not Found</D:status></D:response>", xmlText(escapePath(t.collPath()+name)))
	}
	m.send(w, c.Token(now))
}

// propfindHome answers PROPFIND on a calendar or address-book home: the
// home, and at Depth 1 each collection with its own properties (getctag
// included: clients that poll the home see every change).
func (h *Handler) propfindHome(w http.ResponseWriter, r *http.Request, t target) {
	asked, err := readPropfind(r)
	if err != nil {
		http.Error(w, "PROPFIND: "+err.Error(), http.StatusBadRequest)
		return
	}
	home := HomePath(t.kind, t.user)
	have := map[xml.Name]string{
		{Space: nsDAV, Local: "resourcetype"}:               "<D:collection/>",
		{Space: nsDAV, Local: "displayname"}:                xmlText(t.user),
		{Space: nsDAV, Local: "owner"}:                      href(PrincipalPath(t.user)),
		{Space: nsDAV, Local: "current-user-principal"}:     href(PrincipalPath(t.user)),
		{Space: nsDAV, Local: "current-user-privilege-set"}: privileges,
	}
	var m multistatus
	m.start()
	found, order, missing := answer(asked, have)
	m.response(home, found, order, missing)
	if r.Header.Get("Depth") != "0" {
		colls, err := h.Store.Collections(t.kind, t.user)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for i := range colls {
			found, order, missing := answer(asked, h.collectionProps(&colls[i]))
			m.response(home+colls[i].Name+"/", found, order, missing)
		}
	}
	m.send(w, "")
}
