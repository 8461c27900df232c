package calendars

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/front"
)

type emails map[string]string

func (e emails) Email(user string) string { return e[user] }

func TestRenameAndRecolour(t *testing.T) {
	srv, _ := server(t)
	bob := client{t, srv, "bob"}
	// MKCALENDAR keeps the colour and the order it is given.
	mk := `<cal:mkcalendar xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:x1="http://apple.com/ns/ical/"><d:set><d:prop>
<d:displayname>Work</d:displayname><x1:calendar-color>#FF8800FF</x1:calendar-color><x1:calendar-order>3</x1:calendar-order></d:prop></d:set></cal:mkcalendar>`
	if code, body, _ := bob.do("MKCALENDAR", "/remote.php/dav/calendars/bob/work/", mk); code != 201 {
		t.Fatalf("MKCALENDAR = %d %s", code, body)
	}
	ask := `<d:propfind xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:x1="http://apple.com/ns/ical/"><d:prop><d:displayname/><x1:calendar-color/><x1:calendar-order/><cal:calendar-description/></d:prop></d:propfind>`
	_, body, _ := bob.do("PROPFIND", "/remote.php/dav/calendars/bob/work/", ask, "Depth", "0")
	for _, want := range []string{"<d:displayname>Work</d:displayname>", "<x1:calendar-color>#FF8800FF</x1:calendar-color>", "<x1:calendar-order>3</x1:calendar-order>"} {
		if !strings.Contains(body, want) {
			t.Errorf("after MKCALENDAR, lacks %s:\n%s", want, body)
		}
	}
	// Renamed, recoloured and described, as DAVx5 and Thunderbird do it.
	patch := `<d:propertyupdate xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:x1="http://apple.com/ns/ical/"><d:set><d:prop>
<d:displayname>Work &amp; travel</d:displayname><x1:calendar-color>#2255AA</x1:calendar-color><cal:calendar-description>Trips</cal:calendar-description></d:prop></d:set></d:propertyupdate>`
	if code, body, _ := bob.do("PROPPATCH", "/remote.php/dav/calendars/bob/work/", patch); code != 207 || !strings.Contains(body, "200 OK") {
		t.Fatalf("PROPPATCH = %d %s", code, body)
	}
	_, body, _ = bob.do("PROPFIND", "/remote.php/dav/calendars/bob/work/", ask, "Depth", "0")
	for _, want := range []string{"<d:displayname>Work &amp; travel</d:displayname>", "<x1:calendar-color>#2255AA</x1:calendar-color>", "<cal:calendar-description>Trips</cal:calendar-description>"} {
		if !strings.Contains(body, want) {
			t.Errorf("after PROPPATCH, lacks %s:\n%s", want, body)
		}
	}
	// A bad colour fails it all; a property that is not a collection's
	// is refused.
	bad := strings.Replace(patch, "#2255AA", "red", 1)
	if _, body, _ := bob.do("PROPPATCH", "/remote.php/dav/calendars/bob/work/", bad); !strings.Contains(body, "409 Conflict") || !strings.Contains(body, "424 Failed Dependency") {
		t.Errorf("a bad colour: %s", body)
	}
	if _, body, _ := bob.do("PROPPATCH", "/remote.php/dav/calendars/bob/work/", `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:getetag>x</d:getetag></d:prop></d:set></d:propertyupdate>`); !strings.Contains(body, "403 Forbidden") {
		t.Errorf("getetag: %s", body)
	}
	if _, body, _ = bob.do("PROPFIND", "/remote.php/dav/calendars/bob/work/", ask, "Depth", "0"); !strings.Contains(body, "Work &amp; travel") {
		t.Errorf("a failed PROPPATCH changed it:\n%s", body)
	}
	// An address book's name.
	bob.do("PROPFIND", "/remote.php/dav/addressbooks/users/bob/", "", "Depth", "1") // makes the default one
	abPatch := `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>Family</d:displayname></d:prop></d:set></d:propertyupdate>`
	if code, body, _ := bob.do("PROPPATCH", "/remote.php/dav/addressbooks/users/bob/contacts/", abPatch); code != 207 || !strings.Contains(body, "200 OK") {
		t.Errorf("address book PROPPATCH = %d %s", code, body)
	}
}

// A client given only the host finds its principal there, and the
// principal names the user's e-mail address, if one is set, and no
// invented one.
func TestPrincipalAtTheRoot(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{Store: s, Log: slog.New(slog.DiscardHandler), Emails: emails{"bob": "bob@example.org"}}
	mux := front.NewRoutes(testDoor{})
	h.Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ask := `<d:propfind xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav"><d:prop><d:current-user-principal/><cal:calendar-user-address-set/></d:prop></d:propfind>`
	code, body, _ := client{t, srv, "bob"}.do("PROPFIND", "/", ask, "Depth", "0")
	if code != 207 || !strings.Contains(body, "<d:current-user-principal><d:href>/remote.php/dav/principals/users/bob/</d:href>") ||
		!strings.Contains(body, "<d:href>mailto:bob@example.org</d:href>") {
		t.Errorf("PROPFIND / = %d %s", code, body)
	}
	_, body, _ = client{t, srv, "ann"}.do("PROPFIND", "/remote.php/dav/principals/users/ann/", ask, "Depth", "0")
	if strings.Contains(body, "mailto:") {
		t.Errorf("an address for a user who gave none: %s", body)
	}
}
