package files

// Listings of what the store does not hold as files: upload parts
// (chunked.go), the trash and the versions (trashbin.go). Each entry is a
// list of the properties it has; a PROPFIND gets those it asks for and the
// rest of its names as missing.

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/filetype"
)

// prop is one property of a listed entry, its value as XML.
type prop struct {
	name  xml.Name
	inner string
}

// entryProps are the DAV properties every listed entry has.
func entryProps(name string, dir bool, size int64, mtime time.Time, etag string) []prop {
	props := []prop{
		{davxml.Name("displayname"), davxml.Text(name)},
		{davxml.Name("getlastmodified"), mtime.UTC().Format(http.TimeFormat)},
		{davxml.Name("getetag"), davxml.Text(quote(etag))},
	}
	if dir {
		return append(props, prop{davxml.Name("resourcetype"), "<d:collection/>"})
	}
	return append(props, prop{davxml.Name("resourcetype"), ""},
		prop{davxml.Name("getcontentlength"), strconv.FormatInt(size, 10)},
		prop{davxml.Name("getcontenttype"), davxml.Text(filetype.Of(name))})
}

// listedEntry writes one response: with allprop or propname every property
// the entry has, and the names asked for (allprop's include, or prop) that
// it has or lacks.
func listedEntry(m *davxml.Writer, req davxml.Propfind, href string, props []prop) {
	var found, missing davxml.Props
	if req.AllProp || req.PropName {
		for _, p := range props {
			if req.PropName {
				found.Add(p.name, "", "")
			} else {
				found.Add(p.name, "", p.inner)
			}
		}
	}
	for _, n := range req.Names {
		i := slices.IndexFunc(props, func(p prop) bool { return p.name == n })
		switch {
		case i >= 0 && !req.AllProp:
			found.Add(n, "", props[i].inner)
		case i < 0:
			missing.Add(n, "", "")
		}
	}
	m.Response(href, davxml.Propstat{Status: http.StatusOK, Props: &found}, davxml.Propstat{Status: http.StatusNotFound, Props: &missing})
}

// withProp is props with n's value set to inner.
func withProp(props []prop, n xml.Name, inner string) []prop {
	for i := range props {
		if props[i].name == n {
			props[i].inner = inner
			return props
		}
	}
	return append(props, prop{n, inner})
}
