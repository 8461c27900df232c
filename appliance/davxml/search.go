package davxml

// The bodies of DAV searches: RFC 5323's SEARCH with a basicsearch, as
// the Nextcloud apps send it for their photos, recent and favourites views,
// and ownCloud's oc:filter-files REPORT, as the iOS app and the desktop
// client send it for favourites.

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strconv"
	"strings"
)

// Element is an XML element read whole: its name, attributes, children
// and text.
type Element struct {
	Name     xml.Name
	Attr     []xml.Attr
	Children []*Element
	Text     string
}

// Child is the first child named name, or nil.
func (e *Element) Child(name xml.Name) *Element {
	if e == nil {
		return nil
	}
	for _, c := range e.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// maxElements bounds a body read whole.
const maxElements = 4096

// readTree reads body into its root element.
func readTree(body []byte) (*Element, error) {
	if err := checkNamespaces(body); err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	var stack []*Element
	var root *Element
	n := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if root != nil && len(stack) == 0 {
				return root, nil
			}
			return nil, errors.New("not well-formed XML")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if n++; n > maxElements || len(stack) > 64 {
				return nil, errors.New("too many XML elements")
			}
			e := &Element{Name: t.Name, Attr: t.Attr}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, e)
			} else if root == nil {
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(t)
			}
		}
	}
}

// Search is a basicsearch.
type Search struct {
	Select []xml.Name // the properties to answer with
	Scope  string     // the href searched under, as given ("/files/alice/Photos")
	Depth  int        // 0, 1, or -1 for infinity
	Where  *Cond      // nil: everything
	Order  []Order
	Limit  int // 0: no limit
}

// Cond is a condition of a search's where: an operator on a property and
// a literal (eq, lt, gt, lte, gte, like), one on a property alone
// (is-defined), is-collection, or a combination (and, or, not).
type Cond struct {
	Op      string
	Prop    xml.Name
	Literal string
	Sub     []*Cond
}

// Order is one key of a search's orderby.
type Order struct {
	Prop       xml.Name
	Descending bool
}

// ErrBadSearch is a SEARCH body that is not a basicsearch this box reads.
var ErrBadSearch = errors.New("invalid SEARCH body: a searchrequest with a basicsearch (RFC 5323)")

// ParseSearch reads a SEARCH body.
func ParseSearch(body []byte) (Search, error) {
	var s Search
	root, err := readTree(body)
	if err != nil || root.Name != Name("searchrequest") {
		return s, ErrBadSearch
	}
	bs := root.Child(Name("basicsearch"))
	if bs == nil {
		return s, ErrBadSearch
	}
	if sel := bs.Child(Name("select")); sel != nil {
		if p := sel.Child(Name("prop")); p != nil {
			for _, c := range p.Children {
				s.Select = append(s.Select, c.Name)
			}
		}
	}
	scope := bs.Child(Name("from")).Child(Name("scope"))
	if scope == nil || scope.Child(Name("href")) == nil {
		return s, ErrBadSearch
	}
	s.Scope = strings.TrimSpace(scope.Child(Name("href")).Text)
	s.Depth = -1
	if d := scope.Child(Name("depth")); d != nil {
		switch strings.TrimSpace(d.Text) {
		case "0":
			s.Depth = 0
		case "1":
			s.Depth = 1
		}
	}
	if w := bs.Child(Name("where")); w != nil && len(w.Children) > 0 {
		if len(w.Children) != 1 {
			return s, ErrBadSearch
		}
		if s.Where, err = readCond(w.Children[0]); err != nil {
			return s, err
		}
	}
	if ob := bs.Child(Name("orderby")); ob != nil {
		for _, o := range ob.Children {
			p := o.Child(Name("prop"))
			if o.Name != Name("order") || p == nil || len(p.Children) != 1 {
				return s, ErrBadSearch
			}
			s.Order = append(s.Order, Order{Prop: p.Children[0].Name, Descending: o.Child(Name("descending")) != nil})
		}
	}
	if l := bs.Child(Name("limit")).Child(Name("nresults")); l != nil {
		n, err := strconv.Atoi(strings.TrimSpace(l.Text))
		if err != nil || n < 0 {
			return s, ErrBadSearch
		}
		s.Limit = n
	}
	return s, nil
}

func readCond(e *Element) (*Cond, error) {
	if e.Name.Space != NS {
		return nil, ErrBadSearch
	}
	c := &Cond{Op: e.Name.Local}
	switch c.Op {
	case "and", "or", "not":
		for _, k := range e.Children {
			sub, err := readCond(k)
			if err != nil {
				return nil, err
			}
			c.Sub = append(c.Sub, sub)
		}
		if len(c.Sub) == 0 || c.Op == "not" && len(c.Sub) != 1 {
			return nil, ErrBadSearch
		}
	case "eq", "lt", "gt", "lte", "gte", "like", "is-defined":
		p := e.Child(Name("prop"))
		if p == nil || len(p.Children) != 1 {
			return nil, ErrBadSearch
		}
		c.Prop = p.Children[0].Name
		if c.Op != "is-defined" {
			lit := e.Child(Name("literal"))
			if lit == nil {
				return nil, ErrBadSearch
			}
			c.Literal = strings.TrimSpace(lit.Text)
		}
	case "is-collection":
	default:
		return nil, ErrBadSearch
	}
	return c, nil
}

// FilterFiles is an oc:filter-files REPORT: the properties to answer
// with, and the rules (oc:favorite 1; others are named, to be refused).
type FilterFiles struct {
	Props []xml.Name
	Rules map[xml.Name]string
}

// ErrBadFilterFiles is a REPORT body that is not an oc:filter-files.
var ErrBadFilterFiles = errors.New("invalid REPORT body: an oc:filter-files with filter-rules")

// ParseFilterFiles reads an oc:filter-files REPORT body.
func ParseFilterFiles(body []byte) (FilterFiles, error) {
	f := FilterFiles{Rules: map[xml.Name]string{}}
	root, err := readTree(body)
	if err != nil || root.Name != (xml.Name{Space: NSOC, Local: "filter-files"}) {
		return f, ErrBadFilterFiles
	}
	if p := root.Child(Name("prop")); p != nil {
		for _, c := range p.Children {
			f.Props = append(f.Props, c.Name)
		}
	}
	rules := root.Child(xml.Name{Space: NSOC, Local: "filter-rules"})
	if rules == nil {
		return f, ErrBadFilterFiles
	}
	for _, r := range rules.Children {
		f.Rules[r.Name] = strings.TrimSpace(r.Text)
	}
	return f, nil
}
