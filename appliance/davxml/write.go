// Package davxml is the WebDAV XML the box reads and writes (RFC 4918), for
// the files protocol (package files) and the calendars and contacts
// (package calendars) alike: multistatus answers written as they are
// walked, PROPFIND and PROPPATCH bodies parsed, and one escaping of text.
//
// Answers declare a fixed set of prefixes on their root (Prefixes), the
// ones a Nextcloud server uses: DAV: is d:, CalDAV's cal:, CardDAV's card:,
// Apple's calendarserver cs: and iCal x1:, and the ownCloud and Nextcloud
// namespaces oc: and nc:. They are part of the protocol in practice: the iOS apps'
// NextcloudKit reads answers by prefixed name ("d:response",
// "oc:fileid"), not by namespace. A value given as XML (Prop.Inner) may
// use them; a property in any other namespace declares its own.
package davxml

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// The namespaces the box answers in.
const (
	NS     = "DAV:"
	NSCal  = "urn:ietf:params:xml:ns:caldav"
	NSCard = "urn:ietf:params:xml:ns:carddav"
	NSCS   = "http://calendarserver.org/ns/"
	NSOC   = "http://owncloud.org/ns"
	NSNC   = "http://nextcloud.org/ns"
	NSICal = "http://apple.com/ns/ical/" // calendar-color, calendar-order
)

// Prefixes are the namespaces every answer declares on its root, and
// their prefixes.
var Prefixes = map[string]string{NS: "d", NSCal: "cal", NSCard: "card", NSCS: "cs", NSOC: "oc", NSNC: "nc", NSICal: "x1"}

// rootStart is the multistatus start tag, declaring Prefixes.
var rootStart = func() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<d:multistatus`)
	for _, ns := range []string{NS, NSCal, NSCard, NSCS, NSOC, NSNC, NSICal} {
		fmt.Fprintf(&b, ` xmlns:%s="%s"`, Prefixes[ns], ns)
	}
	b.WriteString(">")
	return b.String()
}()

// Name is the name local in DAV:.
func Name(local string) xml.Name { return xml.Name{Space: NS, Local: local} }

// Text escapes s for an element's content (quotes are left as they are:
// ETags stay readable). A character XML 1.0 cannot hold at all (most
// control characters) is dropped, and bytes that are not UTF-8 become
// U+FFFD: the answer stays well-formed.
func Text(s string) string {
	if !strings.ContainsAny(s, "&<>\r") && !strings.ContainsFunc(s, invalid) && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return escaper.Replace(strings.Map(func(r rune) rune {
		if invalid(r) {
			return -1
		}
		return r
	}, s))
}

// Attr escapes s for an attribute value in double quotes.
func Attr(s string) string { return strings.ReplaceAll(Text(s), `"`, "&#34;") }

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#xD;")

func invalid(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xfffe || r == 0xffff
}

// Href is a DAV:href element for the URL path p, escaped.
func Href(p string) string {
	return "<d:href>" + hrefText(p) + "</d:href>"
}

// hrefText is the URL path p escaped for an href: its common case, a path
// that needs no escaping at all, allocates nothing.
func hrefText(p string) string {
	for i := 0; i < len(p); i++ {
		if c := p[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/-._~", c) >= 0) {
			return Text((&url.URL{Path: p}).EscapedPath())
		}
	}
	return p
}

// Props collects one propstat's properties, written as they are added.
type Props struct{ b bytes.Buffer }

// Add writes the property n with a value given as XML (already escaped:
// Text, or elements in Prefixes' namespaces); "" writes it empty. lang is
// its xml:lang, if any.
func (p *Props) Add(n xml.Name, lang, inner string) {
	b := &p.b
	pre, ok := Prefixes[n.Space]
	b.WriteByte('<')
	if ok {
		b.WriteString(pre)
		b.WriteByte(':')
		b.WriteString(n.Local)
	} else {
		b.WriteString(n.Local)
		b.WriteString(` xmlns="`)
		b.WriteString(Attr(n.Space))
		b.WriteByte('"')
	}
	if lang != "" {
		b.WriteString(` xml:lang="`)
		b.WriteString(Attr(lang))
		b.WriteByte('"')
	}
	if inner == "" {
		b.WriteString("/>")
		return
	}
	b.WriteByte('>')
	b.WriteString(inner)
	b.WriteString("</")
	if ok {
		b.WriteString(pre)
		b.WriteByte(':')
	}
	b.WriteString(n.Local)
	b.WriteByte('>')
}

// Reset empties p for the next propstat, keeping its memory.
func (p *Props) Reset() { p.b.Reset() }

// Len is how many bytes the properties take: 0 if none was added.
func (p *Props) Len() int { return p.b.Len() }

// Propstat is properties with the status they share.
type Propstat struct {
	Status int
	Props  *Props
	// Error is a DAV:error element's content, as XML.
	Error string
}

// Writer writes a 207 Multistatus answer as it goes, through a buffer:
// Depth infinity over any tree takes the memory of one response.
type Writer struct {
	w *bufio.Writer
}

// NewWriter starts a multistatus answer on w.
func NewWriter(w http.ResponseWriter) *Writer {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	m := &Writer{w: bufio.NewWriterSize(w, 32<<10)}
	m.w.WriteString(rootStart)
	return m
}

// Response writes one resource's properties; a propstat with no properties
// is left out.
func (m *Writer) Response(href string, stats ...Propstat) {
	m.w.WriteString("<d:response><d:href>")
	m.w.WriteString(hrefText(href))
	m.w.WriteString("</d:href>")
	for _, s := range stats {
		if s.Props == nil || s.Props.Len() == 0 {
			continue
		}
		m.w.WriteString("<d:propstat><d:prop>")
		m.w.Write(s.Props.b.Bytes())
		m.w.WriteString("</d:prop>")
		m.w.WriteString(statusLine(s.Status))
		if s.Error != "" {
			m.w.WriteString("<d:error>")
			m.w.WriteString(s.Error)
			m.w.WriteString("</d:error>")
		}
		m.w.WriteString("</d:propstat>")
	}
	m.w.WriteString("</d:response>\n")
}

// Status writes a response that is a status alone (a member removed since a
// sync token, RFC 6578).
func (m *Writer) Status(href string, code int) {
	m.w.WriteString("<d:response>" + Href(href) + statusLine(code) + "</d:response>\n")
}

// Raw writes a response element made elsewhere (XML, in Prefixes'
// namespaces or declaring its own).
func (m *Writer) Raw(response string) { m.w.WriteString(response) }

// Close ends the answer, with a sync token if one is given.
func (m *Writer) Close(syncToken string) error {
	if syncToken != "" {
		m.w.WriteString("<d:sync-token>" + Text(syncToken) + "</d:sync-token>")
	}
	m.w.WriteString("</d:multistatus>\n")
	return m.w.Flush()
}

// The status lines nearly every response carries, made once.
var (
	status200 = "<d:status>HTTP/1.1 200 OK</d:status>"
	status404 = "<d:status>HTTP/1.1 404 Not Found</d:status>"
)

func statusLine(code int) string {
	switch code {
	case http.StatusOK:
		return status200
	case http.StatusNotFound:
		return status404
	}
	return fmt.Sprintf("<d:status>HTTP/1.1 %d %s</d:status>", code, http.StatusText(code))
}

// Precondition answers with code and an RFC 4918 DAV:error naming the
// precondition that failed (ns, name), and why.
func Precondition(w http.ResponseWriter, code int, ns, name, why string) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<d:error xmlns:d="DAV:" xmlns:X="`+Attr(ns)+`"><X:`+name+`/><d:responsedescription>`+Text(why)+`</d:responsedescription></d:error>`)
}
