package web

// PROPFIND, answered here rather than by x/net/webdav: it is what sync
// clients send most, over folders of thousands of files, and on the board
// every system call and every reflected XML element counts. Each entry of a
// folder is described from the open folder (store.Tree.InfoIn: an fstatat
// and a getxattr, the file never opened), its dead properties are read only
// when the request may want them, and the answer is written as it is walked,
// straight to a buffered writer, so Depth infinity over any tree takes the
// memory of one folder's names.

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/webdav"

	"github.com/bonesync/bonesync/appliance/store"
)

// propRequest is a parsed PROPFIND body.
type propRequest struct {
	allprop, propname bool
	names             []xml.Name // prop, or allprop's include
	wantDead          bool       // dead properties may be asked for
}

var errBadPropfind = errors.New("invalid PROPFIND body")

// parsePropfind reads a PROPFIND body (RFC 4918 section 14.20); an empty
// body means allprop.
func parsePropfind(body []byte) (propRequest, error) {
	var req propRequest
	if len(bytes.TrimSpace(body)) == 0 {
		req.allprop, req.wantDead = true, true
		return req, nil
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	root, err := nextStart(dec)
	if err != nil || root.Name != (xml.Name{Space: "DAV:", Local: "propfind"}) {
		return req, errBadPropfind
	}
	var prop, include bool
	for {
		tok, err := nextToken(dec)
		if err != nil {
			return req, errBadPropfind
		}
		if _, ok := tok.(xml.EndElement); ok {
			break // the end of propfind
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name {
		case xml.Name{Space: "DAV:", Local: "allprop"}:
			req.allprop = true
			err = dec.Skip()
		case xml.Name{Space: "DAV:", Local: "propname"}:
			req.propname = true
			err = dec.Skip()
		case xml.Name{Space: "DAV:", Local: "prop"}:
			prop = true
			err = readPropNames(dec, &req.names)
		case xml.Name{Space: "DAV:", Local: "include"}:
			include = true
			err = readPropNames(dec, &req.names)
		default:
			err = dec.Skip() // an extension we do not know
		}
		if err != nil {
			return req, errBadPropfind
		}
	}
	n := 0
	for _, b := range []bool{req.allprop, req.propname, prop} {
		if b {
			n++
		}
	}
	if n != 1 || include && !req.allprop {
		return req, errBadPropfind
	}
	req.wantDead = req.allprop || req.propname
	for _, name := range req.names {
		// The ownCloud and Nextcloud namespaces are the server's: no dead
		// property there, so asking for one (oc:share-types...) reads none.
		if !liveProps[name] && name.Space != ocNS && name.Space != ncNS {
			req.wantDead = true
		}
	}
	return req, nil
}

// readPropNames reads a prop or include element's children: empty
// elements, each a property name.
func readPropNames(dec *xml.Decoder, names *[]xml.Name) error {
	count := 0
	for {
		tok, err := nextToken(dec)
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if count == 0 {
				return errBadPropfind
			}
			return nil
		case xml.StartElement:
			end, err := nextToken(dec)
			if err != nil {
				return err
			}
			if _, ok := end.(xml.EndElement); !ok {
				return errBadPropfind // a property name has no content
			}
			*names = append(*names, t.Name)
			count++
		}
	}
}

// nextToken is the next token that is not white space, a comment or a
// processing instruction.
func nextToken(dec *xml.Decoder) (xml.Token, error) {
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.Comment, xml.ProcInst, xml.Directive:
			continue
		case xml.CharData:
			if len(bytes.TrimSpace(t)) == 0 {
				continue
			}
		}
		return tok, nil
	}
}

func nextStart(dec *xml.Decoder) (xml.StartElement, error) {
	tok, err := nextToken(dec)
	if err != nil {
		return xml.StartElement{}, err
	}
	se, ok := tok.(xml.StartElement)
	if !ok {
		return se, errBadPropfind
	}
	return se, nil
}

func davName(local string) xml.Name { return xml.Name{Space: "DAV:", Local: local} }

// liveProps are the properties the store answers; any other name is a dead
// property, stored by PROPPATCH.
var liveProps = map[xml.Name]bool{
	davName("resourcetype"): true, davName("displayname"): true, davName("getcontentlength"): true,
	davName("getlastmodified"): true, davName("getcontenttype"): true, davName("getetag"): true,
	davName("supportedlock"): true, davName("lockdiscovery"): true, davName("creationdate"): true,
	davName("getcontentlanguage"): true, quotaUsed: true, quotaAvailable: true,
	ocFileID: true, ocID: true, ocPermissions: true, ocSize: true, ocChecksums: true,
	ocDownloadURL: true, ocDDC: true, ocShareTypes: true,
}

// allLive are the live properties allprop returns (RFC 4918 section 9.1;
// RFC 4331's quota properties are left out, as it says).
var allLive = []xml.Name{
	davName("resourcetype"), davName("displayname"), davName("getcontentlength"), davName("getlastmodified"),
	davName("getcontenttype"), davName("getetag"), davName("supportedlock"), davName("lockdiscovery"),
}

// propfind answers a PROPFIND on name.
func (d *DAV) propfind(w http.ResponseWriter, r *http.Request, tree *store.Tree, user, prefix, name string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	req, err := parsePropfind(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	depth := -1
	switch r.Header.Get("Depth") {
	case "0":
		depth = 0
	case "1":
		depth = 1
	case "", "infinity", "Infinity":
	default:
		http.Error(w, "Depth must be 0, 1 or infinity", http.StatusBadRequest)
		return
	}
	top, err := tree.Info(name)
	if err != nil {
		WriteStoreError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	pw := &propWriter{d: d, w: bufio.NewWriterSize(w, 32<<10), req: req, tree: tree, user: user, prefix: prefix}
	pw.w.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<D:multistatus xmlns:D="DAV:">`)
	clean := path.Clean("/" + name)
	pw.entry(clean, top, func() (map[xml.Name]webdav.Property, error) {
		f, err := tree.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return deadProps(fdXattr(f))
	})
	if top.IsDir() && depth != 0 {
		pw.folder(clean, depth)
	}
	pw.w.WriteString(`</D:multistatus>`)
	pw.w.Flush()
}

// propWriter writes a multistatus answer as it walks.
type propWriter struct {
	d            *DAV
	w            *bufio.Writer
	req          propRequest
	tree         *store.Tree
	user, prefix string
	quota        *[2]int64 // used, available; read once
}

// folder writes the entries of the folder p, and at depth infinity theirs.
func (pw *propWriter) folder(p string, depth int) {
	dir, err := pw.tree.OpenDir(p)
	if err != nil {
		return
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return
	}
	var sub []string
	for _, n := range names {
		if store.IsInternal(n) { // an upload's temporary file from before the staging folder
			continue
		}
		child := path.Join(p, n)
		in, ok, err := pw.tree.InfoIn(dir, n)
		if !ok {
			in, err = pw.tree.Info(child) // a symlink: followed, inside the tree
		}
		if err != nil {
			continue // gone since the listing, or a link that leads out
		}
		pw.entry(child, in, func() (map[xml.Name]webdav.Property, error) {
			if ok {
				return deadProps(func(attr string, buf []byte) (int, error) { return pw.tree.XattrIn(dir, n, attr, buf) })
			}
			f, err := pw.tree.Open(child)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return deadProps(fdXattr(f))
		})
		if in.IsDir() && depth < 0 {
			sub = append(sub, child)
		}
	}
	for _, s := range sub {
		pw.folder(s, depth)
	}
}

// entry writes one response.
func (pw *propWriter) entry(p string, in store.Info, dead func() (map[xml.Name]webdav.Property, error)) {
	var deadMap map[xml.Name]webdav.Property
	if pw.req.wantDead {
		m, err := dead()
		if err == nil {
			deadMap = m
		}
	}
	href := pw.prefix + p
	if in.IsDir() && !strings.HasSuffix(href, "/") {
		href += "/"
	}
	w := pw.w
	w.WriteString("<D:response><D:href>")
	w.WriteString(xmlText((&url.URL{Path: href}).EscapedPath()))
	w.WriteString("</D:href>")
	var found, missing bytes.Buffer
	switch {
	case pw.req.propname:
		found.WriteString(propNames(in, deadMap))
	case pw.req.allprop:
		for _, n := range allLive {
			pw.live(&found, nil, n, p, in)
		}
		for n, prop := range deadMap {
			writeProp(&found, n, prop.Lang, string(prop.InnerXML))
		}
		for _, n := range pw.req.names { // include
			if !containsName(allLive, n) {
				pw.one(&found, &missing, n, p, in, deadMap)
			}
		}
	default:
		for _, n := range pw.req.names {
			pw.one(&found, &missing, n, p, in, deadMap)
		}
	}
	if found.Len() > 0 {
		w.WriteString("<D:propstat><D:prop>")
		w.Write(found.Bytes())
		w.WriteString("</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>")
	}
	if missing.Len() > 0 {
		w.WriteString("<D:propstat><D:prop>")
		w.Write(missing.Bytes())
		w.WriteString("</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>")
	}
	w.WriteString("</D:response>\n")
}

// one writes the property n to found, or its name to missing.
func (pw *propWriter) one(found, missing *bytes.Buffer, n xml.Name, p string, in store.Info, dead map[xml.Name]webdav.Property) {
	if liveProps[n] {
		if pw.live(found, missing, n, p, in) {
			return
		}
	} else if prop, ok := dead[n]; ok {
		writeProp(found, n, prop.Lang, string(prop.InnerXML))
		return
	}
	writeProp(missing, n, "", "")
}

// live writes the live property n if the entry has it, and reports whether
// it did.
func (pw *propWriter) live(found, missing *bytes.Buffer, n xml.Name, p string, in store.Info) bool {
	dir := in.IsDir()
	put := func(v string) bool { writeProp(found, n, "", v); return true }
	switch n {
	case davName("resourcetype"):
		if dir {
			return put("<D:collection/>")
		}
		return put("")
	case davName("displayname"):
		if p == "/" {
			return put("")
		}
		return put(xmlText(path.Base(p)))
	case davName("getcontentlength"):
		if !dir {
			return put(fmt.Sprint(in.Size()))
		}
	case davName("getlastmodified"):
		return put(in.ModTime().UTC().Format(http.TimeFormat))
	case davName("getcontenttype"):
		if !dir {
			t := mime.TypeByExtension(path.Ext(p))
			if t == "" {
				t = "application/octet-stream"
			}
			return put(xmlText(t))
		}
	case davName("getetag"):
		return put(xmlText(quote(in.ETag)))
	case davName("supportedlock"):
		return put(string(supportedLock.InnerXML))
	case davName("lockdiscovery"):
		var b strings.Builder
		for _, l := range pw.d.locks().On(pw.user, p) {
			b.WriteString(activeLock(pw.prefix, l))
		}
		return put(b.String())
	case quotaUsed, quotaAvailable:
		if dir {
			q := pw.quotas()
			if q == nil {
				return false
			}
			if n == quotaUsed {
				return put(fmt.Sprint(q[0]))
			}
			return put(fmt.Sprint(q[1]))
		}
	case ocFileID:
		return put(fmt.Sprint(in.FileID))
	case ocID:
		return put(ocIDOf(in.FileID))
	case ocPermissions:
		// Read, delete, rename, move, write or add files and folders; no sharing.
		if dir {
			return put("RGDNVCK")
		}
		return put("RGDNVW")
	case ocSize:
		if !dir {
			return put(fmt.Sprint(in.Size()))
		}
	case ocChecksums:
		if !dir && in.Sums != nil {
			return put(`<checksum xmlns="` + ocNS + `">` + checksumsText(in.Sums) + "</checksum>")
		}
	case ocDownloadURL, ocDDC:
		return put("")
	}
	return false
}

// quotas are the user's used and available bytes, read once per request.
func (pw *propWriter) quotas() *[2]int64 {
	if pw.quota == nil {
		used, err1 := pw.tree.Usage()
		avail, err2 := pw.tree.Free()
		if err1 != nil || err2 != nil {
			return nil
		}
		if q := pw.tree.Quota(); q > 0 {
			avail = max(0, min(avail, q-used))
		}
		pw.quota = &[2]int64{used, avail}
	}
	return pw.quota
}

// writeProp writes <n>inner</n> in n's namespace.
func writeProp(b *bytes.Buffer, n xml.Name, lang, inner string) {
	open := "D:" + n.Local
	if n.Space != "DAV:" {
		open = n.Local + ` xmlns="` + xmlAttr(n.Space) + `"`
	}
	b.WriteString("<" + open)
	if lang != "" {
		b.WriteString(` xml:lang="` + xmlAttr(lang) + `"`)
	}
	if inner == "" {
		b.WriteString("/>")
		return
	}
	b.WriteString(">" + inner)
	if n.Space == "DAV:" {
		b.WriteString("</D:" + n.Local + ">")
	} else {
		b.WriteString("</" + n.Local + ">")
	}
}

func xmlAttr(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return strings.ReplaceAll(b.String(), `"`, "&#34;")
}

// propNames is the propname answer: every property the entry has, empty.
func propNames(in store.Info, dead map[xml.Name]webdav.Property) string {
	var b bytes.Buffer
	for _, n := range allLive {
		if in.IsDir() && (n == davName("getcontentlength") || n == davName("getcontenttype")) {
			continue
		}
		writeProp(&b, n, "", "")
	}
	for n := range dead {
		writeProp(&b, n, "", "")
	}
	return b.String()
}

func containsName(s []xml.Name, n xml.Name) bool {
	for _, x := range s {
		if x == n {
			return true
		}
	}
	return false
}

// checksumsText is oc:checksum's text: "SHA1:hex[ MD5:hex]".
func checksumsText(s *store.Sums) string {
	t := "SHA1:" + fmt.Sprintf("%x", s.SHA1)
	if s.HasMD5 {
		t += " MD5:" + fmt.Sprintf("%x", s.MD5)
	}
	return t
}
