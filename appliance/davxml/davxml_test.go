package davxml

import (
	"encoding/xml"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:          `plain`,
		`"etag"`:         `"etag"`,
		"a&b<c>d\r":      "a&amp;b&lt;c&gt;d&#xD;",
		"bell\x07 tab\t": "bell tab\t",
		"\ufffe":         "",
		"bad\xffname":    "bad\ufffdname",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Attr(`say "x" & go`); got != `say &#34;x&#34; &amp; go` {
		t.Errorf("Attr = %q", got)
	}
}

// TestMultistatusParses: an answer with every kind of property is XML
// that a parser reads back with the names and values written.
func TestMultistatusParses(t *testing.T) {
	rec := httptest.NewRecorder()
	m := NewWriter(rec)
	var found, missing Props
	found.Add(Name("getetag"), "", Text(`"abc"`))
	found.Add(xml.Name{Space: NSOC, Local: "fileid"}, "", "42")
	found.Add(xml.Name{Space: "urn:x", Local: "dead"}, "en", "<v xmlns=\"urn:y\">1 &amp; 2</v>")
	found.Add(xml.Name{Space: "", Local: "nons"}, "", "v")
	missing.Add(xml.Name{Space: NSCal, Local: "calendar-data"}, "", "")
	m.Response("/dav/a b/ü.txt", Propstat{Status: 200, Props: &found}, Propstat{Status: 404, Props: &missing}, Propstat{Status: 403, Props: &Props{}})
	m.Status("/dav/gone", 404)
	if err := m.Close("tok&1"); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 207 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/xml") {
		t.Errorf("answer %d %q, want 207 application/xml", rec.Code, rec.Header().Get("Content-Type"))
	}
	var ms struct {
		Responses []struct {
			Href      string `xml:"DAV: href"`
			Status    string `xml:"DAV: status"`
			Propstats []struct {
				Status string `xml:"DAV: status"`
				Prop   struct {
					Any []struct {
						XMLName xml.Name
						Lang    string `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
						Inner   string `xml:",innerxml"`
					} `xml:",any"`
				} `xml:"DAV: prop"`
			} `xml:"DAV: propstat"`
		} `xml:"DAV: response"`
		Token string `xml:"DAV: sync-token"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &ms); err != nil {
		t.Fatalf("the answer is not XML: %v\n%s", err, rec.Body)
	}
	if len(ms.Responses) != 2 || ms.Token != "tok&1" {
		t.Fatalf("answer = %+v", ms)
	}
	r := ms.Responses[0]
	if r.Href != "/dav/a%20b/%C3%BC.txt" || len(r.Propstats) != 2 || r.Propstats[0].Status != "HTTP/1.1 200 OK" || r.Propstats[1].Status != "HTTP/1.1 404 Not Found" {
		t.Fatalf("first response = %+v", r)
	}
	got := map[xml.Name]string{}
	for _, p := range r.Propstats[0].Prop.Any {
		got[p.XMLName] = p.Inner
	}
	if got[Name("getetag")] != `"abc"` || got[xml.Name{Space: NSOC, Local: "fileid"}] != "42" || got[xml.Name{Local: "nons"}] != "v" {
		t.Errorf("properties read back = %q", got)
	}
	if p := r.Propstats[0].Prop.Any[2]; p.XMLName.Space != "urn:x" || p.Lang != "en" {
		t.Errorf("dead property read back = %+v", p)
	}
	if ms.Responses[1].Status != "HTTP/1.1 404 Not Found" {
		t.Errorf("status-only response = %+v", ms.Responses[1])
	}
}

func TestParsePropfind(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
		want Propfind
	}{
		{"", true, Propfind{AllProp: true}},
		{`<propfind xmlns="DAV:"><allprop/></propfind>`, true, Propfind{AllProp: true}},
		{`<propfind xmlns="DAV:"><propname/></propfind>`, true, Propfind{PropName: true}},
		{`<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><x:a xmlns:x="urn:x"/></d:prop></d:propfind>`, true,
			Propfind{Names: []xml.Name{Name("getetag"), {Space: "urn:x", Local: "a"}}}},
		{`<propfind xmlns="DAV:"><allprop/><include><getetag/></include></propfind>`, true, Propfind{AllProp: true, Names: []xml.Name{Name("getetag")}}},
		{`<propfind xmlns="DAV:"><prop/></propfind>`, false, Propfind{}},
		{`<propfind xmlns="DAV:"><allprop/><propname/></propfind>`, false, Propfind{}},
		{`<propfind xmlns="DAV:"><include><getetag/></include></propfind>`, false, Propfind{}},
		{`<propfind xmlns="DAV:"><prop><getetag>x</getetag></prop></propfind>`, false, Propfind{}},
		{`<propfind xmlns="DAV:" xmlns:e=""><prop><getetag/></prop></propfind>`, false, Propfind{}},
		{`<nonsense/>`, false, Propfind{}},
		{`<propfind xmlns="DAV:"><prop>`, false, Propfind{}},
	} {
		got, err := ParsePropfind([]byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("ParsePropfind(%s): error %v, want ok=%v", tc.body, err, tc.ok)
			continue
		}
		if tc.ok && (got.AllProp != tc.want.AllProp || got.PropName != tc.want.PropName || len(got.Names) != len(tc.want.Names)) {
			t.Errorf("ParsePropfind(%s) = %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

// TestParseProppatch: values come out self-contained, whatever the
// request declared around them, in document order.
func TestParseProppatch(t *testing.T) {
	body := `<?xml version="1.0"?>
<d:propertyupdate xmlns:d="DAV:" xmlns:Z="http://ns.example/" xml:lang="de">
  <d:set><d:prop>
    <Z:author><Z:name a="1" Z:b="2">Jo &amp; Co</Z:name></Z:author>
    <Z:empty/>
    <plain xmlns="">text</plain>
  </d:prop></d:set>
  <d:remove><d:prop><Z:old/></d:prop></d:remove>
</d:propertyupdate>`
	ps, err := ParseProppatch([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 || ps[0].Name != (xml.Name{Space: "http://ns.example/", Local: "author"}) || !ps[3].Remove || ps[0].Lang != "de" {
		t.Fatalf("patches = %+v", ps)
	}
	want := `<name xmlns="http://ns.example/" a="1" xmlns:a1="http://ns.example/" a1:b="2">Jo &amp; Co</name>`
	if string(ps[0].Inner) != want {
		t.Errorf("value = %s\nwant    %s", ps[0].Inner, want)
	}
	if len(ps[1].Inner) != 0 || string(ps[2].Inner) != "text" {
		t.Errorf("empty and text values = %q, %q", ps[1].Inner, ps[2].Inner)
	}
	// Written inside any other element, the value parses as the same.
	wrapped := `<v xmlns="urn:other">` + string(ps[0].Inner) + `</v>`
	var v struct {
		Name struct {
			XMLName xml.Name
			B       string `xml:"http://ns.example/ b,attr"`
		} `xml:"http://ns.example/ name"`
	}
	if err := xml.Unmarshal([]byte(wrapped), &v); err != nil || v.Name.B != "2" {
		t.Errorf("the value in another element reads %+v, %v", v, err)
	}
	for _, bad := range []string{
		`<propertyupdate xmlns="DAV:"><set><prop/></set></propertyupdate>`,
		`<propertyupdate xmlns="DAV:"/>`,
		`<propertyupdate xmlns="DAV:"><set></set></propertyupdate>`,
		`<propertyupdate xmlns="DAV:"><remove><prop><x xmlns="urn:x">value</x></prop></remove></propertyupdate>`,
		`<propertyupdate xmlns="DAV:"><change><prop><x/></prop></change></propertyupdate>`,
		`<propfind xmlns="DAV:"/>`,
		`<propertyupdate xmlns="DAV:"><set><prop><x xmlns="urn:x">`,
	} {
		if _, err := ParseProppatch([]byte(bad)); err == nil {
			t.Errorf("ParseProppatch(%s) accepted it", bad)
		}
	}
}

func TestRootIs(t *testing.T) {
	if !RootIs([]byte(`<?xml version="1.0"?><!-- x --><d:sync-collection xmlns:d="DAV:"/>`), NS, "sync-collection") {
		t.Error("RootIs missed a sync-collection")
	}
	if RootIs([]byte(`<cal:calendar-query xmlns:cal="urn:ietf:params:xml:ns:caldav"/>`), NS, "sync-collection") {
		t.Error("RootIs took a calendar-query for a sync-collection")
	}
}

// An href skips the URL escaper when nothing needs escaping; with or
// without the shortcut it is the same text.
func TestHrefShortcut(t *testing.T) {
	for _, p := range []string{"/", "/dav/files/a/b.txt", "/a b", "/ü.txt", "/a&b", "/a%2Fb", "/a:b@c", "/x?y#z", "/~a-b_c.d", "/a\x01b", "/a<b>"} {
		want := Text((&url.URL{Path: p}).EscapedPath())
		if got := hrefText(p); got != want {
			t.Errorf("hrefText(%q) = %q, want %q", p, got, want)
		}
	}
}
