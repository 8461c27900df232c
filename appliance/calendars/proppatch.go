package calendars

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/davxml"
)

var (
	calendarColor = xml.Name{Space: davxml.NSICal, Local: "calendar-color"}
	calendarOrder = xml.Name{Space: davxml.NSICal, Local: "calendar-order"}
)

// validColor is a colour as the clients give it: #RRGGBB, or #RRGGBBAA.
var validColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$`).MatchString

// described are the properties of a collection a client may change, and
// how each sets its description (v is the value; "" with remove).
var described = map[xml.Name]func(c *Collection, v string) bool{
	davxml.Name("displayname"): func(c *Collection, v string) bool { c.DisplayName = v; return true },
	{Space: nsCal, Local: "calendar-description"}: func(c *Collection, v string) bool {
		c.Description = v
		return c.Kind == Calendars
	},
	{Space: nsCard, Local: "addressbook-description"}: func(c *Collection, v string) bool {
		c.Description = v
		return c.Kind == AddressBooks
	},
	calendarColor: func(c *Collection, v string) bool {
		if v != "" && !validColor(v) {
			return false
		}
		c.Color = v
		return c.Kind == Calendars
	},
	calendarOrder: func(c *Collection, v string) bool {
		if _, err := strconv.Atoi(v); v != "" && err != nil {
			return false
		}
		c.Order = v
		return c.Kind == Calendars
	},
}

// proppatchCollection renames, recolours, reorders or redescribes a
// calendar or address book: all the properties asked, or none.
func (h *Handler) proppatchCollection(w http.ResponseWriter, r *http.Request, t target) {
	patches, err := davxml.ReadProppatch(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c, err := h.Store.Collection(t.kind, t.user, t.coll)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	// Checked on a copy first: all or none.
	trial := *c
	for _, p := range patches {
		set, ok := described[p.Name]
		v := ""
		if !p.Remove {
			v = strings.TrimSpace(innerText(p.Inner))
		}
		switch {
		case !ok:
			h.failedPatch(w, t, patches, p.Name, http.StatusForbidden)
			return
		case !set(&trial, v):
			h.failedPatch(w, t, patches, p.Name, http.StatusConflict)
			return
		}
	}
	err = h.Store.Describe(t.kind, t.user, t.coll, func(c *Collection) {
		for _, p := range patches {
			v := ""
			if !p.Remove {
				v = strings.TrimSpace(innerText(p.Inner))
			}
			described[p.Name](c, v)
		}
	})
	if err != nil {
		h.Log.Error("calendars: cannot change a collection", "user", t.user, "collection", t.coll, "err", err)
		http.Error(w, "cannot change it", http.StatusInternalServerError)
		return
	}
	var all davxml.Props
	for _, p := range patches {
		all.Add(p.Name, "", "")
	}
	m := davxml.NewWriter(w)
	m.Response(t.collPath(), davxml.Propstat{Status: http.StatusOK, Props: &all})
	m.Close("")
}

// failedPatch answers a PROPPATCH that bad failed: its status for it,
// 424 for the others (RFC 4918 section 9.2).
func (h *Handler) failedPatch(w http.ResponseWriter, t target, patches []davxml.Patch, bad xml.Name, code int) {
	var failed, others davxml.Props
	failed.Add(bad, "", "")
	for _, p := range patches {
		if p.Name != bad {
			others.Add(p.Name, "", "")
		}
	}
	m := davxml.NewWriter(w)
	m.Response(t.collPath(), davxml.Propstat{Status: code, Props: &failed}, davxml.Propstat{Status: http.StatusFailedDependency, Props: &others})
	m.Close("")
}

// innerText is the text of a property's value (its XML unescaped).
func innerText(inner []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(append(append([]byte("<v>"), inner...), "</v>"...)))
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			return b.String()
		}
		if cd, ok := tok.(xml.CharData); ok {
			b.Write(cd)
		}
	}
}
