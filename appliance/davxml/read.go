package davxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// MaxBody bounds a request's XML body.
const MaxBody = 1 << 20

// ReadBody reads an XML request body of at most MaxBody bytes.
func ReadBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read the body: %w", err)
	}
	if len(b) > MaxBody {
		return nil, fmt.Errorf("the body is larger than %d bytes", MaxBody)
	}
	return b, nil
}

// ReadPropfind reads and parses a PROPFIND body.
func ReadPropfind(r io.Reader) (Propfind, error) {
	body, err := ReadBody(r)
	if err != nil {
		return Propfind{}, err
	}
	return ParsePropfind(body)
}

// ReadProppatch reads and parses a PROPPATCH body.
func ReadProppatch(r io.Reader) ([]Patch, error) {
	body, err := ReadBody(r)
	if err != nil {
		return nil, err
	}
	return ParseProppatch(body)
}

// Propfind is a PROPFIND body (RFC 4918 section 14.20).
type Propfind struct {
	AllProp, PropName bool
	// Names are the properties asked for by prop, or allprop's include.
	Names []xml.Name
}

// ErrBadPropfind is a PROPFIND body that is not one.
var ErrBadPropfind = errors.New("invalid PROPFIND body")

// ParsePropfind reads a PROPFIND body; an empty body means allprop.
func ParsePropfind(body []byte) (Propfind, error) {
	var req Propfind
	if len(bytes.TrimSpace(body)) == 0 {
		req.AllProp = true
		return req, nil
	}
	dec, _, err := open(body, "propfind", ErrBadPropfind)
	if err != nil {
		return req, err
	}
	var prop, include bool
	for {
		tok, err := nextToken(dec)
		if err != nil {
			return req, ErrBadPropfind
		}
		if _, ok := tok.(xml.EndElement); ok {
			break // the end of propfind
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name {
		case Name("allprop"):
			req.AllProp = true
			err = dec.Skip()
		case Name("propname"):
			req.PropName = true
			err = dec.Skip()
		case Name("prop"):
			prop = true
			err = readNames(dec, &req.Names)
		case Name("include"):
			include = true
			err = readNames(dec, &req.Names)
		default:
			err = dec.Skip() // an extension we do not know
		}
		if err != nil {
			return req, ErrBadPropfind
		}
	}
	n := 0
	for _, b := range []bool{req.AllProp, req.PropName, prop} {
		if b {
			n++
		}
	}
	if n != 1 || include && !req.AllProp {
		return req, ErrBadPropfind
	}
	return req, nil
}

// readNames reads a prop or include element's children: empty elements,
// each a property name.
func readNames(dec *xml.Decoder, names *[]xml.Name) error {
	count := 0
	for {
		tok, err := nextToken(dec)
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if count == 0 {
				return ErrBadPropfind
			}
			return nil
		case xml.StartElement:
			end, err := nextToken(dec)
			if err != nil {
				return err
			}
			if _, ok := end.(xml.EndElement); !ok {
				return ErrBadPropfind // a property name has no content
			}
			*names = append(*names, t.Name)
			count++
		}
	}
}

// Patch is one property a PROPPATCH sets or removes.
type Patch struct {
	Remove bool
	Name   xml.Name
	Lang   string // xml:lang, of the property or the prop around it
	// Inner is the value, as XML that declares every namespace it uses
	// (RFC 4918 section 4.3): it can be stored and written anywhere.
	Inner []byte
}

// ErrBadProppatch is a PROPPATCH body that is not one.
var ErrBadProppatch = errors.New("invalid PROPPATCH body: a propertyupdate of set and remove, each with a prop of properties")

// ParseProppatch reads a PROPPATCH body (RFC 4918 section 14.19): the
// properties in document order, as they are to be applied.
func ParseProppatch(body []byte) ([]Patch, error) {
	dec, root, err := open(body, "propertyupdate", ErrBadProppatch)
	if err != nil {
		return nil, err
	}
	var out []Patch
	for {
		tok, err := nextToken(dec)
		if err != nil {
			return nil, ErrBadProppatch
		}
		if _, ok := tok.(xml.EndElement); ok {
			if len(out) == 0 {
				return nil, ErrBadProppatch // nothing to set or remove
			}
			return out, nil
		}
		op, ok := tok.(xml.StartElement)
		if !ok || op.Name != Name("set") && op.Name != Name("remove") {
			return nil, ErrBadProppatch
		}
		patches, err := readPatchOp(dec, op, langOf(root, ""))
		if err != nil {
			return nil, err
		}
		out = append(out, patches...)
	}
}

// readPatchOp reads a set or remove element: one prop of properties.
func readPatchOp(dec *xml.Decoder, op xml.StartElement, lang string) ([]Patch, error) {
	remove := op.Name == Name("remove")
	var out []Patch
	for {
		tok, err := nextToken(dec)
		if err != nil {
			return nil, ErrBadProppatch
		}
		if _, ok := tok.(xml.EndElement); ok {
			if len(out) == 0 {
				return nil, ErrBadProppatch
			}
			return out, nil
		}
		prop, ok := tok.(xml.StartElement)
		if !ok || prop.Name != Name("prop") {
			return nil, ErrBadProppatch
		}
		lang := langOf(prop, langOf(op, lang))
		for {
			tok, err := nextToken(dec)
			if err != nil {
				return nil, ErrBadProppatch
			}
			if _, ok := tok.(xml.EndElement); ok {
				break
			}
			se, ok := tok.(xml.StartElement)
			if !ok {
				return nil, ErrBadProppatch
			}
			inner, err := innerXML(dec)
			if err != nil || remove && len(bytes.TrimSpace(inner)) > 0 {
				return nil, ErrBadProppatch
			}
			out = append(out, Patch{Remove: remove, Name: se.Name, Lang: langOf(se, lang), Inner: inner})
		}
	}
}

// innerXML reads up to the end of the start element just read and returns
// what it held as self-contained XML: every element names its namespace
// itself (xmlns="..."), and a namespaced attribute declares its prefix on
// its element, so that the value means the same wherever it is written
// later, whatever the request declared around it.
func innerXML(dec *xml.Decoder) ([]byte, error) {
	var b bytes.Buffer
	defaults := []string{"\x00"} // the default namespace in scope: none yet, so the first element declares its own
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			b.WriteString("<" + t.Name.Local)
			if t.Name.Space != defaults[len(defaults)-1] {
				b.WriteString(` xmlns="` + Attr(t.Name.Space) + `"`)
			}
			defaults = append(defaults, t.Name.Space)
			writeAttrs(&b, t.Attr)
			b.WriteString(">")
		case xml.EndElement:
			if len(defaults) == 1 {
				return b.Bytes(), nil // the property's own end
			}
			defaults = defaults[:len(defaults)-1]
			b.WriteString("</" + t.Name.Local + ">")
		case xml.CharData:
			b.WriteString(Text(string(t)))
		}
	}
}

// writeAttrs writes an element's attributes but its namespace
// declarations (innerXML makes its own): xml:lang as it is, one in a
// namespace with a prefix declared beside it.
func writeAttrs(b *bytes.Buffer, attrs []xml.Attr) {
	n := 0
	for _, a := range attrs {
		switch {
		case a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns":
		case a.Name.Space == "":
			b.WriteString(" " + a.Name.Local + `="` + Attr(a.Value) + `"`)
		case a.Name.Space == "xml" || a.Name.Space == xmlNS:
			b.WriteString(" xml:" + a.Name.Local + `="` + Attr(a.Value) + `"`)
		default:
			n++
			fmt.Fprintf(b, ` xmlns:a%d="%s" a%d:%s="%s"`, n, Attr(a.Name.Space), n, a.Name.Local, Attr(a.Value))
		}
	}
}

const xmlNS = "http://www.w3.org/XML/1998/namespace"

func langOf(se xml.StartElement, def string) string {
	for _, a := range se.Attr {
		if (a.Name.Space == "xml" || a.Name.Space == xmlNS) && a.Name.Local == "lang" {
			return a.Value
		}
	}
	return def
}

// open checks body's namespace declarations and reads its root element,
// which must be DAV:name (else bad).
func open(body []byte, name string, bad error) (*xml.Decoder, xml.StartElement, error) {
	if err := checkNamespaces(body); err != nil {
		return nil, xml.StartElement{}, err
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	root, err := nextStart(dec)
	if err != nil || root.Name != Name(name) {
		return nil, root, bad
	}
	return dec, root, nil
}

// Lockinfo is a LOCK body (RFC 4918 section 14.11): a write lock,
// exclusive or shared, and who holds it.
type Lockinfo struct {
	Shared bool
	// Owner is the owner element's content, as XML that declares every
	// namespace it uses (like Patch.Inner): it is echoed in every
	// lockdiscovery.
	Owner []byte
}

// ErrBadLockinfo is a LOCK body that is not one.
var ErrBadLockinfo = errors.New("LOCK wants a lockinfo with an exclusive or shared write lock")

// ParseLockinfo reads a LOCK body that asks for a new lock.
func ParseLockinfo(body []byte) (Lockinfo, error) {
	var li Lockinfo
	dec, _, err := open(body, "lockinfo", ErrBadLockinfo)
	if err != nil {
		return li, err
	}
	scopes, write := 0, false
	for {
		tok, err := nextToken(dec)
		if err != nil {
			return li, ErrBadLockinfo
		}
		if _, ok := tok.(xml.EndElement); ok {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name {
		case Name("lockscope"):
			var scope []xml.Name
			err = readNames(dec, &scope)
			for _, n := range scope {
				li.Shared = n == Name("shared")
				if n == Name("shared") || n == Name("exclusive") {
					scopes++
				}
			}
		case Name("locktype"):
			var kind []xml.Name
			err = readNames(dec, &kind)
			write = len(kind) == 1 && kind[0] == Name("write")
		case Name("owner"):
			li.Owner, err = innerXML(dec)
		default:
			err = dec.Skip()
		}
		if err != nil {
			return li, ErrBadLockinfo
		}
	}
	if scopes != 1 || !write {
		return li, ErrBadLockinfo
	}
	return li, nil
}

// RootIs says whether an XML body's root element is space:local.
func RootIs(body []byte, space, local string) bool {
	se, err := nextStart(xml.NewDecoder(bytes.NewReader(body)))
	return err == nil && se.Name == xml.Name{Space: space, Local: local}
}

// checkNamespaces refuses an XML body that declares a namespace prefix
// as empty (xmlns:p=""), which the XML Namespaces spec forbids and Go's
// encoding/xml lets through.
func checkNamespaces(body []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.RawToken()
		if err != nil {
			return nil // the end, or malformed: the parser says which
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Space == "xmlns" && a.Value == "" {
					return fmt.Errorf("namespace prefix %q declared empty", a.Name.Local)
				}
			}
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
		return se, ErrBadPropfind
	}
	return se, nil
}
